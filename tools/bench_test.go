package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// genTree writes n Go-like files of about 2 KB (200 directories), one in
// 100 holding "needle", and commits them to a new git repo.
func genTree(b *testing.B, n int) *Env {
	b.Helper()
	env := newEnv(b)
	for i := range n {
		var sb strings.Builder
		fmt.Fprintf(&sb, "package p%d\n\nimport \"fmt\"\n\n", i/100)
		for j := range 30 {
			fmt.Fprintf(&sb, "func F%d_%d(x int) int { return fmt.Sprint(x*%d) + %q }\n", i, j, j, "some text here")
		}
		if i%100 == 7 {
			sb.WriteString("// needle: the thing we look for\nfunc needleHandler() {}\n")
		}
		p := filepath.Join(env.Root, fmt.Sprintf("d%03d", i%200), fmt.Sprintf("f%05d.go", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	git(b, env.Root, "init", "-q")
	// No background gc: it would race the temporary directory's cleanup
	// (".git/objects: directory not empty") and the timings.
	git(b, env.Root, "config", "gc.auto", "0")
	git(b, env.Root, "add", ".")
	git(b, env.Root, "commit", "-qm", "tree")
	return env
}

func benchTool(b *testing.B, env *Env, tool Tool, args string, want string) {
	b.ReportAllocs()
	for b.Loop() {
		res, err := tool.Run(context.Background(), env, json.RawMessage(args))
		if err != nil || res.IsError || !strings.Contains(res.Text, want) {
			b.Fatalf("%v %s", err, truncate(res.Text, 300))
		}
	}
}

func benchCmd(b *testing.B, dir, want string, name string, args ...string) {
	if _, err := exec.LookPath(name); err != nil {
		b.Skipf("%s not installed", name)
	}
	b.ReportAllocs()
	for b.Loop() {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil || !strings.Contains(string(out), want) {
			b.Fatalf("%s: %v %s", name, err, truncate(string(out), 300))
		}
	}
}

// BenchmarkTree20k compares grep and list_files with git grep, git
// ls-files and rg (when installed) on the same 20,000-file tree.
func BenchmarkTree20k(b *testing.B) {
	env := genTree(b, 20_000)
	const lit, re = "needle", `func \w+Handler\(`
	b.Run("grep/literal/tools", func(b *testing.B) {
		benchTool(b, env, Grep{}, `{"pattern":"needle"}`, "200 more matching lines")
	})
	b.Run("grep/literal/git-grep", func(b *testing.B) {
		benchCmd(b, env.Root, "d007/f00007.go:", "git", "grep", "-n", "-I", "-e", lit)
	})
	b.Run("grep/literal/rg", func(b *testing.B) {
		benchCmd(b, env.Root, "d007/f00007.go:", "rg", "-n", "--sort", "path", "-e", lit)
	})
	b.Run("grep/regexp/tools", func(b *testing.B) {
		benchTool(b, env, Grep{}, `{"pattern":"func \\w+Handler\\("}`, "d007/f00007.go:")
	})
	b.Run("grep/regexp/git-grep", func(b *testing.B) {
		benchCmd(b, env.Root, "d007/f00007.go:", "git", "grep", "-n", "-I", "-E", "-e", `func [[:alnum:]_]+Handler\(`)
	})
	b.Run("grep/regexp/rg", func(b *testing.B) {
		benchCmd(b, env.Root, "d007/f00007.go:", "rg", "-n", "--sort", "path", "-e", re)
	})
	b.Run("list/tools", func(b *testing.B) {
		benchTool(b, env, ListFiles{}, `{}`, "19000 more files not shown")
	})
	b.Run("list/tools-pattern", func(b *testing.B) {
		benchTool(b, env, ListFiles{}, `{"pattern":"d1*/f001*.go"}`, "d100/f00100.go")
	})
	b.Run("list/git-ls-files", func(b *testing.B) {
		benchCmd(b, env.Root, "d000/f00000.go", "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	})
	b.Run("list/rg-files", func(b *testing.B) {
		benchCmd(b, env.Root, "d000/f00000.go", "rg", "--files", "--sort", "path")
	})
}

// BenchmarkListFilesVsGit20k runs list_files (no pattern) and a bare `git
// ls-files` alternately on the same 20,000-file tree and reports the
// ratio of their times (goal: <= 1.2), so that load on a shared machine
// weighs on both alike.
func BenchmarkListFilesVsGit20k(b *testing.B) {
	env := genTree(b, 20_000)
	var tool, bare time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		res, err := ListFiles{}.Run(context.Background(), env, json.RawMessage(`{}`))
		if err != nil || !strings.Contains(res.Text, "19000 more files not shown") {
			b.Fatalf("%v %s", err, truncate(res.Text, 300))
		}
		t1 := time.Now()
		cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
		cmd.Dir = env.Root
		if out, err := cmd.Output(); err != nil || !bytes.Contains(out, []byte("d000/f00000.go")) {
			b.Fatalf("git ls-files: %v", err)
		}
		tool, bare = tool+t1.Sub(t0), bare+time.Since(t1)
	}
	b.ReportMetric(float64(tool)/float64(bare), "x-git-ls-files")
	b.ReportMetric(float64(tool.Milliseconds())/float64(b.N), "list-ms/op")
	b.ReportMetric(float64(bare.Milliseconds())/float64(b.N), "git-ms/op")
}
