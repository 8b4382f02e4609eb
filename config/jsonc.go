package config

import (
	"bytes"
	"encoding/json"
	"errors"
)

// stripJSONC turns JSON with comments (// and /* */) and trailing commas,
// as VS Code's files allow, into JSON with the same line breaks, so that
// offsets still give the right line.
func stripJSONC(data []byte) []byte {
	out := make([]byte, 0, len(data))
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(data) && data[j] != '"' {
				if data[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(data) {
				j = len(data) - 1
			}
			out = append(out, data[i:j+1]...)
			i = j
		case c == '/' && i+1 < len(data) && data[i+1] == '/':
			for i < len(data) && data[i] != '\n' {
				out = append(out, ' ')
				i++
			}
			if i < len(data) {
				out = append(out, '\n')
			}
		case c == '/' && i+1 < len(data) && data[i+1] == '*':
			end := bytes.Index(data[i+2:], []byte("*/"))
			stop := len(data)
			if end >= 0 {
				stop = i + 2 + end + 2
			}
			for ; i < stop; i++ {
				if data[i] == '\n' {
					out = append(out, '\n')
				} else {
					out = append(out, ' ')
				}
			}
			i--
		case c == ',':
			// A comma followed (past blanks) by } or ] is dropped.
			j := i + 1
			for j < len(data) && (data[j] == ' ' || data[j] == '\t' || data[j] == '\n' || data[j] == '\r') {
				j++
			}
			if j < len(data) && (data[j] == '}' || data[j] == ']') {
				out = append(out, ' ')
				continue
			}
			out = append(out, c)
		default:
			out = append(out, c)
		}
	}
	return out
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
