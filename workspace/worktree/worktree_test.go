package worktree

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/loom-lsp/loom-lsp/config"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteReplacesCreatesDeletes(t *testing.T) {
	root := t.TempDir()
	w := New(root)
	var recorded []string
	w.Record = func(abs string, content []byte, present bool) { recorded = append(recorded, abs) }
	write(t, filepath.Join(root, "a.txt"), "old\r\n")
	os.Chmod(filepath.Join(root, "a.txt"), 0o755)
	if err := w.Write(Change{Rel: "a.txt", Expect: Text("old\r\n"), New: Text("\uFEFFnew\r\n")}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(root, "a.txt")); got != "\uFEFFnew\r\n" {
		t.Fatalf("a.txt = %q", got)
	}
	if st, _ := os.Stat(filepath.Join(root, "a.txt")); st.Mode().Perm() != 0o755 {
		t.Fatalf("mode %v, want 0755 kept", st.Mode())
	}
	if err := w.Write(Change{Rel: "d/e/new.txt", New: Text("x"), Mode: 0o600}); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(filepath.Join(root, "d/e/new.txt")); st.Mode().Perm() != 0o600 {
		t.Fatalf("new file mode %v", st.Mode())
	}
	if err := w.Write(Change{Rel: "d/e/new.txt", Expect: Text("x"), New: Absent}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(root, "d/e/new.txt")); !os.IsNotExist(err) {
		t.Fatalf("not deleted: %v", err)
	}
	if len(recorded) != 3 {
		t.Fatalf("recorded %v", recorded)
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".loom-") {
			t.Fatalf("temporary file left: %s", e.Name())
		}
	}
}

func TestWriteLeavesAChangedFile(t *testing.T) {
	root := t.TempDir()
	w := New(root)
	write(t, filepath.Join(root, "a.txt"), "the user's save")
	err := w.Write(Change{Rel: "a.txt", Expect: Text("what loom read"), New: Text("loom's")})
	if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "a.txt") {
		t.Fatalf("err = %v", err)
	}
	if got := read(t, filepath.Join(root, "a.txt")); got != "the user's save" {
		t.Fatalf("overwritten: %q", got)
	}
	// A file that appeared is not overwritten; one that went is not made.
	if err := w.Write(Change{Rel: "a.txt", New: Text("loom's")}); !errors.Is(err, ErrChanged) {
		t.Fatalf("create over an existing file: %v", err)
	}
	if err := w.Write(Change{Rel: "b.txt", Expect: Text("x"), New: Text("y")}); !errors.Is(err, ErrChanged) {
		t.Fatalf("write over a deleted file: %v", err)
	}
	if err := w.Write(Change{Rel: "a.txt", Expect: Text("x"), New: Absent}); !errors.Is(err, ErrChanged) {
		t.Fatalf("delete of a changed file: %v", err)
	}
	if got := read(t, filepath.Join(root, "a.txt")); got != "the user's save" {
		t.Fatalf("deleted or overwritten: %q", got)
	}
}

func TestWriteRefusesLinksAndProtectedNames(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	w := New(root)
	write(t, filepath.Join(outside, "aliases"), "mine")
	if err := os.Symlink(outside, filepath.Join(root, "dir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "aliases"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(root, "in"), 0o755)
	os.Symlink("../in", filepath.Join(root, "in-link")) // a link that stays inside is refused too
	for _, c := range []Change{
		{Rel: "dir/aliases", Expect: Text("mine"), New: Text("evil")},
		{Rel: "dir/new", New: Text("evil")},
		{Rel: "dir/sub/new", New: Text("evil")},
		{Rel: "dir/aliases", Expect: Text("mine"), New: Absent},
		{Rel: "link", Expect: Text("mine"), New: Text("evil")},
		{Rel: "in-link/x", New: Text("x")},
	} {
		err := w.Write(c)
		if !errors.Is(err, ErrSymlink) || !strings.Contains(err.Error(), strings.Split(c.Rel, "/")[0]) {
			t.Errorf("%s: err = %v, want ErrSymlink naming it", c.Rel, err)
		}
	}
	if got := read(t, filepath.Join(outside, "aliases")); got != "mine" {
		t.Fatalf("written outside: %q", got)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Fatalf("files made outside: %v", entries)
	}
	for _, rel := range []string{".git/config", "sub/.GIT/hooks/pre-commit", ".loom.toml", "a/.vscode/settings.json", "../x", "/etc/passwd", "a/../b", ""} {
		err := w.Write(Change{Rel: rel, New: Text("x")})
		if err == nil || !(errors.Is(err, ErrGitDir) || errors.Is(err, config.ErrProtected) || errors.Is(err, ErrOutside)) {
			t.Errorf("%q: err = %v", rel, err)
		}
	}
}

func TestReadDoesNotFollowLinks(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	write(t, filepath.Join(outside, "secret"), "s")
	os.Symlink(outside, filepath.Join(root, "d"))
	if _, _, err := New(root).Read("d/secret"); !errors.Is(err, ErrSymlink) {
		t.Fatalf("err = %v", err)
	}
	write(t, filepath.Join(root, "f"), "text")
	if v, _, err := New(root).Read("f"); err != nil || v != Text("text") {
		t.Fatalf("%v %v", v, err)
	}
	if v, _, err := New(root).Read("none/f"); err != nil || v.Present {
		t.Fatalf("%v %v", v, err)
	}
}

// TestRootThroughALink: the folder itself may be reached through a link.
func TestRootThroughALink(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "ws")
	os.Symlink(real, link)
	if err := New(link).Write(Change{Rel: "a/b.txt", New: Text("x")}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(real, "a/b.txt")); got != "x" {
		t.Fatal(got)
	}
}

// TestWalkDir: the component walk (darwin, and where openat2 is refused)
// never follows a link and creates missing directories.
func TestWalkDir(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	os.Symlink(outside, filepath.Join(root, "link"))
	os.MkdirAll(filepath.Join(root, "a"), 0o755)
	os.Symlink(outside, filepath.Join(root, "a", "link"))
	rfd, err := openRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(rfd)
	for _, dir := range []string{"link", "link/sub", "a/link/sub"} {
		if _, err := walkDir(rfd, dir, true); !errors.Is(err, ErrSymlink) {
			t.Errorf("%s: err = %v, want ErrSymlink", dir, err)
		}
	}
	if _, err := walkDir(rfd, "x/y", false); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing without create: %v", err)
	}
	fd, err := walkDir(rfd, "x/y", true)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(fd)
	if st, err := os.Lstat(filepath.Join(root, "x/y")); err != nil || !st.IsDir() {
		t.Fatalf("x/y not made: %v", err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("made outside: %v", entries)
	}
}

// TestWriteAll: each change is applied or refused on its own.
func TestWriteAll(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "a"), "a")
	write(t, filepath.Join(root, "b"), "the user's")
	errs := New(root).WriteAll([]Change{
		{Rel: "a", Expect: Text("a"), New: Text("A")},
		{Rel: "b", Expect: Text("b"), New: Text("B")},
		{Rel: "c/d", New: Text("D")},
		{Rel: ".git/x", New: Text("x")},
	})
	if errs[0] != nil || !errors.Is(errs[1], ErrChanged) || errs[2] != nil || !errors.Is(errs[3], ErrGitDir) {
		t.Fatalf("errs %v", errs)
	}
	for rel, want := range map[string]string{"a": "A", "b": "the user's", "c/d": "D"} {
		if got := read(t, filepath.Join(root, rel)); got != want {
			t.Errorf("%s = %q", rel, got)
		}
	}
}
