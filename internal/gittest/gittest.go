// Package gittest makes real git repositories for tests.
package gittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Run runs git in dir and returns its combined output, failing the test
// on error. Author and committer are fixed, whatever the machine's config.
func Run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// Repo makes a repository in a new temporary directory, with a user name
// and email of its own (the code under test commits with plain git), and
// one commit holding files (none when files is empty). It returns the
// directory.
func Repo(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	Run(t, dir, "init", "-q", "-b", "main")
	Run(t, dir, "config", "user.name", "Test")
	Run(t, dir, "config", "user.email", "test@example.com")
	// No background gc racing the temporary directory's cleanup.
	Run(t, dir, "config", "gc.auto", "0")
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if len(files) > 0 {
		Run(t, dir, "add", "-A")
		Run(t, dir, "commit", "-q", "-m", "initial")
	}
	return dir
}
