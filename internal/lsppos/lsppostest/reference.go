// Package lsppostest is a slow, obviously correct model of LSP 3.17
// positions (UTF-16 code units; lines ending at "\n", "\r\n" or a lone
// "\r"), written for clarity rather than speed. Tests check the lsppos
// package, and the document copies built with it, against this model.
package lsppostest

import (
	"fmt"
	"slices"
	"unicode/utf16"
)

// Position is a 0-based line and UTF-16 character.
type Position struct{ Line, Character uint32 }

// Line is one line of a document: its text and the line break that ends
// it ("" for the last line).
type Line struct{ Text, Break string }

// Lines splits text into its lines, one byte at a time.
func Lines(text string) []Line {
	var lines []Line
	cur := ""
	for i := 0; i < len(text); i++ {
		switch {
		case text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n':
			lines = append(lines, Line{cur, "\r\n"})
			cur = ""
			i++
		case text[i] == '\n' || text[i] == '\r':
			lines = append(lines, Line{cur, text[i : i+1]})
			cur = ""
		default:
			cur += text[i : i+1]
		}
	}
	return append(lines, Line{cur, ""})
}

// Units is the UTF-16 length of s, one rune at a time (an invalid byte
// is one U+FFFD).
func Units(s string) uint32 {
	n := 0
	for _, r := range s {
		n += len(utf16.Encode([]rune{r}))
	}
	return uint32(n)
}

// Offset is the byte offset of p: the first rune boundary of p's line at
// or past p.Character units, else the line's end.
func Offset(text string, p Position) (int, error) {
	lines := Lines(text)
	if int(p.Line) >= len(lines) {
		return 0, fmt.Errorf("line %d of %d", p.Line, len(lines))
	}
	start := 0
	for _, l := range lines[:p.Line] {
		start += len(l.Text) + len(l.Break)
	}
	line := lines[p.Line].Text
	for i := range line {
		if Units(line[:i]) >= p.Character {
			return start + i, nil
		}
	}
	return start + len(line), nil
}

// PositionOf is the position of byte offset off; inside a line break, the
// end of its line.
func PositionOf(text string, off int) Position {
	start := 0
	lines := Lines(text)
	for n, l := range lines {
		if off < start+len(l.Text)+len(l.Break) || n == len(lines)-1 {
			col := min(off-start, len(l.Text))
			return Position{Line: uint32(n), Character: Units(l.Text[:col])}
		}
		start += len(l.Text) + len(l.Break)
	}
	panic("unreachable")
}

// Replace replaces the text between two positions with s.
func Replace(text string, start, end Position, s string) (string, error) {
	a, err := Offset(text, start)
	if err != nil {
		return "", err
	}
	b, err := Offset(text, end)
	if err != nil {
		return "", err
	}
	if b < a {
		return "", fmt.Errorf("end before start")
	}
	return text[:a] + s + text[b:], nil
}

// Edit is one edit of a TextDocumentEdit.
type Edit struct {
	Start, End Position
	Text       string
}

// ApplyEdits applies edits that all refer to the original text, from the
// last to the first, so earlier offsets stay valid; of edits at the same
// place, the first in the list comes first in the result.
func ApplyEdits(text string, edits []Edit) (string, error) {
	type span struct {
		index, start, end int
	}
	var spans []span
	for i, e := range edits {
		a, err := Offset(text, e.Start)
		if err != nil {
			return "", err
		}
		b, err := Offset(text, e.End)
		if err != nil {
			return "", err
		}
		if b < a {
			return "", fmt.Errorf("end before start")
		}
		spans = append(spans, span{i, a, b})
	}
	slices.SortStableFunc(spans, func(x, y span) int { return x.start - y.start })
	for i := 1; i < len(spans); i++ {
		if spans[i].start < spans[i-1].end {
			return "", fmt.Errorf("overlap")
		}
	}
	for i := len(spans) - 1; i >= 0; i-- {
		s := spans[i]
		text = text[:s.start] + edits[s.index].Text + text[s.end:]
	}
	return text, nil
}
