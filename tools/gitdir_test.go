package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gitToken is a credential embedded in a remote URL in .git/config.
const gitToken = "ghp_gitdirTestToken0123456789"

// gitDirRepo makes a repository whose .git/config holds a token, with a
// worktree (a ".git" gitfile), a separate git directory under another
// name, and symlinks into .git.
func gitDirRepo(t *testing.T) *Env {
	t.Helper()
	env := newEnv(t)
	root := env.Root
	writeFiles(t, root, map[string]string{"a.txt": "hello\n", "sub/b.txt": "bye\n"})
	git(t, root, "init", "-q", "-b", "main")
	git(t, root, "remote", "add", "origin", "https://user:"+gitToken+"@example.com/x/y.git")
	git(t, root, "add", "-A")
	git(t, root, "commit", "-q", "-m", "initial")
	git(t, root, "worktree", "add", "-q", "wt")
	// A nested repository whose git directory is "store", not ".git".
	git(t, root, "init", "-q", "--separate-git-dir", filepath.Join(root, "store"), filepath.Join(root, "nested"))
	git(t, filepath.Join(root, "nested"), "remote", "add", "origin", "https://user:"+gitToken+"@example.com/n.git")
	for link, target := range map[string]string{"gitlink": ".git", "cfglink": ".git/config", "sub/up": "../.git"} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	return env
}

func TestGitDirReadsRefused(t *testing.T) {
	env := gitDirRepo(t)
	root := env.Root
	for _, p := range []string{
		".git/config",
		".GIT/config", // the same file on a case-insensitive file system
		".Git/config",
		"a/../.git/config",
		"sub/../.git/config",
		"./.git/config",
		filepath.Join(root, ".git", "config"),
		".git",
		".git/hooks/pre-commit.sample",
		"gitlink/config",
		"cfglink",
		"sub/up/config",
		"wt/.git", // a worktree's gitfile
		"store/config",
		"nested/.git",
	} {
		res := run(t, ReadFile{}, env, map[string]any{"path": p})
		if !res.IsError || !strings.Contains(res.Text, "inside .git") {
			t.Errorf("read_file %q: %s", p, res.Text)
		}
		if strings.Contains(res.Text, gitToken) {
			t.Errorf("read_file %q shows the token", p)
		}
		for _, tool := range []Tool{Grep{}, ListFiles{}} {
			args := map[string]any{"path": p}
			if tool.Name() == "grep" {
				args["pattern"] = "."
			}
			res := run(t, tool, env, args)
			if !res.IsError || strings.Contains(res.Text, gitToken) {
				t.Errorf("%s path %q: %s", tool.Name(), p, res.Text)
			}
		}
	}
	// Reads elsewhere still work, also through a worktree.
	for _, p := range []string{"a.txt", "sub/b.txt", "wt/a.txt"} {
		mustOK(t, run(t, ReadFile{}, env, map[string]any{"path": p}))
	}
}

func TestGitDirNotListedNorSearched(t *testing.T) {
	env := gitDirRepo(t)
	res := mustOK(t, run(t, Grep{}, env, map[string]any{"pattern": "ghp_|url =|HEAD|ref:"}))
	if strings.Contains(res.Text, gitToken) || strings.Contains(res.Text, "url =") {
		t.Errorf("grep searched a git directory:\n%s", res.Text)
	}
	// Without git (a plain walk) too.
	plain := newEnv(t)
	writeFiles(t, plain.Root, map[string]string{
		".git/config": "url = https://u:" + gitToken + "@x\n", ".GIT/config": gitToken + "\n",
		"m/.git": "gitdir: ../store\n", "store/HEAD": "ref: refs/heads/main\n", "store/config": gitToken + "\n",
		"ok.txt": "fine\n",
	})
	for _, d := range []string{"store/objects", "store/refs"} {
		if err := os.MkdirAll(filepath.Join(plain.Root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, env := range []*Env{env, plain} {
		list := mustOK(t, run(t, ListFiles{}, env, map[string]any{}))
		for _, line := range strings.Split(list.Text, "\n") {
			if inGitDir(line) || strings.HasPrefix(line, "store/") {
				t.Errorf("list_files lists %q", line)
			}
		}
		if g := mustOK(t, run(t, Grep{}, env, map[string]any{"pattern": gitToken})); strings.Contains(g.Text, gitToken) {
			t.Errorf("grep found the token:\n%s", g.Text)
		}
	}
}

func TestGitDirWritesRefused(t *testing.T) {
	env := gitDirRepo(t)
	for _, p := range []string{".git/hooks/pre-commit", ".GIT/hooks/x", "store/hooks/pre-commit", "gitlink/hooks/post-commit"} {
		res := run(t, WriteFile{}, env, map[string]any{"path": p, "content": "#!/bin/sh\n"})
		mustToolError(t, res, "inside .git")
	}
}
