package completion

import "strings"

// Trim shapes a model's answer for the cursor: cut to its first line
// unless multiline, with what repeats the text after the cursor (the
// rest of the line, or the lines that follow) cut off its end, and
// trailing blank space dropped. "" means no suggestion.
func Trim(answer, suffix string, multiline bool) string {
	answer = strings.TrimRight(answer, " \t\r\n")
	if !multiline {
		if i := strings.IndexByte(answer, '\n'); i >= 0 {
			answer = strings.TrimRight(answer[:i], " \t\r")
		}
	}
	rest, _, _ := strings.Cut(suffix, "\n")
	if r := strings.TrimSpace(rest); r != "" && (strings.Trim(r, ")]}") != "" || excessClosers(answer)) {
		// The rest of the cursor's line, repeated at the end of the
		// completion's first line (or the whole answer's end).
		first, tail, more := strings.Cut(answer, "\n")
		if !more {
			answer = strings.TrimRight(strings.TrimSuffix(first, r), " \t")
		} else if strings.HasSuffix(strings.TrimRight(first, " \t"), r) {
			answer = strings.TrimRight(strings.TrimSuffix(strings.TrimRight(first, " \t"), r), " \t") + "\n" + tail
		}
	}
	if multiline {
		answer = trimRepeatedLines(answer, suffix)
	}
	if strings.TrimSpace(answer) == "" {
		return ""
	}
	return answer
}

// trimRepeatedLines cuts the completion's last lines where they are the
// first non-blank lines after the cursor (the closing "}" a model writes
// though the file has it).
func trimRepeatedLines(answer, suffix string) string {
	lines := strings.Split(answer, "\n")
	var next []string
	for _, l := range strings.Split(suffix, "\n") {
		if t := strings.TrimSpace(l); t != "" {
			next = append(next, t)
		}
		if len(next) == len(lines) {
			break
		}
	}
	for n := min(len(lines), len(next)); n >= 1; n-- {
		match := true
		for i := range n {
			if strings.TrimSpace(lines[len(lines)-n+i]) != next[i] {
				match = false
				break
			}
		}
		removed := strings.Join(lines[len(lines)-n:], "")
		if match && (strings.Trim(strings.TrimSpace(removed), ")]}; \t") != "" || excessClosers(answer)) {
			return strings.TrimRight(strings.Join(lines[:len(lines)-n], "\n"), " \t\r\n")
		}
	}
	return answer
}

// excessClosers reports whether s closes more brackets than it opens:
// a completion whose last closers repeat those after the cursor (where
// "foo(bar)" before a ")" is whole, "foo(bar))" repeats it).
func excessClosers(s string) bool {
	n := 0
	for _, c := range s {
		switch c {
		case '(', '[', '{':
			n++
		case ')', ']', '}':
			n--
		}
	}
	return n < 0
}
