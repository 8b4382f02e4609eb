package config

import (
	"strconv"
	"strings"
)

// The toml library reports no position for a key that decoded fine, so the
// line of a key (for unknown-key, wrong-type and validation errors) is found
// by scanning the text: table headers set the current table, and each
// "key = value" line defines the table's key. The text has already parsed,
// so this only has to be right for valid TOML.

// keyLines maps each key path defined in text, and each of its prefixes, to
// the 1-based line that first mentions it. Paths are joined by lineSep.
func keyLines(text string) map[string]int {
	lines := map[string]int{}
	note := func(path []string, n int) {
		for i := 1; i <= len(path); i++ {
			k := strings.Join(path[:i], lineSep)
			if _, ok := lines[k]; !ok {
				lines[k] = n
			}
		}
	}
	var table []string
	inString := "" // closing delimiter of an open multi-line string
	for i, ln := range strings.Split(text, "\n") {
		n := i + 1
		if inString != "" {
			if strings.Contains(ln, inString) {
				inString = ""
			}
			continue
		}
		s := strings.TrimSpace(ln)
		if s == "" || s[0] == '#' {
			continue
		}
		if s[0] == '[' {
			s = strings.TrimLeft(s[1:], "[")
			if parts, _, ok := parseKey(s); ok {
				table = parts
				note(table, n)
			}
			continue
		}
		parts, rest, ok := parseKey(s)
		if !ok || !strings.HasPrefix(strings.TrimSpace(rest), "=") {
			continue
		}
		note(append(append([]string(nil), table...), parts...), n)
		value := strings.TrimSpace(strings.TrimSpace(rest)[1:])
		for _, d := range []string{`"""`, `'''`} {
			if strings.HasPrefix(value, d) && !strings.Contains(value[3:], d) {
				inString = d
			}
		}
	}
	return lines
}

// lineSep joins key parts in keyLines; it cannot occur in a parsed key
// that came from a single line.
const lineSep = "\n"

// lookupLine returns the line of key, or of its longest prefix found (for
// keys inside inline tables); 0 when none is found.
func lookupLine(lines map[string]int, key []string) int {
	for i := len(key); i > 0; i-- {
		if n, ok := lines[strings.Join(key[:i], lineSep)]; ok {
			return n
		}
	}
	return 0
}

// parseKey parses a dotted TOML key (bare, "basic" or 'literal' parts) at
// the start of s, returning its parts and the rest of s.
func parseKey(s string) (parts []string, rest string, ok bool) {
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return nil, "", false
		}
		var part string
		switch s[0] {
		case '"':
			end := 1
			for end < len(s) && s[end] != '"' {
				if s[end] == '\\' {
					end++
				}
				end++
			}
			if end >= len(s) {
				return nil, "", false
			}
			u, err := strconv.Unquote(s[:end+1])
			if err != nil {
				u = s[1:end]
			}
			part, s = u, s[end+1:]
		case '\'':
			end := strings.IndexByte(s[1:], '\'')
			if end < 0 {
				return nil, "", false
			}
			part, s = s[1:end+1], s[end+2:]
		default:
			end := 0
			for end < len(s) && isBare(s[end]) {
				end++
			}
			if end == 0 {
				return nil, "", false
			}
			part, s = s[:end], s[end:]
		}
		parts = append(parts, part)
		s = strings.TrimLeft(s, " \t")
		if !strings.HasPrefix(s, ".") {
			return parts, s, true
		}
		s = s[1:]
	}
}

func isBare(b byte) bool {
	return b == '_' || b == '-' || ('a' <= b && b <= 'z') || ('A' <= b && b <= 'Z') || ('0' <= b && b <= '9')
}
