package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestSandboxProtectsNamesNotFiles: a protected name is kept from
// commands as a name, not as a file: the directory above it cannot be
// swapped (mv .vscode .vscode.old && mkdir .vscode && echo … >
// .vscode/settings.json), a missing protected file cannot be created in
// its existing directory, and nested repositories' and submodules' .git
// are read-only like the top one (a planted core.fsmonitor there would
// run in the user's own git status). Ordinary work goes on: new
// directories at the top, renames of other folders.
func TestSandboxProtectsNamesNotFiles(t *testing.T) {
	w := newWorld(t)
	os.RemoveAll(w.ws)
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	for _, f := range []string{".vscode/settings.json", ".zed/tasks.json", ".github/workflows/ci.yml", "src/a.go", "nested/x", ".codex/config.toml"} {
		p := filepath.Join(w.ws, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("original\n"), 0o644)
	}
	os.MkdirAll(filepath.Join(w.ws, "sub"), 0o755) // a submodule not checked out
	git(w.ws, "init", "-q")
	git(filepath.Join(w.ws, "nested"), "init", "-q")
	git(w.ws, "update-index", "--add", "--cacheinfo", "160000,1111111111111111111111111111111111111111,sub")
	// Submodules whose directory is missing (removed by the user): git
	// status would still go into a repository made there.
	git(w.ws, "update-index", "--add", "--cacheinfo", "160000,1111111111111111111111111111111111111111,gone")
	git(w.ws, "update-index", "--add", "--cacheinfo", "160000,1111111111111111111111111111111111111111,deps/gone")
	// A shared configuration file of the worktree, included by the
	// repository's own .git/config (existing, and one not made yet).
	os.WriteFile(filepath.Join(w.ws, ".gitconfig"), []byte("[core]\n"), 0o644)
	os.MkdirAll(filepath.Join(w.ws, "conf"), 0o755)
	git(w.ws, "config", "include.path", "../.gitconfig")
	git(w.ws, "config", "--add", "include.path", "../conf/local.cfg")
	// A submodule checked out: its .git is a file naming .git/modules/lib.
	lib := filepath.Join(w.other, "lib")
	os.MkdirAll(lib, 0o755)
	git(lib, "init", "-q")
	git(lib, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "lib")
	git(w.ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "lib")
	s := New(Policy{Root: w.ws})
	requireLandlock(t, s)
	if !s.sys.userns {
		t.Skipf("no user namespaces here: %s", s.sys.why)
	}
	for _, tc := range []struct {
		name, script, path string
		allowed            bool
	}{
		{"settings directory swapped", "mv .vscode .vscode.old && mkdir .vscode && echo new > .vscode/settings.json", ".vscode/settings.json", false},
		{"settings directory removed", "rm -rf .vscode && mkdir .vscode && echo new > .vscode/settings.json", ".vscode/settings.json", false},
		{"missing settings created", "echo new > .zed/settings.json", ".zed/settings.json", false},
		{"settings directory of a missing file swapped", "mv .zed .zed.old && mkdir .zed && echo new > .zed/settings.json", ".zed/settings.json", false},
		{"hooks directory created", "mkdir -p .github/hooks && echo new > .github/hooks/h.json", ".github/hooks/h.json", false},
		{"codex directory written", "echo new >> .codex/config.toml", ".codex/config.toml", false},
		{"nested repository config", "echo new >> nested/.git/config", "nested/.git/config", false},
		{"nested repository swapped", "mv nested/.git nested/.git.old && git -C nested init -q && echo new >> nested/.git/config", "nested/.git/config", false},
		{"nested repository moved", "mv nested nested.old && mkdir -p nested/.git && echo new > nested/.git/config", "nested/.git/config", false},
		{"submodule git dir created", "mkdir sub/.git && echo new > sub/.git/config", "sub/.git/config", false},
		{"missing submodule directory made a repository", "mkdir -p gone/.git && echo new > gone/.git/config", "gone/.git/config", false},
		{"included configuration written", `printf '[filter "x"]\n\tclean = touch /tmp/x\n' >> .gitconfig`, ".gitconfig", false},
		{"included configuration not made yet", `printf '[filter "x"]\n\tclean = touch /tmp/x\n' > conf/local.cfg`, "conf/local.cfg", false},
		{"missing submodule's parent made", "mkdir -p deps/gone/.git && echo new > deps/gone/.git/config", "deps/gone/.git/config", false},
		{"submodule's .git file rewritten", "printf 'gitdir: ../evil\\n' > lib/.git", "lib/.git", false},
		{"submodule's .git file replaced", "rm -f lib/.git && mkdir lib/.git && echo new > lib/.git/config", "lib/.git/config", false},
		{"submodule's config", "echo new >> .git/modules/lib/config", ".git/modules/lib/config", false},
		{"submodule moved", "mv lib lib.old && mkdir -p lib/.git && echo new > lib/.git/config", "lib/.git/config", false},
		{"a new top-level directory", "mkdir build && echo new > build/x", "build/x", true},
		{"a folder renamed", "mv src src2 && mkdir src && echo new > src/a.go", "src/a.go", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(w.ws, tc.path)
			before, _ := os.ReadFile(path)
			out, code := sh(t, s, w.ws, tc.script)
			after, _ := os.ReadFile(path)
			changed := string(before) != string(after)
			if tc.allowed != (code == 0 && changed) {
				t.Fatalf("%q: exit %d, changed %v (want allowed: %v), output %q", tc.script, code, changed, tc.allowed, out)
			}
		})
	}
}

// TestMkdirBeneathFollowsNoLink: a submodule's missing directory is made
// again without following a link a command put in its path: a parent
// that is a symbolic link to a directory outside makes nothing there.
func TestMkdirBeneathFollowsNoLink(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "deps")); err != nil {
		t.Fatal(err)
	}
	if err := mkdirBeneath(root, "deps/gone"); err == nil {
		t.Error("made a directory through a symbolic link")
	}
	if _, err := os.Lstat(filepath.Join(outside, "gone")); err == nil {
		t.Fatal("a directory was made outside the folder")
	}
	if err := mkdirBeneath(root, "a/b"); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(root, "a", "b")); err != nil || !st.IsDir() {
		t.Fatalf("a/b: %v", err)
	}
}
