package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	env := newEnv(t)
	var long strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&long, "line %d\n", i)
	}
	writeFiles(t, env.Root, map[string]string{
		"small.txt": "alpha\r\nbeta\n",
		"long.txt":  long.String(),
		"empty":     "",
		"bin":       "ab\x00cd",
		"latin1":    "caf\xe9\n",
		"dir/x":     "x",
	})
	res := mustOK(t, run(t, ReadFile{}, env, map[string]any{"path": "small.txt"}))
	if res.Text != "     1\talpha\n     2\tbeta\n" {
		t.Errorf("small = %q", res.Text)
	}
	res = mustOK(t, run(t, ReadFile{}, env, map[string]any{"path": "long.txt"}))
	if !strings.Contains(res.Text, "  2000\tline 2000\n") || strings.Contains(res.Text, "line 2001\n") ||
		!strings.Contains(res.Text, "showing lines 1-2000 of 3000") || !strings.Contains(res.Text, "offset=2001") {
		t.Errorf("long: %s", res.Text[len(res.Text)-200:])
	}
	res = mustOK(t, run(t, ReadFile{}, env, map[string]any{"path": "long.txt", "offset": 2999, "limit": 5}))
	if !strings.HasPrefix(res.Text, "  2999\tline 2999\n  3000\tline 3000\n") || strings.Contains(res.Text, "offset=") {
		t.Errorf("tail: %q", res.Text)
	}
	// The byte cap stops early and says where to go on.
	small := *env
	small.MaxOutputBytes = 1000
	res = mustOK(t, run(t, ReadFile{}, &small, map[string]any{"path": "long.txt"}))
	if len(res.Text) > 1000 || !strings.Contains(res.Text, "offset=") {
		t.Errorf("capped read: %d bytes: %q", len(res.Text), res.Text)
	}
	if res := mustOK(t, run(t, ReadFile{}, env, map[string]any{"path": "empty"})); !strings.Contains(res.Text, "empty") {
		t.Errorf("empty: %q", res.Text)
	}
	mustToolError(t, run(t, ReadFile{}, env, map[string]any{"path": "bin"}), "binary")
	mustToolError(t, run(t, ReadFile{}, env, map[string]any{"path": "latin1"}), "binary")
	mustToolError(t, run(t, ReadFile{}, env, map[string]any{"path": "nope"}), "file not found")
	mustToolError(t, run(t, ReadFile{}, env, map[string]any{"path": "dir"}), "is a directory")
	mustToolError(t, run(t, ReadFile{}, env, map[string]any{"path": "long.txt", "offset": 5000}), "past the end")
	mustToolError(t, run(t, ReadFile{}, env, map[string]any{"path": "../x"}), "outside")
	mustToolError(t, run(t, ReadFile{}, env, map[string]any{}), "empty path")
	if _, err := (ReadFile{}).Run(context.Background(), env, []byte(`{"path": 3}`)); err != nil {
		t.Errorf("bad JSON gave a Go error: %v", err)
	}
	// Reads are recorded, by resolved absolute path.
	if err := env.Reads.Check(filepath.Join(env.Root, "small.txt"), []byte("alpha\r\nbeta\n")); err != nil {
		t.Errorf("read not recorded: %v", err)
	}
}

// gitTree makes a git repo with tracked, untracked, ignored and deleted
// files and a nested .git-like trap.
func gitTree(t *testing.T) *Env {
	env := newEnv(t)
	writeFiles(t, env.Root, map[string]string{
		".gitignore":       "*.log\nbuild/\n",
		"main.go":          "package main\n\nfunc main() { println(\"Hello\") }\n",
		"lib/util.go":      "package lib\n\n// Hello says hello.\nfunc Hello() {}\n",
		"lib/util_test.go": "package lib\n",
		"docs/readme.md":   "# Hello docs\n",
		"gone.go":          "package gone // Hello\n",
		"build/out.go":     "Hello from build\n",
		"debug.log":        "Hello log\n",
		"bin.dat":          "Hello\x00binary",
		"crlf.txt":         "say Hello\r\nend\r\n",
		"space name.txt":   "Hello spaced\n",
		"ünïcode/ファイル.txt": "Hello unicode\n",
	})
	git(t, env.Root, "init", "-q")
	git(t, env.Root, "add", ".")
	git(t, env.Root, "commit", "-qm", "init")
	os.Remove(filepath.Join(env.Root, "gone.go"))
	writeFiles(t, env.Root, map[string]string{"untracked.go": "package main // Hello\n"})
	return env
}

