package workspace

import (
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/loom-lsp/loom-lsp/internal/lsppos"
	"github.com/loom-lsp/loom-lsp/internal/lsppos/lsppostest"
)

// FuzzOverlayChange applies one didChange's incremental changes, decoded
// from ops (5 bytes a change: start line and character, end line and
// character, and how much of insert to type), to an open document, and
// checks the overlay against the reference model of LSP positions: the
// same text when the model accepts every change; otherwise an error and
// the document, text and version, as it was. Valid UTF-8 stays valid.
func FuzzOverlayChange(f *testing.F) {
	f.Add("alpha\rbeta\rgamma\r", []byte{2, 0, 2, 0, 3, 1, 4, 1, 4, 1}, "G: !")
	f.Add("a\r\nb\nc\rd", []byte{0, 1, 3, 0, 2, 1, 0, 1, 9, 1}, "\r\n")
	f.Add("😀é€\n\xff", []byte{0, 1, 0, 3, 2, 1, 0, 0, 1, 0}, "x😀")
	f.Add("", []byte{0, 0, 0, 0, 4}, "one\rtwo")
	f.Add("ab\ncd", []byte{1, 0, 0, 1, 0}, "")
	f.Fuzz(func(t *testing.T, text string, ops []byte, insert string) {
		path := filepath.Join(t.TempDir(), "f.txt")
		o := NewOverlay()
		o.Open(path, 1, text)
		var changes []Change
		want, refOK := text, true
		valid := utf8.ValidString(text)
		for i := 0; i+5 <= len(ops) && len(changes) < 16; i += 5 {
			r := lsppos.Range{
				Start: lsppos.Position{Line: uint32(ops[i] % 8), Character: uint32(ops[i+1] % 16)},
				End:   lsppos.Position{Line: uint32(ops[i+2] % 8), Character: uint32(ops[i+3] % 16)},
			}
			s := insert[:int(ops[i+4])%(len(insert)+1)]
			changes = append(changes, Change{Range: &r, Text: s})
			valid = valid && utf8.ValidString(s)
			if refOK {
				next, err := lsppostest.Replace(want,
					lsppostest.Position{Line: r.Start.Line, Character: r.Start.Character},
					lsppostest.Position{Line: r.End.Line, Character: r.End.Character}, s)
				want, refOK = next, err == nil
			}
		}
		err := o.Change(path, 2, changes)
		got, version, _ := o.Document(path)
		if !refOK {
			if err == nil || got != text || version != 1 {
				t.Fatalf("the reference refuses %+v, yet the overlay gave %q v%d, %v (want %q v1 and an error)", changes, got, version, err, text)
			}
			return
		}
		if err != nil || got != want || version != 2 {
			t.Fatalf("overlay = %q v%d, %v; reference %q v2", got, version, err, want)
		}
		if valid && !utf8.ValidString(got) {
			t.Fatalf("valid UTF-8 became invalid: %q", got)
		}
	})
}
