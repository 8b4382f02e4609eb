package config

import (
	"bytes"
	"encoding/json"
	"errors"
)

// stripJSONC turns JSON with comments (// and /* */) and trailing commas,
// as VS Code's files allow, into JSON with the same line breaks, so that
// offsets still give the right line: comments become blanks (their line
// breaks kept), a trailing comma a blank; strings are copied as they are.
func stripJSONC(data []byte) []byte {
	out := make([]byte, 0, len(data))
	for i := 0; i < len(data); {
		rest := data[i:]
		n := 1
		switch {
		case rest[0] == '"':
			n = stringLen(rest)
			out = append(out, rest[:n]...)
		case bytes.HasPrefix(rest, []byte("//")):
			n = lineCommentLen(rest)
			out = blankOut(out, rest[:n])
		case bytes.HasPrefix(rest, []byte("/*")):
			n = blockCommentLen(rest)
			out = blankOut(out, rest[:n])
		case rest[0] == ',' && closesNext(rest[1:]):
			out = append(out, ' ')
		default:
			out = append(out, rest[0])
		}
		i += n
	}
	return out
}

// stringLen is the length of the JSON string s starts with, its quotes
// included; an unterminated string runs to the end.
func stringLen(s []byte) int {
	j := 1
	for j < len(s) && s[j] != '"' {
		if s[j] == '\\' {
			j++
		}
		j++
	}
	return min(j, len(s)-1) + 1
}

// lineCommentLen is the length of the // comment s starts with, its line
// break included.
func lineCommentLen(s []byte) int {
	if i := bytes.IndexByte(s, '\n'); i >= 0 {
		return i + 1
	}
	return len(s)
}

// blockCommentLen is the length of the /* */ comment s starts with; an
// unterminated comment runs to the end.
func blockCommentLen(s []byte) int {
	if end := bytes.Index(s[2:], []byte("*/")); end >= 0 {
		return 2 + end + 2
	}
	return len(s)
}

// blankOut appends comment to out as blanks, keeping its line breaks.
func blankOut(out, comment []byte) []byte {
	for _, c := range comment {
		if c != '\n' {
			c = ' '
		}
		out = append(out, c)
	}
	return out
}

// closesNext reports whether s, past blanks, closes an object or array:
// the comma before it is a trailing one.
func closesNext(s []byte) bool {
	s = bytes.TrimLeft(s, " \t\n\r")
	return len(s) > 0 && (s[0] == '}' || s[0] == ']')
}

// memberLines returns the line of each member of the object found at path
// (a chain of object keys from the top) in the JSON data, by name.
func memberLines(data []byte, path ...string) map[string]int {
	lines := map[string]int{}
	dec := json.NewDecoder(bytes.NewReader(data))
	lineAt := func(off int64) int { return 1 + bytes.Count(data[:min(int(off), len(data))], []byte("\n")) }
	var walk func(depth int) bool
	// walk reads one value; when it is the object at path[depth:], it
	// notes its members' lines (depth == len(path)) or descends.
	walk = func(depth int) bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		d, ok := tok.(json.Delim)
		if !ok {
			return true
		}
		if d == '[' {
			for dec.More() {
				if !walk(len(path) + 1) {
					return false
				}
			}
			_, err := dec.Token()
			return err == nil
		}
		if d != '{' {
			return true
		}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return false
			}
			k, _ := kt.(string)
			next := len(path) + 1 // not on the path: skip
			if depth < len(path) && k == path[depth] {
				next = depth + 1
			}
			if depth == len(path) {
				lines[k] = lineAt(dec.InputOffset())
			}
			if !walk(next) {
				return false
			}
		}
		_, err = dec.Token()
		return err == nil
	}
	walk(0)
	return lines
}

// jsonErrLine is the line of a JSON decoding error in data, 0 when unknown.
func jsonErrLine(data []byte, err error) int {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	off := int64(-1)
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 {
		return 0
	}
	return 1 + bytes.Count(data[:min(int(off), len(data))], []byte("\n"))
}
