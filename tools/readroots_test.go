package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readRootWorld is a home with a secret, a workspace, and a shared folder
// next to it (a read root) holding a symlink that points back out and a
// .git directory; HOME points at the home.
func readRootWorld(t *testing.T) (env *Env, home, shared string) {
	t.Helper()
	env = newEnv(t)
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, shared = filepath.Join(base, "home"), filepath.Join(base, "home", "shared")
	writeFiles(t, home, map[string]string{".ssh/id_rsa": "PRIVATE KEY\n", "notes.txt": "home notes\n"})
	writeFiles(t, shared, map[string]string{"lib/util.go": "package lib // needle\n", "README": "shared readme\n", ".git/config": "[core]\n"})
	if err := os.Symlink(filepath.Join(home, ".ssh"), filepath.Join(shared, "keys")); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, env.Root, map[string]string{"main.go": "package main // needle\n"})
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_STATE_HOME", "")
	return env, home, shared
}

// CheckReadRoots refuses what cannot be granted (relative, missing, a
// file, a secret directory) and names it; it resolves symlinks, drops the
// workspace's own folders and repeats.
func TestCheckReadRoots(t *testing.T) {
	env, home, shared := readRootWorld(t)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(shared, link); err != nil {
		t.Fatal(err)
	}
	got, err := CheckReadRoots(env.Root, []string{link, shared, filepath.Join(env.Root, "sub"), env.Root, home}, nil)
	if err == nil {
		t.Fatalf("a missing folder inside the workspace was accepted: %v", got)
	}
	os.Mkdir(filepath.Join(env.Root, "sub"), 0o755)
	got, err = CheckReadRoots(env.Root, []string{link, shared, filepath.Join(env.Root, "sub"), env.Root, home}, nil)
	if err != nil || strings.Join(got, ",") != shared+","+home {
		t.Fatalf("CheckReadRoots = %v, %v; want [%s %s]", got, err, shared, home)
	}
	for _, bad := range []string{"shared", "", filepath.Join(home, "missing"), filepath.Join(home, "notes.txt"), filepath.Join(home, ".ssh")} {
		if got, err := CheckReadRoots(env.Root, []string{bad}, nil); err == nil {
			t.Errorf("CheckReadRoots(%q) = %v, want an error", bad, got)
		}
	}
}

// The read tools read a read root by absolute path, confined to it like
// the workspace: no escape through "..", a symlink or .git, no secret
// directory's file even when the read root holds one; listings and
// matches name its files by absolute path; relative paths stay in the
// workspace; the write tools never write there.
func TestReadRootsReadOnly(t *testing.T) {
	env, home, shared := readRootWorld(t)
	roots, err := CheckReadRoots(env.Root, []string{shared, home}, nil)
	if err != nil {
		t.Fatal(err)
	}
	env.ReadRoots = roots
	res := mustOK(t, run(t, ReadFile{}, env, map[string]any{"path": filepath.Join(shared, "README")}))
	if !strings.Contains(res.Text, "shared readme") {
		t.Errorf("read_file in a read root: %q", res.Text)
	}
	for _, p := range []string{
		filepath.Join(home, ".ssh", "id_rsa"),        // a secret inside a read root
		filepath.Join(shared, "keys", "id_rsa"),      // through a symlink to it
		filepath.Join(shared, ".git", "config"),      // a git directory
		filepath.Join(shared, "..", "..", "etc"),     // out through ..
		"README",                                     // relative: the workspace's
		filepath.Join(filepath.Dir(home), "outside"), // next to the roots
	} {
		if res := run(t, ReadFile{}, env, map[string]any{"path": p}); !res.IsError {
			t.Errorf("read_file %s was allowed: %q", p, res.Text)
		}
	}
	res = mustOK(t, run(t, ListFiles{}, env, map[string]any{"path": home}))
	if !strings.Contains(res.Text, filepath.Join(shared, "lib", "util.go")+"\n") || strings.Contains(res.Text, ".ssh") {
		t.Errorf("list_files of a read root: %q", res.Text)
	}
	res = mustOK(t, run(t, Grep{}, env, map[string]any{"pattern": "needle|PRIVATE", "path": home}))
	if !strings.Contains(res.Text, filepath.Join(shared, "lib", "util.go")+":1:") || strings.Contains(res.Text, "PRIVATE") {
		t.Errorf("grep of a read root: %q", res.Text)
	}
	res = mustOK(t, run(t, Grep{}, env, map[string]any{"pattern": "needle"}))
	if !strings.Contains(res.Text, "main.go:1:") || strings.Contains(res.Text, shared) {
		t.Errorf("grep of the workspace: %q", res.Text)
	}
	target := filepath.Join(shared, "README")
	env.Reads.Record(target, []byte("shared readme\n"))
	if res := run(t, WriteFile{}, env, map[string]any{"path": target, "content": "changed\n"}); !res.IsError {
		t.Errorf("write_file in a read root: %q", res.Text)
	}
	if res := run(t, EditFile{}, env, map[string]any{"path": target, "old_string": "shared", "new_string": "mine"}); !res.IsError || res.Edit != nil {
		t.Errorf("edit_file in a read root: %q", res.Text)
	}
	if data, _ := os.ReadFile(target); string(data) != "shared readme\n" {
		t.Errorf("the read root's file changed: %q", data)
	}
}
