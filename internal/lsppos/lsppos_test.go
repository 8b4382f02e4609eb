package lsppos_test

import (
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/loom-lsp/loom-lsp/internal/lsppos"
	"github.com/loom-lsp/loom-lsp/internal/lsppos/lsppostest"
)

// pieces are what generated documents are made of: ASCII, 2-, 3- and
// 4-byte characters (the last a UTF-16 surrogate pair), every LSP line
// break, and a byte that is not UTF-8.
var pieces = []string{"a", "b", " ", "é", "€", "😀", "\n", "\r", "\r\n", "\xff"}

func genText() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		return strings.Join(rapid.SliceOfN(rapid.SampledFrom(pieces), 0, 30).Draw(t, "pieces"), "")
	})
}

func genPosition(t *rapid.T, text, label string) lsppos.Position {
	return lsppos.Position{
		Line:      rapid.Uint32Range(0, uint32(lsppos.LineCount(text))).Draw(t, label+".line"),
		Character: rapid.Uint32Range(0, 12).Draw(t, label+".character"),
	}
}

func ref(p lsppos.Position) lsppostest.Position {
	return lsppostest.Position{Line: p.Line, Character: p.Character}
}

func TestOffsetMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		text := genText().Draw(t, "text")
		p := genPosition(t, text, "p")
		got, err := lsppos.Offset(text, p)
		want, wantErr := lsppostest.Offset(text, ref(p))
		if (err != nil) != (wantErr != nil) || got != want {
			t.Fatalf("Offset(%q, %+v) = %d, %v; reference %d, %v", text, p, got, err, want, wantErr)
		}
	})
}

func TestPositionOfMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		text := genText().Draw(t, "text")
		off := rapid.IntRange(0, len(text)).Draw(t, "off")
		got := lsppos.PositionOf(text, off)
		if want := lsppostest.PositionOf(text, off); got.Line != want.Line || got.Character != want.Character {
			t.Fatalf("PositionOf(%q, %d) = %+v; reference %+v", text, off, got, want)
		}
	})
}

func TestConverterMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		text := genText().Draw(t, "text")
		offs := rapid.SliceOfN(rapid.IntRange(0, len(text)), 0, 12).Draw(t, "offs")
		slices.Sort(offs)
		c := lsppos.NewConverter(text)
		for _, off := range offs {
			got := c.Position(off)
			if want := lsppostest.PositionOf(text, off); got.Line != want.Line || got.Character != want.Character {
				t.Fatalf("Converter(%q).Position(%d) after %v = %+v; reference %+v", text, off, offs, got, want)
			}
		}
	})
}

// TestRoundTrip: every offset a position can name converts to that
// position and back.
func TestRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		text := genText().Draw(t, "text")
		off := rapid.IntRange(0, len(text)).Draw(t, "off")
		if off > 0 && off < len(text) && text[off-1] == '\r' && text[off] == '\n' {
			t.Skip("inside a CRLF")
		}
		if off < len(text) && !isRuneStart(text, off) {
			t.Skip("inside a character")
		}
		p := lsppos.PositionOf(text, off)
		if back, err := lsppos.Offset(text, p); err != nil || back != off {
			t.Fatalf("%q: offset %d -> %+v -> %d, %v", text, off, p, back, err)
		}
	})
}

// isRuneStart reports whether off starts a character as the reference
// decodes it (an invalid byte is a character of its own).
func isRuneStart(text string, off int) bool {
	for i := range text {
		if i == off {
			return true
		}
	}
	return false
}

func TestApplyChangesMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		text := genText().Draw(t, "text")
		want := text
		var changes []lsppos.Change
		refOK := true
		for i := range rapid.IntRange(0, 4).Draw(t, "changes") {
			label := "change" + string(rune('0'+i))
			insert := genText().Draw(t, label+".text")
			if rapid.IntRange(0, 9).Draw(t, label+".full") == 0 {
				changes = append(changes, lsppos.Change{Text: insert})
				want = insert
				continue
			}
			r := lsppos.Range{Start: genPosition(t, want, label+".start"), End: genPosition(t, want, label+".end")}
			changes = append(changes, lsppos.Change{Range: &r, Text: insert})
			next, err := lsppostest.Replace(want, ref(r.Start), ref(r.End), insert)
			if err != nil {
				refOK = false
				break
			}
			want = next
		}
		got, err := lsppos.ApplyChanges(text, changes)
		if !refOK {
			if err == nil || got != text {
				t.Fatalf("ApplyChanges(%q, %+v) = %q, %v; the reference refuses it, and the text must stay", text, changes, got, err)
			}
			return
		}
		if err != nil || got != want {
			t.Fatalf("ApplyChanges(%q, %+v) = %q, %v; reference %q", text, changes, got, err, want)
		}
	})
}

func TestApplyEditsMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		text := genText().Draw(t, "text")
		var edits []lsppos.TextEdit
		var refEdits []lsppostest.Edit
		for i := range rapid.IntRange(0, 4).Draw(t, "edits") {
			label := "edit" + string(rune('0'+i))
			r := lsppos.Range{Start: genPosition(t, text, label+".start"), End: genPosition(t, text, label+".end")}
			insert := genText().Draw(t, label+".text")
			edits = append(edits, lsppos.TextEdit{Range: r, NewText: insert})
			refEdits = append(refEdits, lsppostest.Edit{Start: ref(r.Start), End: ref(r.End), Text: insert})
		}
		got, err := lsppos.ApplyEdits(text, edits)
		want, wantErr := lsppostest.ApplyEdits(text, refEdits)
		if wantErr != nil {
			if err == nil || got != text {
				t.Fatalf("ApplyEdits(%q, %+v) = %q, %v; the reference refuses it (%v), and the text must stay", text, edits, got, err, wantErr)
			}
			return
		}
		if err != nil || got != want {
			t.Fatalf("ApplyEdits(%q, %+v) = %q, %v; reference %q", text, edits, got, err, want)
		}
	})
}

// TestLoneCR pins the cases of the issue by hand: a lone "\r" ends a line
// like "\n" and "\r\n" do.
func TestLoneCR(t *testing.T) {
	text := "one\rtwo\r\nthree\nfour😀x\r"
	for _, c := range []struct {
		p    lsppos.Position
		want int
	}{
		{lsppos.Position{Line: 0, Character: 3}, 3},
		{lsppos.Position{Line: 0, Character: 99}, 3},
		{lsppos.Position{Line: 1, Character: 0}, 4},
		{lsppos.Position{Line: 1, Character: 99}, 7},
		{lsppos.Position{Line: 2, Character: 0}, 9},
		{lsppos.Position{Line: 3, Character: 4}, 19},
		{lsppos.Position{Line: 3, Character: 6}, 23},
		{lsppos.Position{Line: 3, Character: 7}, 24},
		{lsppos.Position{Line: 4, Character: 0}, 25},
	} {
		if got, err := lsppos.Offset(text, c.p); err != nil || got != c.want {
			t.Errorf("Offset(%+v) = %d, %v; want %d", c.p, got, err, c.want)
		}
	}
	if _, err := lsppos.Offset(text, lsppos.Position{Line: 5}); err == nil {
		t.Error("line 5 of a 5-line text accepted")
	}
	if n := lsppos.LineCount(text); n != 5 {
		t.Errorf("LineCount = %d, want 5", n)
	}
	got, err := lsppos.ApplyChanges(text, []lsppos.Change{{Range: &lsppos.Range{Start: lsppos.Position{Line: 1, Character: 0}, End: lsppos.Position{Line: 2, Character: 0}}, Text: "2\r"}})
	if want := "one\r2\rthree\nfour😀x\r"; err != nil || got != want {
		t.Errorf("ApplyChanges = %q, %v; want %q", got, err, want)
	}
}
