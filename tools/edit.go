package tools

import (
	"bytes"
	"io/fs"
	"strings"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff"

	"github.com/loom-lsp/loom-lsp/internal/lsppos"
)

// Edit is a change to one file computed by edit_file or write_file. The
// workspace applies it: to the editor buffer (TextEdits) when the file is
// open, else to disk through its one writer (package workspace/worktree),
// which compares the disk with OldText just before it renames.
type Edit struct {
	// Path is absolute and resolved, inside the workspace root.
	Path string
	// RelPath is Path relative to the root, slash-separated.
	RelPath string
	// Created is true when the file does not exist yet; OldText is then
	// empty.
	Created bool
	// OldText and NewText are the full texts, exactly as on disk or in
	// the buffer, including any BOM and CRLF line endings.
	OldText, NewText string
	// Mode is the permission bits to keep (or to create with).
	Mode fs.FileMode
	// TextEdits turn OldText into NewText: minimal, sorted, not
	// overlapping, in LSP positions of the text without its BOM.
	TextEdits []TextEdit
	// Diff is a unified diff of the change, for display.
	Diff string
}

// TextEdit is the LSP TextEdit (see package lsppos).
type TextEdit = lsppos.TextEdit

// Range is the LSP Range: End is exclusive.
type Range = lsppos.Range

// Position is the LSP Position: a 0-based line and a 0-based offset in
// UTF-16 code units within that line. Lines end at "\n", "\r\n" or a
// lone "\r".
type Position = lsppos.Position

const bom = "\uFEFF"

// newEdit builds the Edit turning oldText into newText, with its
// TextEdits and display diff.
func newEdit(root, abs string, created bool, oldText, newText string, mode fs.FileMode) *Edit {
	rel := relTo(root, abs)
	e := &Edit{Path: abs, RelPath: rel, Created: created, OldText: oldText, NewText: newText, Mode: mode.Perm()}
	oldBody, newBody := strings.TrimPrefix(oldText, bom), strings.TrimPrefix(newText, bom)
	edits := byteEdits(oldBody, newBody)
	e.TextEdits = lspEdits(oldBody, edits)
	if n := len(oldText) - len(oldBody); n == len(newText)-len(newBody) {
		shifted := make([]udiff.Edit, len(edits))
		for i, ed := range edits {
			shifted[i] = udiff.Edit{Start: ed.Start + n, End: ed.End + n, New: ed.New}
		}
		edits = shifted
	} else {
		edits = byteEdits(oldText, newText) // the BOM itself changes
	}
	from, to := "a/"+rel, "b/"+rel
	if created {
		from = "/dev/null"
	}
	// The diff shown (and counted for the model) is made of whole lines:
	// a byte edit inside a line would show that line removed and added.
	e.Diff = unifiedDiff(from, to, oldText, lineDiffEdits(oldText, newText))
	return e
}

// lineDiffEdits returns the line edits from a to b for a diff to show:
// the common whole lines at both ends are trimmed first (cheap on a huge
// file), go-udiff's line diff does the rest, so inserting one line shows
// as one added line.
func lineDiffEdits(a, b string) []udiff.Edit {
	if a == b {
		return nil
	}
	n := min(len(a), len(b))
	pre := 0
	for pre < n && a[pre] == b[pre] {
		pre++
	}
	pre = strings.LastIndexByte(a[:pre], '\n') + 1
	suf := 0
	for suf < n-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	// The suffix starts at a line start in both texts (pre is one).
	lineStart := func(t string, i int) bool { return i == pre || t[i-1] == '\n' }
	for suf > 0 && !(lineStart(a, len(a)-suf) && lineStart(b, len(b)-suf)) {
		suf--
	}
	mid := udiff.Lines(a[pre:len(a)-suf], b[pre:len(b)-suf])
	for i := range mid {
		mid[i].Start += pre
		mid[i].End += pre
	}
	return mid
}