func TestListFilesGit(t *testing.T) {
	env := gitTree(t)
	res := mustOK(t, run(t, ListFiles{}, env, map[string]any{}))
	want := strings.Join([]string{".gitignore", "bin.dat", "crlf.txt", "docs/readme.md", "lib/util.go", "lib/util_test.go",
		"main.go", "space name.txt", "untracked.go", "ünïcode/ファイル.txt"}, "\n") + "\n"
	if res.Text != want {
		t.Errorf("list_files =\n%s\nwant\n%s", res.Text, want)
	}
	res = mustOK(t, run(t, ListFiles{}, env, map[string]any{"path": "lib", "pattern": "*_test.go"}))
	if !strings.HasPrefix(res.Text, "lib/util_test.go\n") || strings.Contains(res.Text, "lib/util.go\n") {
		t.Errorf("pattern: %q", res.Text)
	}
	res = mustOK(t, run(t, ListFiles{}, env, map[string]any{"pattern": "**/*.{go,md}"}))
	if !strings.Contains(res.Text, "docs/readme.md\n") || !strings.Contains(res.Text, "main.go\n") || strings.Contains(res.Text, "crlf") {
		t.Errorf("brace pattern: %q", res.Text)
	}
	mustToolError(t, run(t, ListFiles{}, env, map[string]any{"path": "nope"}), "no such file")
	mustToolError(t, run(t, ListFiles{}, env, map[string]any{"path": "../.."}), "outside")
	mustToolError(t, run(t, ListFiles{}, env, map[string]any{"pattern": "[abc"}), "invalid glob")
}

func TestListFilesCapAndNoGit(t *testing.T) {
	env := newEnv(t)
	files := map[string]string{".git/HEAD": "x", "sub/.git/config": "x"}
	for i := range listMaxEntries + 5 {
		files[fmt.Sprintf("f%04d.txt", i)] = ""
	}
	writeFiles(t, env.Root, files)
	res := mustOK(t, run(t, ListFiles{}, env, map[string]any{}))
	if strings.Contains(res.Text, ".git/") {
		t.Errorf(".git listed")
	}
	if !strings.Contains(res.Text, "5 more files not shown, 1005 in all") || !strings.Contains(res.Text, "not a git repository") {
		t.Errorf("no cap note: %s", res.Text[len(res.Text)-300:])
	}
	if !strings.HasPrefix(res.Text, "f0000.txt\nf0001.txt\n") {
		t.Errorf("not sorted: %q", res.Text[:40])
	}
}

func TestGrep(t *testing.T) {
	env := gitTree(t)
	res := mustOK(t, run(t, Grep{}, env, map[string]any{"pattern": "Hello"}))
	want := strings.Join([]string{
		"crlf.txt:1: say Hello",
		"docs/readme.md:1: # Hello docs",
		"lib/util.go:3: // Hello says hello.",
		"lib/util.go:4: func Hello() {}",
		`main.go:3: func main() { println("Hello") }`,
		"space name.txt:1: Hello spaced",
		"untracked.go:1: package main // Hello",
		"ünïcode/ファイル.txt:1: Hello unicode",
		"(skipped 1 binary and 0 files over 10 MB)",
	}, "\n") + "\n"
	if res.Text != want {
		t.Errorf("grep =\n%s\nwant\n%s", res.Text, want)
	}
	res = mustOK(t, run(t, Grep{}, env, map[string]any{"pattern": `^func \w+\(\)`, "glob": "*.go"}))
	if !strings.Contains(res.Text, "lib/util.go:4:") || !strings.Contains(res.Text, "main.go:3:") || strings.Contains(res.Text, "readme") {
		t.Errorf("anchored grep: %q", res.Text)
	}
	res = mustOK(t, run(t, Grep{}, env, map[string]any{"pattern": `Hello$`, "path": "crlf.txt"}))
	if !strings.HasPrefix(res.Text, "crlf.txt:1: say Hello\n") {
		t.Errorf("CRLF line end: %q", res.Text)
	}
	res = mustOK(t, run(t, Grep{}, env, map[string]any{"pattern": "(?i)hello", "path": "lib"}))
	if strings.Count(res.Text, "lib/util.go") != 2 || strings.Contains(res.Text, "main.go") {
		t.Errorf("path-limited grep: %q", res.Text)
	}
	if res := mustOK(t, run(t, Grep{}, env, map[string]any{"pattern": "zzz_nothing"})); !strings.HasPrefix(res.Text, "No matches") {
		t.Errorf("no match: %q", res.Text)
	}
	mustToolError(t, run(t, Grep{}, env, map[string]any{"pattern": "a("}), "bad pattern")
	mustToolError(t, run(t, Grep{}, env, map[string]any{"pattern": ""}), "empty")
	mustToolError(t, run(t, Grep{}, env, map[string]any{"pattern": "x", "path": "/etc"}), "outside")
}

