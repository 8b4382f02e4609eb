package tools

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aymanbagabas/go-udiff"

	"github.com/loom-lsp/loom-lsp/internal/lsppos/lsppostest"
)

// applyTextEdits applies LSP edits the way an editor does, with the
// reference model of positions; every position must name exactly one
// place (not past a line's end, not inside a character).
func applyTextEdits(t *testing.T, text string, edits []TextEdit) string {
	t.Helper()
	offset := func(p Position) int {
		off, err := lsppostest.Offset(text, lsppostest.Position{Line: p.Line, Character: p.Character})
		if err != nil {
			t.Fatalf("position %v: %v", p, err)
		}
		if got := lsppostest.PositionOf(text, off); got.Line != p.Line || got.Character != p.Character {
			t.Fatalf("position %v is not exact: it names offset %d, which is %v", p, off, got)
		}
		return off
	}
	var b strings.Builder
	last := 0
	for _, e := range edits {
		s, en := offset(e.Range.Start), offset(e.Range.End)
		if s < last || en < s {
			t.Fatalf("edits overlap or are unsorted: %+v", edits)
		}
		b.WriteString(text[last:s])
		b.WriteString(e.NewText)
		last = en
	}
	b.WriteString(text[last:])
	return b.String()
}

func TestTextEditsRoundTrip(t *testing.T) {
	cases := [][2]string{
		{"", "hello\n"},
		{"a\nb\nc\n", "a\nB\nc\n"},
		{"a\r\nb\r\nc\r\n", "a\r\nb\r\nx\r\nc\r\n"},
		{"a\r\nb\r\n", "a\r\n\r\nb\r\n"},
		{"x\ry\rz", "x\ry\rZ\r"},
		{"héllo 😀 wörld\n", "héllo 😃 world\n"},
		{"😀😀😀\n😀\n", "😀😀\n😀x\n"},
		{"same", "same"},
		{"abc", ""},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", "\n", "\r\n", "\r", "é", "😀", " "}
	for range 300 {
		var a, b strings.Builder
		for range rng.IntN(30) {
			a.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		for range rng.IntN(30) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		cases = append(cases, [2]string{a.String(), b.String()})
	}
	for _, c := range cases {
		edits := textEdits(c[0], c[1])
		if got := applyTextEdits(t, c[0], edits); got != c[1] {
			t.Fatalf("textEdits(%q, %q) = %+v, applied gives %q", c[0], c[1], edits, got)
		}
	}
}

func TestTextEditsMinimalAndUTF16(t *testing.T) {
	edits := textEdits("line0\n😀ab\n", "line0\n😀xb\n")
	if len(edits) != 1 {
		t.Fatalf("edits = %+v, want one", edits)
	}
	want := TextEdit{Range: Range{Start: Position{Line: 1, Character: 2}, End: Position{Line: 1, Character: 3}}, NewText: "x"}
	if edits[0] != want {
		t.Fatalf("edit = %+v, want %+v", edits[0], want)
	}
}

// editEnv returns an env with files written and read (recorded).
func editEnv(t *testing.T, files map[string]string) *Env {
	env := newEnv(t)
	writeFiles(t, env.Root, files)
	for rel := range files {
		mustOK(t, run(t, ReadFile{}, env, map[string]any{"path": rel}))
	}
	return env
}

// applyEdit writes res.Edit to disk and records it, as the workspace
// does, checking that its TextEdits agree with its NewText.
func applyEdit(t *testing.T, env *Env, res Result) string {
	t.Helper()
	mustOK(t, res)
	e := res.Edit
	if e == nil {
		t.Fatalf("no edit in %+v", res)
	}
	oldBody, newBody := strings.TrimPrefix(e.OldText, bom), strings.TrimPrefix(e.NewText, bom)
	if got := applyTextEdits(t, oldBody, e.TextEdits); got != newBody {
		t.Fatalf("TextEdits give %q, NewText is %q", got, newBody)
	}
	if err := WriteFileAtomic(e); err != nil {
		t.Fatal(err)
	}
	env.Reads.Record(e.Path, []byte(e.NewText))
	data, err := os.ReadFile(e.Path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestEditFile(t *testing.T) {
	env := editEnv(t, map[string]string{
		"a.go":   "package a\n\nfunc A() {}\n",
		"crlf":   "one\r\ntwo\r\nthree\r\n",
		"bom":    bom + "first\nsecond\n",
		"nonl":   "x\ny",
		"dup":    "x\nfoo\ny\nfoo\nz\nfoo\n",
		"indent": "func f() {\n\treturn 1\n}\n",
	})
	edit := func(path, old, new string, all bool) Result {
		return run(t, EditFile{}, env, map[string]any{"path": path, "old_string": old, "new_string": new, "replace_all": all})
	}

	got := applyEdit(t, env, edit("a.go", "func A() {}", "func A() int { return 1 }", false))
	if got != "package a\n\nfunc A() int { return 1 }\n" {
		t.Errorf("a.go = %q", got)
	}
	// CRLF stays CRLF: the model writes \n.
	if got := applyEdit(t, env, edit("crlf", "two\nthree", "2\n2.5\n3", false)); got != "one\r\n2\r\n2.5\r\n3\r\n" {
		t.Errorf("crlf = %q", got)
	}
	// The BOM stays.
	if got := applyEdit(t, env, edit("bom", "first", "1st", false)); got != bom+"1st\nsecond\n" {
		t.Errorf("bom = %q", got)
	}
	// No final newline stays so, even if new_string adds one.
	if got := applyEdit(t, env, edit("nonl", "y", "Y\n", false)); got != "x\nY" {
		t.Errorf("nonl = %q", got)
	}
	// Several matches: refused with count and lines, then replace_all.
	mustToolError(t, edit("dup", "foo", "bar", false), "matched 3 times", "lines 2, 4, 6")
	if got := applyEdit(t, env, edit("dup", "foo", "bar", true)); got != "x\nbar\ny\nbar\nz\nbar\n" {
		t.Errorf("dup = %q", got)
	}
	// Zero matches: a whitespace-insensitive hint.
	mustToolError(t, edit("indent", "    return 1", "return 2", false), "not found", "line 2")
	mustToolError(t, edit("indent", "     2\treturn 1", "x", false), "line numbers")
	mustToolError(t, edit("indent", "nothing like it", "x", false), "not found")
	// Other refusals.
	mustToolError(t, edit("missing.go", "x", "y", false), "file not found")
	mustToolError(t, edit("a.go", "same", "same", false), "the same")
	mustToolError(t, edit("a.go", "", "content", false), "old_string is empty")
	mustToolError(t, edit("../escape", "", "x", false), "outside the workspace root")
	mustToolError(t, edit(".git/config", "", "x", false), ".git")
	mustToolError(t, run(t, EditFile{}, env, map[string]any{"path": "a.go", "bogus": 1}), "invalid arguments")
}

func TestEditFileModeAndCreate(t *testing.T) {
	env := editEnv(t, map[string]string{"run.sh": "#!/bin/sh\necho hi\n"})
	p := filepath.Join(env.Root, "run.sh")
	if err := os.Chmod(p, 0o750); err != nil {
		t.Fatal(err)
	}
	applyEdit(t, env, run(t, EditFile{}, env, map[string]any{"path": "run.sh", "old_string": "hi", "new_string": "ho"}))
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o750 {
		t.Fatalf("mode after edit: %v, %v", fi.Mode(), err)
	}
	// Create in a new directory, with no read needed.
	res := run(t, EditFile{}, env, map[string]any{"path": "new/deeper/f.txt", "old_string": "", "new_string": "hello\n"})
	if !res.Edit.Created || res.Edit.RelPath != "new/deeper/f.txt" {
		t.Fatalf("edit = %+v", res.Edit)
	}
	if got := applyEdit(t, env, res); got != "hello\n" {
		t.Fatalf("created %q", got)
	}
	if !strings.Contains(res.Edit.Diff, "+hello") {
		t.Errorf("diff = %q", res.Edit.Diff)
	}
}

func TestEditFileStaleness(t *testing.T) {
	env := newEnv(t)
	writeFiles(t, env.Root, map[string]string{"f": "v1\n"})
	edit := map[string]any{"path": "f", "old_string": "v1", "new_string": "v2"}
	// Never read: refused.
	mustToolError(t, run(t, EditFile{}, env, edit), "read it first")
	mustToolError(t, run(t, WriteFile{}, env, map[string]any{"path": "f", "content": "x"}), "read it first")
	mustOK(t, run(t, ReadFile{}, env, map[string]any{"path": "f"}))
	mustOK(t, run(t, EditFile{}, env, edit))
	// Changed behind the model's back on the lines it edits: refused
	// until read again.
	writeFiles(t, env.Root, map[string]string{"f": "v1 changed\n"})
	env.Reads.MarkStale(filepath.Join(env.Root, "f"))
	mustToolError(t, run(t, EditFile{}, env, edit), "changed since you last read it")
	mustOK(t, run(t, ReadFile{}, env, map[string]any{"path": "f"}))
	applyEdit(t, env, run(t, EditFile{}, env, edit))
	// After the workspace applied and recorded the edit, the watcher's
	// echo of that write does not make it stale.
	env.Reads.MarkStale(filepath.Join(env.Root, "f"))
	mustOK(t, run(t, EditFile{}, env, map[string]any{"path": "f", "old_string": "v2", "new_string": "v3"}))
	// A change without a watcher event is still caught by the hash.
	writeFiles(t, env.Root, map[string]string{"f": "other\n"})
	mustToolError(t, run(t, EditFile{}, env, map[string]any{"path": "f", "old_string": "other", "new_string": "v3"}), "changed since")
}

// An edit of a file changed since the read, on other lines, is rebased
// onto the new text; on the same lines it is refused.
func TestEditFileRebasesOntoNewerText(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	base := b.String()
	env := editEnv(t, map[string]string{"f": base})
	mustOK(t, run(t, ReadFile{}, env, map[string]any{"path": "f"}))
	typed := "// the user typed this\n" + base
	writeFiles(t, env.Root, map[string]string{"f": typed})
	env.Reads.MarkStale(filepath.Join(env.Root, "f"))
	res := run(t, EditFile{}, env, map[string]any{"path": "f", "old_string": "line 20\n", "new_string": "line 20 fixed\n"})
	mustOK(t, res)
	if want := strings.Replace(typed, "line 20\n", "line 20 fixed\n", 1); res.Edit.NewText != want || res.Edit.OldText != typed {
		t.Fatalf("rebased edit: old %q new %q", res.Edit.OldText, res.Edit.NewText)
	}
	if !strings.Contains(res.Edit.Diff, "+line 20 fixed") || strings.Contains(res.Edit.Diff, "+// the user typed") {
		t.Errorf("the diff shows more than the agent's change: %s", res.Edit.Diff)
	}
	// The same lines: refused.
	writeFiles(t, env.Root, map[string]string{"f": strings.Replace(base, "line 20\n", "line 20 user\n", 1)})
	mustToolError(t, run(t, EditFile{}, env, map[string]any{"path": "f", "old_string": "line 20\n", "new_string": "line 20 fixed\n"}), "changed the lines you are editing")
}

func TestWriteFile(t *testing.T) {
	env := editEnv(t, map[string]string{"crlf.txt": bom + "a\r\nb\r\n"})
	if err := os.Chmod(filepath.Join(env.Root, "crlf.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := applyEdit(t, env, run(t, WriteFile{}, env, map[string]any{"path": "crlf.txt", "content": "x\ny\n"}))
	if got != bom+"x\r\ny\r\n" {
		t.Errorf("overwrite = %q", got)
	}
	if fi, _ := os.Stat(filepath.Join(env.Root, "crlf.txt")); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v", fi.Mode())
	}
	res := run(t, WriteFile{}, env, map[string]any{"path": "d1/d2/new.txt", "content": "new\n"})
	if got := applyEdit(t, env, res); got != "new\n" || !res.Edit.Created {
		t.Errorf("create = %q, %+v", got, res.Edit)
	}
	mustOK(t, run(t, WriteFile{}, env, map[string]any{"path": "d1/d2/new.txt", "content": "new\n"}))
	mustToolError(t, run(t, WriteFile{}, env, map[string]any{"path": "d1", "content": "x"}), "is a directory")
	mustToolError(t, run(t, WriteFile{}, env, map[string]any{"path": "/etc/passwd", "content": "x"}), "outside")
	mustToolError(t, run(t, WriteFile{}, env, map[string]any{"content": "x"}), "empty path")
	mustToolError(t, run(t, WriteFile{}, env, map[string]any{"path": ".", "content": "x"}), "workspace root")
}

func TestWriteFileAtomicRefusals(t *testing.T) {
	env := editEnv(t, map[string]string{"f": "one\n"})
	res := mustOK(t, run(t, EditFile{}, env, map[string]any{"path": "f", "old_string": "one", "new_string": "two"}))
	// The file changed on disk after the edit was computed.
	writeFiles(t, env.Root, map[string]string{"f": "user typed\n"})
	if err := WriteFileAtomic(res.Edit); err == nil || !strings.Contains(err.Error(), "changed since") {
		t.Fatalf("conflict not detected: %v", err)
	}
	// A directory replaced by a symlink pointing out after the edit.
	res = mustOK(t, run(t, WriteFile{}, env, map[string]any{"path": "dir/new", "content": "x"}))
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(env.Root, "dir")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(res.Edit); err == nil {
		t.Fatal("wrote through a symlink pointing out")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("files written outside: %v", entries)
	}
	// Path and RelPath that disagree.
	bad := *res.Edit
	bad.RelPath = "../x"
	if err := WriteFileAtomic(&bad); err == nil {
		t.Fatal("accepted a relative path escaping the root")
	}
}

func BenchmarkEditFile10MB(b *testing.B) {
	env := newEnv(b)
	var sb strings.Builder
	for i := 0; sb.Len() < 10<<20; i++ {
		sb.WriteString("line ")
		sb.WriteString(strings.Repeat("x", i%70))
		sb.WriteString(" end\n")
	}
	sb.WriteString("the unique needle line\n")
	for i := 0; i < 1000; i++ {
		sb.WriteString("tail line\n")
	}
	writeFiles(b, env.Root, map[string]string{"big.txt": sb.String()})
	mustOK(b, run(b, ReadFile{}, env, map[string]any{"path": "big.txt", "limit": 1}))
	args := map[string]any{"path": "big.txt", "old_string": "the unique needle line", "new_string": "the changed needle line"}
	b.SetBytes(int64(sb.Len()))
	b.ResetTimer()
	for b.Loop() {
		res := run(b, EditFile{}, env, args)
		if res.IsError || len(res.Edit.TextEdits) == 0 {
			b.Fatalf("%+v", res.Text)
		}
	}
}

// The windowed diff equals go-udiff's diff of the whole text.
func TestUnifiedDiffWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		var lines []string
		for i := range 5 + rng.IntN(40) {
			lines = append(lines, fmt.Sprintf("line %d\n", i))
		}
		a := strings.Join(lines, "")
		for range 1 + rng.IntN(3) {
			i := rng.IntN(len(lines))
			switch rng.IntN(3) {
			case 0:
				lines[i] = "changed\n"
			case 1:
				lines = append(lines[:i], lines[i+1:]...)
			default:
				lines = append(lines[:i], append([]string{"inserted\n"}, lines[i:]...)...)
			}
		}
		b := strings.Join(lines, "")
		if rng.IntN(4) == 0 {
			b = strings.TrimSuffix(b, "\n")
		}
		edits := byteEdits(a, b)
		want, err := udiff.ToUnified("a/f", "b/f", a, edits, 3)
		if err != nil {
			t.Fatal(err)
		}
		if got := unifiedDiff("a/f", "b/f", a, edits); got != want {
			t.Fatalf("diff of %q -> %q:\n%s\nwant\n%s", a, b, got, want)
		}
	}
}

// TestDiffOfOneLineInsertIsOneLine: inserting a line that shares its
// start with the next one ("line1.5" before "line2") shows as one added
// line, not the next line removed and two added; every diff shown still
// applies to the old text to give the new one.
func TestDiffOfOneLineInsertIsOneLine(t *testing.T) {
	e := newEdit("/w", "/w/f.txt", false, "line1\nline2\nline3\n", "line1\nline1.5\nline2\nline3\n", 0o644)
	var plus, minus []string
	for _, l := range strings.Split(e.Diff, "\n") {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		case strings.HasPrefix(l, "+"):
			plus = append(plus, l)
		case strings.HasPrefix(l, "-"):
			minus = append(minus, l)
		}
	}
	if len(plus) != 1 || plus[0] != "+line1.5" || len(minus) != 0 {
		t.Fatalf("diff of a one-line insert: +%q -%q\n%s", plus, minus, e.Diff)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 300 {
		var lines []string
		for i := range 3 + rng.IntN(20) {
			lines = append(lines, fmt.Sprintf("item %d\n", i%4))
		}
		a := strings.Join(lines, "")
		i := rng.IntN(len(lines))
		lines = append(lines[:i], append([]string{fmt.Sprintf("item %d extra\n", rng.IntN(4))}, lines[i:]...)...)
		b := strings.Join(lines, "")
		edits := lineDiffEdits(a, b)
		got, err := udiff.Apply(a, edits)
		if err != nil || got != b {
			t.Fatalf("line edits of %q -> %q do not apply: %v %q", a, b, err, got)
		}
		if d := unifiedDiff("a/f", "b/f", a, edits); strings.Count(d, "\n+") != 2 || strings.Count(d, "\n-") != 0 { // "\n+++" and the line
			t.Fatalf("one inserted line, diff:\n%s", d)
		}
	}
}