// unifiedDiff renders edits of text as a unified diff with 3 lines of
// context. Only a window of whole lines around the edits is diffed, so a
// small change to a huge file stays cheap.
func unifiedDiff(from, to, text string, edits []udiff.Edit) string {
	if len(edits) == 0 {
		return ""
	}
	const context = 3
	ws := strings.LastIndexByte(text[:edits[0].Start], '\n') + 1
	for k := 0; k < context && ws > 0; k++ {
		ws = strings.LastIndexByte(text[:ws-1], '\n') + 1
	}
	we := edits[len(edits)-1].End
	for k := 0; k <= context && we < len(text); k++ {
		i := strings.IndexByte(text[we:], '\n')
		if i < 0 {
			we = len(text)
			break
		}
		we += i + 1
	}
	window := make([]udiff.Edit, len(edits))
	for i, e := range edits {
		window[i] = udiff.Edit{Start: e.Start - ws, End: e.End - ws, New: e.New}
	}
	u, err := udiff.ToUnifiedDiff(from, to, text[ws:we], window, context)
	if err != nil {
		return ""
	}
	if off := strings.Count(text[:ws], "\n"); off > 0 {
		for _, h := range u.Hunks {
			h.FromLine += off
			h.ToLine += off
		}
	}
	return u.String()
}

// byteEdits returns minimal byte edits from a to b. The common prefix and
// suffix are trimmed first so that a small change in a huge file costs
// O(size) rather than a full diff; go-udiff diffs the rest.
func byteEdits(a, b string) []udiff.Edit {
	if a == b {
		return nil
	}
	n := min(len(a), len(b))
	pre := 0
	for pre < n && a[pre] == b[pre] {
		pre++
	}
	for pre > 0 && pre < len(a) && !utf8.RuneStart(a[pre]) {
		pre--
	}
	suf := 0
	for suf < n-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	for suf > 0 && len(a)-suf < len(a) && !utf8.RuneStart(a[len(a)-suf]) {
		suf--
	}
	mid := udiff.Strings(a[pre:len(a)-suf], b[pre:len(b)-suf])
	for i := range mid {
		mid[i].Start += pre
		mid[i].End += pre
	}
	return mid
}

// textEdits returns the LSP TextEdits from a to b.
func textEdits(a, b string) []TextEdit { return lspEdits(a, byteEdits(a, b)) }

// lspEdits converts byte edits of a into LSP TextEdits. No edit boundary
// is left between the "\r" and "\n" of a CRLF. edits is not modified.
func lspEdits(a string, edits []udiff.Edit) []TextEdit {
	if len(edits) == 0 {
		return nil
	}
	// Widen the boundaries that split a CRLF. Edits are sorted and do not
	// overlap; once adjacent ones are joined, widening by one byte cannot
	// make two overlap (the byte between them is the '\n').
	edits = joinAdjacent(edits)
	for i := range edits {
		e := &edits[i]
		if e.Start > 0 && e.Start < len(a) && a[e.Start-1] == '\r' && a[e.Start] == '\n' {
			e.Start--
			e.New = "\r" + e.New
		}
		if e.End > 0 && e.End < len(a) && a[e.End-1] == '\r' && a[e.End] == '\n' {
			e.End++
			e.New += "\n"
		}
	}
	merged := joinAdjacent(edits)
	conv := lsppos.NewConverter(a)
	out := make([]TextEdit, len(merged))
	for i, e := range merged {
		out[i] = TextEdit{Range: Range{Start: conv.Position(e.Start), End: conv.Position(e.End)}, NewText: e.New}
	}
	return out
}

// joinAdjacent merges sorted edits that touch into one.
func joinAdjacent(edits []udiff.Edit) []udiff.Edit {
	out := edits[:0:0]
	for _, e := range edits {
		if k := len(out) - 1; k >= 0 && out[k].End == e.Start {
			out[k].End = e.End
			out[k].New += e.New
			continue
		}
		out = append(out, e)
	}
	return out
}

// usesCRLF reports whether text's first line break is CRLF.
func usesCRLF(text string) bool {
	i := strings.IndexByte(text, '\n')
	return i > 0 && text[i-1] == '\r'
}

// toCRLF turns every line break of s into CRLF.
func toCRLF(s string) string {
	if !strings.Contains(s, "\n") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
}

// isBinary reports whether data is not UTF-8 text: it has a NUL byte in
// its first 8000 bytes, or is not valid UTF-8.
func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 || !utf8.Valid(data)
}

// NewEdit returns the Edit turning oldText into newText in the file at
// abs (absolute, resolved, inside root): its TextEdits and display diff.
// created marks a file that does not exist yet.
func NewEdit(root, abs string, created bool, oldText, newText string, mode fs.FileMode) *Edit {
	return newEdit(root, abs, created, oldText, newText, mode)
}
