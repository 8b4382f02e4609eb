package tools

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
)

// ProgressLineMax caps, in bytes, the output line a running command
// reports as its progress.
const ProgressLineMax = 200

// lastLine is an io.Writer that keeps the latest non-blank line of what it
// is given (a carriage return ends a line too, as progress bars use it),
// for bash's progress reports. It keeps at most ProgressLineMax bytes of
// a line, so any amount of output costs it no more memory. It is safe for
// concurrent use.
type lastLine struct {
	mu   sync.Mutex
	cur  []byte // the line being written, capped
	last []byte // the last complete non-blank line, capped
	long bool   // cur was cut at the cap
}

func (l *lastLine) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexAny(p, "\r\n")
		if i < 0 {
			l.add(p)
			break
		}
		l.add(p[:i])
		if len(bytes.TrimSpace(l.cur)) > 0 {
			l.last = append(l.last[:0], l.cur...)
		}
		l.cur = l.cur[:0]
		p = p[i+1:]
	}
	return n, nil
}

// add appends b to the current line, up to the cap.
func (l *lastLine) add(b []byte) {
	if room := ProgressLineMax - len(l.cur); len(b) > room {
		b = b[:max(room, 0)]
	}
	l.cur = append(l.cur, b...)
}

// String is the latest line for people to read: the line being written if
// it is not blank (a command printing a prompt or a progress bar), else
// the last complete one; without colour codes and control characters,
// valid UTF-8, at most ProgressLineMax bytes; "" before any output.
func (l *lastLine) String() string {
	l.mu.Lock()
	line := l.last
	if len(bytes.TrimSpace(l.cur)) > 0 {
		line = l.cur
	}
	s := string(line)
	l.mu.Unlock()
	return cleanLine(s)
}

// ansiEscape matches terminal escape sequences (colours, cursor moves).
var ansiEscape = regexp.MustCompile(`\x1b(\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-Z\\-_])`)

// cleanLine makes one line of command output printable on one line.
func cleanLine(s string) string {
	// ToValidUTF8 first (strings.Map would turn bad bytes into U+FFFD);
	// it also drops a rune the cap cut in two.
	s = ansiEscape.ReplaceAllString(strings.ToValidUTF8(s, ""), "")
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\t':
			return ' '
		case r < 0x20 || r == 0x7f:
			return -1
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}