func TestGrepCapAndSymlink(t *testing.T) {
	env := newEnv(t)
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"secret": "needle secret\n"})
	var many strings.Builder
	for range grepMaxMatches + 50 {
		many.WriteString("needle\n")
	}
	writeFiles(t, env.Root, map[string]string{"many.txt": many.String()})
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(env.Root, "link")); err != nil {
		t.Fatal(err)
	}
	res := mustOK(t, run(t, Grep{}, env, map[string]any{"pattern": "needle"}))
	if strings.Count(res.Text, "many.txt:") != grepMaxMatches || !strings.Contains(res.Text, "50 more matching lines not shown; 250 in all, in 1 files") {
		t.Errorf("cap: %s", res.Text[len(res.Text)-200:])
	}
	if strings.Contains(res.Text, "secret") {
		t.Errorf("grep followed a symlink out: %s", res.Text)
	}
}

func TestRegistry(t *testing.T) {
	r := DefaultRegistry()
	var names []string
	for _, tool := range r.All() {
		names = append(names, tool.Name())
		if tool.Description() == "" || !json.Valid(tool.Schema()) {
			t.Errorf("%s: missing description or schema", tool.Name())
		}
	}
	if got := strings.Join(names, " "); got != "bash edit_file grep list_files propose_plan read_file update_plan write_file" {
		t.Errorf("All() = %s", got)
	}
	if tool, ok := r.Get("grep"); !ok || tool.Mutating() {
		t.Errorf("Get(grep) = %v, %v", tool, ok)
	}
	specs := r.Specs()
	if !specs["bash"].Mutating || !specs["edit_file"].Mutating || specs["read_file"].Mutating {
		t.Errorf("Specs() = %v", specs)
	}
	defer func() {
		if recover() == nil {
			t.Error("duplicate names did not panic")
		}
	}()
	NewRegistry(Bash{}, Bash{})
}

// overlay is a FileSource with some files open in an editor.
type overlay map[string]string

func (o overlay) ReadFile(abs string) ([]byte, error) {
	if text, ok := o[abs]; ok {
		return []byte(text), nil
	}
	return os.ReadFile(abs)
}

func TestToolsReadTheOverlay(t *testing.T) {
	env := gitTree(t)
	abs := filepath.Join(env.Root, "main.go")
	env.Files = overlay{abs: "package main\n\n// unsaved Buffered text\n"}
	res := mustOK(t, run(t, Grep{}, env, map[string]any{"pattern": "Buffered"}))
	if !strings.HasPrefix(res.Text, "main.go:3: // unsaved Buffered text\n") {
		t.Errorf("grep: %q", res.Text)
	}
	if res := mustOK(t, run(t, ReadFile{}, env, map[string]any{"path": "main.go"})); !strings.Contains(res.Text, "unsaved") {
		t.Errorf("read_file: %q", res.Text)
	}
	res = mustOK(t, run(t, EditFile{}, env, map[string]any{"path": "main.go", "old_string": "unsaved", "new_string": "saved"}))
	if res.Edit.OldText != "package main\n\n// unsaved Buffered text\n" {
		t.Errorf("edit computed against %q", res.Edit.OldText)
	}
}
