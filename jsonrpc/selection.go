package jsonrpc

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/loom-lsp/loom-lsp/internal/lsppos"
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

// sliceRange returns the text of r in doc (positions as package lsppos
// defines them). Positions past a line's end clamp to it.
func sliceRange(doc string, r protocol.Range) (string, error) {
	return lsppos.Slice(doc, lspposRange(r))
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
