package jsonrpc

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
)

// maxSelection bounds the selected text added to a prompt.
const maxSelection = 64 << 10

// selectionContext renders a selection as prompt context: where it is,
// the diagnostic if any, and the text (from the open buffer, else disk).
func (s *Server) selectionContext(folder, rawURI string, sel Selection) (string, error) {
	path, err := uriPath(uri.URI(rawURI))
	if err != nil {
		return "", err
	}
	text := sel.Text
	if text == "" {
		doc, _, ok := s.host.Overlay().Document(path)
		if !ok {
			b, err := os.ReadFile(path)
			if err != nil {
				return "", err
			}
			doc = string(b)
		}
		text, err = sliceRange(doc, sel.Range)
		if err != nil {
			return "", err
		}
	}
	if len(text) > maxSelection {
		text = text[:maxSelection] + "\n[… selection truncated]"
	}
	rel, err := filepath.Rel(folder, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		rel = path
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Context: %s, lines %d-%d", rel, sel.Range.Start.Line+1, sel.Range.End.Line+1)
	if sel.Diagnostic != "" {
		fmt.Fprintf(&b, "\nDiagnostic there: %s", sel.Diagnostic)
	}
	fence := "```"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	fmt.Fprintf(&b, "\n%s\n%s\n%s", fence, strings.TrimSuffix(text, "\n"), fence)
	return b.String(), nil
}

// sliceRange returns the text of r in doc (LSP positions: 0-based lines,
// UTF-16 characters). Positions past a line's end clamp to it.
func sliceRange(doc string, r protocol.Range) (string, error) {
	start, err := offsetOf(doc, r.Start)
	if err != nil {
		return "", err
	}
	end, err := offsetOf(doc, r.End)
	if err != nil {
		return "", err
	}
	if end < start {
		return "", fmt.Errorf("range end %d:%d is before its start %d:%d", r.End.Line, r.End.Character, r.Start.Line, r.Start.Character)
	}
	return doc[start:end], nil
}

// offsetOf returns the byte offset of p in doc.
func offsetOf(doc string, p protocol.Position) (int, error) {
	off := 0
	for line := uint32(0); line < p.Line; line++ {
		i := strings.IndexAny(doc[off:], "\r\n")
		if i < 0 {
			return 0, fmt.Errorf("line %d is past the end of the document", p.Line+1)
		}
		off += i
		if doc[off] == '\r' && off+1 < len(doc) && doc[off+1] == '\n' {
			off++
		}
		off++
	}
	lineEnd := len(doc)
	if i := strings.IndexAny(doc[off:], "\r\n"); i >= 0 {
		lineEnd = off + i
	}
	units := uint32(0)
	for off < lineEnd && units < p.Character {
		r, size := utf8.DecodeRuneInString(doc[off:])
		units += uint32(utf16.RuneLen(r))
		if r == utf8.RuneError && size <= 1 {
			units = units - uint32(utf16.RuneLen(r)) + 1
		}
		off += size
	}
	return off, nil
}

// truncate shortens s to at most n bytes (on a rune boundary), marking
// the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
