package worktree

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sync"
	"testing"

	"pgregory.net/rapid"
)

// snapshot lists every entry under dir: a file's content, a link's
// target, "dir" for a directory.
func snapshot(t interface{ Fatal(...any) }, dir string) map[string]string {
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			out[p] = "link " + l
		case d.IsDir():
			out[p] = "dir"
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[p] = "file " + string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var (
	names = []string{"a", "b", "f"}
	paths = func() []string {
		var out []string
		for _, x := range names {
			out = append(out, x)
			for _, y := range names {
				out = append(out, x+"/"+y)
				for _, z := range names {
					out = append(out, x+"/"+y+"/"+z)
				}
			}
		}
		return out
	}()
)

// buildTree makes a random tree under root with links to outside (a
// directory and a file), links inside, files and directories.
func buildTree(t *rapid.T, root, outside string) {
	n := rapid.IntRange(0, 12).Draw(t, "ops")
	for i := 0; i < n; i++ {
		p := filepath.Join(root, filepath.FromSlash(rapid.SampledFrom(paths).Draw(t, "path")))
		switch rapid.IntRange(0, 5).Draw(t, "op") {
		case 0:
			os.MkdirAll(p, 0o755)
		case 1:
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(rapid.SampledFrom([]string{"x", "y", ""}).Draw(t, "text")), 0o644)
		case 2:
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.Symlink(outside, p)
		case 3:
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.Symlink(filepath.Join(outside, "file"), p)
		case 4:
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.Symlink(root, p)
		case 5:
			q := filepath.Join(root, filepath.FromSlash(rapid.SampledFrom(paths).Draw(t, "to")))
			os.MkdirAll(filepath.Dir(q), 0o755)
			os.Rename(p, q)
		}
	}
}

// TestWriterProperty: for random trees with links, renames, and another
// writer acting between the comparison and the rename, no byte is
// written outside the root and no write lands on a file whose content
// differed from the expected one.
func TestWriterProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		base, err := os.MkdirTemp("", "worktree-prop-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(base)
		root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
		os.MkdirAll(root, 0o755)
		os.MkdirAll(filepath.Join(outside, "x"), 0o755)
		os.WriteFile(filepath.Join(outside, "file"), []byte("outside"), 0o644)
		buildTree(t, root, outside)
		before := snapshot(t, outside)
		w := New(root)
		rel := rapid.SampledFrom(paths).Draw(t, "target")
		cur, _, rerr := w.Read(rel)
		expect := cur
		if rapid.Bool().Draw(t, "wrong expectation") {
			expect = rapid.SampledFrom([]Version{Absent, Text("x"), Text("z")}).Draw(t, "expect")
		}
		next := rapid.SampledFrom([]Version{Absent, Text("loom"), Text("")}).Draw(t, "new")
		abs := filepath.Join(root, filepath.FromSlash(rel))
		interfere := rapid.IntRange(0, 4).Draw(t, "interference")
		interfered := false
		beforeRename = func() {
			interfered = true
			switch interfere {
			case 1: // the user saves
				os.WriteFile(abs, []byte("user"), 0o644)
			case 2: // the user deletes it
				os.Remove(abs)
			case 3: // a command swaps the parent for a link to outside
				dir := filepath.Dir(abs)
				if dir != root {
					os.Rename(dir, dir+".moved")
					os.Symlink(outside, dir)
				}
			case 4: // a command makes the file a link to outside
				os.Remove(abs)
				os.Symlink(filepath.Join(outside, "file"), abs)
			}
		}
		defer func() { beforeRename = nil }()
		err = w.Write(Change{Rel: rel, Expect: expect, New: next})
		if after := snapshot(t, outside); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("outside changed: %v -> %v (err %v)", before, after, err)
		}
		if rerr == nil && expect != cur && cur != next && err == nil {
			t.Fatalf("wrote %s over %v, expecting %v", rel, cur, expect)
		}
		if !interfered || err != nil {
			return
		}
		// The file was changed under the write: the write must fail, and
		// leave it as the other writer did.
		if interfere == 1 || interfere == 4 || interfere == 2 && expect.Present {
			t.Fatalf("write of %s succeeded over interference %d", rel, interfere)
		}
	})
}

// TestWriterConcurrent runs writes while another goroutine swaps
// directories for links to outside: nothing outside changes.
func TestWriterConcurrent(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(outside, "file"), []byte("outside"), 0o644)
	before := snapshot(t, outside)
	w := New(root)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			d := filepath.Join(root, "d")
			if i%2 == 0 {
				os.RemoveAll(d)
				os.Symlink(outside, d)
			} else {
				os.Remove(d)
				os.MkdirAll(d, 0o755)
			}
		}
	}()
	for i := 0; i < 300; i++ {
		rel := path.Join("d", fmt.Sprint("f", i%3))
		cur, _, err := w.Read(rel)
		if err != nil && !errors.Is(err, ErrSymlink) {
			continue
		}
		w.Write(Change{Rel: rel, Expect: cur, New: Text(fmt.Sprint("loom ", i))})
		w.Write(Change{Rel: rel, Expect: Text(fmt.Sprint("loom ", i)), New: Absent})
	}
	close(stop)
	wg.Wait()
	if after := snapshot(t, outside); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("outside changed: %v", after)
	}
}
