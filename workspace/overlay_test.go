package workspace

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loom-lsp/loom-lsp/tools"
)

func rng(l1, c1, l2, c2 uint32) *tools.Range {
	return &tools.Range{Start: tools.Position{Line: l1, Character: c1}, End: tools.Position{Line: l2, Character: c2}}
}

func TestOverlayIncrementalChanges(t *testing.T) {
	for _, tc := range []struct {
		name    string
		text    string
		changes []Change
		want    string
	}{
		{"insert at start", "abc\n", []Change{{Range: rng(0, 0, 0, 0), Text: "x"}}, "xabc\n"},
		{"replace in second line", "one\ntwo\n", []Change{{Range: rng(1, 0, 1, 3), Text: "TWO"}}, "one\nTWO\n"},
		{"delete across lines", "one\ntwo\nthree\n", []Change{{Range: rng(0, 2, 2, 1), Text: ""}}, "onhree\n"},
		// 😀 is two UTF-16 code units; é is one.
		{"utf-16 surrogate pair", "😀x\n", []Change{{Range: rng(0, 2, 0, 3), Text: "y"}}, "😀y\n"},
		{"utf-16 accented", "éa\n", []Change{{Range: rng(0, 1, 0, 2), Text: "b"}}, "éb\n"},
		{"crlf line end", "ab\r\ncd\r\n", []Change{{Range: rng(1, 0, 1, 2), Text: "CD"}}, "ab\r\nCD\r\n"},
		// A lone "\r" ends a line, as in LSP (the editor splits there).
		{"lone cr line end", "ab\rcd\ref", []Change{{Range: rng(2, 0, 2, 1), Text: "E"}}, "ab\rcd\rEf"},
		{"lone cr: clamp before the break", "ab\rcd", []Change{{Range: rng(0, 9, 0, 9), Text: "!"}}, "ab!\rcd"},
		{"mixed line ends", "a\rb\r\nc\nd", []Change{{Range: rng(3, 0, 3, 1), Text: "D"}, {Range: rng(1, 1, 2, 0), Text: "\r"}}, "a\rb\rc\nD"},
		{"character past the line end clamps", "ab\ncd\n", []Change{{Range: rng(0, 99, 0, 99), Text: "!"}}, "ab!\ncd\n"},
		{"insert at end of document", "ab", []Change{{Range: rng(0, 2, 0, 2), Text: "\nc"}}, "ab\nc"},
		{"changes apply in order", "abc", []Change{{Range: rng(0, 0, 0, 1), Text: "X"}, {Range: rng(0, 2, 0, 3), Text: "Z"}}, "XbZ"},
		{"full replacement", "old", []Change{{Text: "new"}}, "new"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := NewOverlay()
			path := filepath.Join(t.TempDir(), "f.txt")
			o.Open(path, 1, tc.text)
			if err := o.Change(path, 2, tc.changes); err != nil {
				t.Fatal(err)
			}
			text, version, ok := o.Document(path)
			if !ok || text != tc.want || version != 2 {
				t.Fatalf("got %q v%d (open %v), want %q v2", text, version, ok, tc.want)
			}
		})
	}
}

func TestOverlayErrorsLeaveTheDocumentUnchanged(t *testing.T) {
	o := NewOverlay()
	path := filepath.Join(t.TempDir(), "f.txt")
	if err := o.Change(path, 2, []Change{{Text: "x"}}); err == nil {
		t.Error("a change to a document that is not open succeeded")
	}
	o.Open(path, 1, "ab\n")
	for _, bad := range []*tools.Range{rng(5, 0, 5, 0), rng(0, 2, 0, 1)} {
		if err := o.Change(path, 2, []Change{{Range: rng(0, 0, 0, 1), Text: "Z"}, {Range: bad, Text: "x"}}); err == nil {
			t.Errorf("range %+v accepted", bad)
		}
	}
	if text, v, _ := o.Document(path); text != "ab\n" || v != 1 {
		t.Errorf("a failed change altered the document: %q v%d", text, v)
	}
}

func TestOverlayReadsBufferThenDisk(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	os.WriteFile(path, []byte("disk"), 0o644)
	o := NewOverlay()
	if b, err := o.ReadFile(path); err != nil || string(b) != "disk" {
		t.Fatalf("closed: %q %v", b, err)
	}
	o.Open(path, 1, "buffer")
	if b, _ := o.ReadFile(path); string(b) != "buffer" {
		t.Fatalf("open: %q", b)
	}
	o.Close(path)
	if b, _ := o.ReadFile(path); string(b) != "disk" {
		t.Fatalf("after close: %q", b)
	}
}
