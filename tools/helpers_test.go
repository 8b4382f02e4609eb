package tools

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// newEnv returns an Env rooted at a fresh, symlink-resolved temp dir.
func newEnv(t testing.TB) *Env {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &Env{Root: root, Files: DiskFiles{}, Reads: NewReadTracker()}
}

// writeFiles creates files (relative path -> content) under root.
func writeFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// git runs git in dir with a fixed identity.
func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "commit.gpgsign=false"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// run calls tool with args marshalled from v and fails on a Go error.
func run(t testing.TB, tool Tool, env *Env, v any) Result {
	t.Helper()
	args, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tool.Run(context.Background(), env, args)
	if err != nil {
		t.Fatalf("%s(%s): Go error %v", tool.Name(), args, err)
	}
	return res
}

// mustOK fails unless res is a success.
func mustOK(t testing.TB, res Result) Result {
	t.Helper()
	if res.IsError {
		t.Fatalf("unexpected tool error: %s", res.Text)
	}
	return res
}

// mustToolError fails unless res is a tool error containing every want.
func mustToolError(t testing.TB, res Result, want ...string) {
	t.Helper()
	if !res.IsError || !strings.HasPrefix(res.Text, "tool error: ") {
		t.Fatalf("want a tool error, got %+v", res)
	}
	for _, w := range want {
		if !strings.Contains(res.Text, w) {
			t.Errorf("tool error %q does not contain %q", res.Text, w)
		}
	}
}
