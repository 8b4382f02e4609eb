// Package lsppos is the project's one converter between byte offsets in
// UTF-8 text and LSP 3.17 positions. Every package that reads or writes
// an LSP position goes through it, so the server's copy of a document and
// the editor's never disagree about where a line ends or how wide a
// character is.
//
// A position is a 0-based line and a 0-based character offset within
// that line, counted in UTF-16 code units: the protocol's default
// encoding, and the only one this server offers (it announces no
// positionEncoding, so clients use UTF-16). Lines end at "\n", "\r\n" or
// a lone "\r", as LSP 3.17 defines them. A byte that is not valid UTF-8
// counts as one code unit (the U+FFFD a client would show for it).
//
// The package imports nothing of the project.
package lsppos

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Position is an LSP position: a 0-based line and a 0-based offset in
// UTF-16 code units within that line.
type Position struct {
	Line      uint32 `json:"line"`
	Character uint32 `json:"character"`
}

// Range is an LSP range; End is exclusive.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// TextEdit is an LSP TextEdit: replace Range with NewText.
type TextEdit struct {
	Range   Range  `json:"range"`
	NewText string `json:"newText"`
}

// Change is one content change of a didChange notification. A nil Range
// replaces the whole text.
type Change struct {
	Range *Range
	Text  string
}

// Offset returns the byte offset of p in text. A character past the end
// of its line is the line's end (before its line break), as the LSP
// specification asks; a character inside a surrogate pair is the end of
// that character. A line past the last one is an error.
func Offset(text string, p Position) (int, error) {
	start, ok := lineStart(text, p.Line)
	if !ok {
		return 0, fmt.Errorf("line %d is past the end of the document (%d lines)", p.Line, LineCount(text))
	}
	end := len(text)
	if i := strings.IndexAny(text[start:], "\r\n"); i >= 0 {
		end = start + i
	}
	return start + unitsToBytes(text[start:end], p.Character), nil
}

// Span returns the byte offsets of r in text.
func Span(text string, r Range) (start, end int, err error) {
	start, err = Offset(text, r.Start)
	if err != nil {
		return 0, 0, fmt.Errorf("start: %w", err)
	}
	end, err = Offset(text, r.End)
	if err != nil {
		return 0, 0, fmt.Errorf("end: %w", err)
	}
	if end < start {
		return 0, 0, fmt.Errorf("range end %d:%d is before its start %d:%d", r.End.Line, r.End.Character, r.Start.Line, r.Start.Character)
	}
	return start, end, nil
}

// Slice returns the text of r in text.
func Slice(text string, r Range) (string, error) {
	start, end, err := Span(text, r)
	if err != nil {
		return "", err
	}
	return text[start:end], nil
}

// PositionOf returns the position of byte offset off of text, which must
// be in [0, len(text)]. An offset between the "\r" and "\n" of a CRLF,
// which no position names, is the end of its line.
func PositionOf(text string, off int) Position {
	c := NewConverter(text)
	return c.Position(off)
}

// ApplyChanges applies the content changes of one didChange notification
// to text, in order: each change's range refers to the text as the
// changes before it left it. On error text is returned unchanged.
func ApplyChanges(text string, changes []Change) (string, error) {
	out := text
	for i, c := range changes {
		if c.Range == nil {
			out = c.Text
			continue
		}
		start, end, err := Span(out, *c.Range)
		if err != nil {
			return text, fmt.Errorf("change %d: %w", i, err)
		}
		out = out[:start] + c.Text + out[end:]
	}
	return out, nil
}

