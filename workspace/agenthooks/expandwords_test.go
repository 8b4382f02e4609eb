package agenthooks

import (
	"strings"
	"testing"
)

// TestExpandWordParts: each part of a word as bash reads it — ~ at a
// word's start (alone or before '/'; not quoted, escaped or inside a
// word), single quotes (an unclosed one runs to the end), an escape, and
// the pattern characters *, ? and [ (a lone [ is the test command).
func TestExpandWordParts(t *testing.T) {
	home := func(name string) (string, bool) {
		if name == "HOME" {
			return "/home/u", true
		}
		return "", false
	}
	for _, c := range []struct{ cmd, words, unresolved string }{
		// A lone ~ before a space stays ~ (only the line's end or a '/'
		// after it expand it): today's reading, kept.
		{`cat ~/a ~ '~/b' \~/c ~x x~`, "/d/cat /home/u/a /d/~ /d/~/b /d/~/c /d/~x /d/x~", ""},
		{`cat 'a b'c 'open end`, "/d/cat /d/a bc /d/open end", ""},
		{`cat a\ b \'`, "/d/cat /d/a b /d/'", ""},
		{`ls a?.go`, "/d/ls /d/a?.go", "a pattern (a?.go)"},
		{`ls [ab].go`, "/d/ls /d/[ab].go", "a pattern ([ab].go)"},
		{`[ -f x ]`, "/d/[ /d/-f /d/x /d/]", ""},
	} {
		r := Expand(&Hook{Command: c.cmd, Dir: "/d", Event: PostToolUse}, "/d", home)
		if got := strings.Join(r.Words, " "); got != c.words {
			t.Errorf("%s: words %q, want %q", c.cmd, got, c.words)
		}
		if got := strings.Join(r.Unresolved, " "); got != c.unresolved {
			t.Errorf("%s: unresolved %q, want %q", c.cmd, got, c.unresolved)
		}
	}
}