// ApplyEdits applies edits to text the way a client applies the edits of
// one TextDocumentEdit: every range refers to the original text, ranges
// must not overlap, and edits inserting at the same position apply in
// their order. On error text is returned unchanged.
func ApplyEdits(text string, edits []TextEdit) (string, error) {
	type span struct {
		start, end int
		text       string
	}
	spans := make([]span, len(edits))
	for i, e := range edits {
		start, end, err := Span(text, e.Range)
		if err != nil {
			return text, fmt.Errorf("edit %d: %w", i, err)
		}
		spans[i] = span{start, end, e.NewText}
	}
	slices.SortStableFunc(spans, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	var b strings.Builder
	last := 0
	for i, s := range spans {
		if s.start < last {
			return text, fmt.Errorf("edits overlap at byte %d (edit %d of the sorted edits)", s.start, i)
		}
		b.WriteString(text[last:s.start])
		b.WriteString(s.text)
		last = s.end
	}
	b.WriteString(text[last:])
	return b.String(), nil
}

// LineCount returns the number of lines of text: one more than its line
// breaks (an empty text has one empty line).
func LineCount(text string) int {
	return strings.Count(text, "\n") + strings.Count(text, "\r") - strings.Count(text, "\r\n") + 1
}

// Converter maps non-decreasing byte offsets of one text to positions in
// a single pass over the text: converting every boundary of a diff costs
// O(len(text)) in all, not per offset.
type Converter struct {
	text      string
	off       int    // last offset converted
	line      uint32 // line of off
	lineStart int    // byte offset where that line starts
}

// NewConverter returns a Converter for text, positioned at its start.
func NewConverter(text string) *Converter { return &Converter{text: text} }

// Position returns the position of byte offset off, which must be in
// [0, len(text)] and not less than the offset of the previous call.
func (c *Converter) Position(off int) Position {
	if off < c.off || off > len(c.text) {
		panic(fmt.Sprintf("lsppos: offset %d out of order or range (last %d, length %d)", off, c.off, len(c.text)))
	}
	if off > 0 && off < len(c.text) && c.text[off-1] == '\r' && c.text[off] == '\n' {
		off-- // inside a CRLF: the end of the line
	}
	seg := c.text[c.off:off]
	if strings.IndexByte(seg, '\r') < 0 {
		if n := strings.Count(seg, "\n"); n > 0 {
			c.line += uint32(n)
			c.lineStart = c.off + strings.LastIndexByte(seg, '\n') + 1
		}
	} else {
		for i := 0; i < len(seg); i++ {
			switch seg[i] {
			case '\r':
				if c.off+i+1 < len(c.text) && c.text[c.off+i+1] == '\n' {
					continue // a CRLF: counted at its '\n'
				}
				fallthrough
			case '\n':
				c.line++
				c.lineStart = c.off + i + 1
			}
		}
	}
	c.off = off
	return Position{Line: c.line, Character: Units(c.text[c.lineStart:off])}
}

// Units returns the length of s in UTF-16 code units.
func Units(s string) uint32 {
	n := uint32(0)
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += runeUnits(r)
		i += size
	}
	return n
}

// runeUnits is the UTF-16 length of r. An invalid byte decodes as
// U+FFFD: one unit.
func runeUnits(r rune) uint32 {
	if r > 0xFFFF {
		return 2
	}
	return 1
}

// unitsToBytes returns the byte length of the shortest prefix of line
// that is at least units UTF-16 code units long, or len(line).
func unitsToBytes(line string, units uint32) int {
	n, i := uint32(0), 0
	for i < len(line) && n < units {
		if line[i] < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(line[i:])
		n += runeUnits(r)
		i += size
	}
	return i
}

// lineStart returns the byte offset where line starts, and false if text
// has fewer lines.
func lineStart(text string, line uint32) (int, bool) {
	off := 0
	if strings.IndexByte(text, '\r') < 0 {
		for ; line > 0; line-- {
			i := strings.IndexByte(text[off:], '\n')
			if i < 0 {
				return 0, false
			}
			off += i + 1
		}
		return off, true
	}
	for i := 0; i < len(text) && line > 0; i++ {
		switch text[i] {
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			fallthrough
		case '\n':
			line--
			off = i + 1
		}
	}
	return off, line == 0
}
