package diagnostics

import (
	"context"
	"errors"
	"github.com/loom-lsp/loom-lsp/internal/goplstest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func goModule(t *testing.T, files map[string]string) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	files["go.mod"] = "module example.com/m\n\ngo 1.22\n"
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// goplsPool runs the real gopls for root: as loom's built-in spec does
// (pull diagnostics) or, with push, waiting for its publications.
func goplsPool(t *testing.T, root string, push bool) *Pool {
	gopls := goplstest.Path(t)
	var servers []ServerSpec
	if push {
		spec := DefaultServers[0]
		spec.InitOptions = nil
		servers = []ServerSpec{spec}
	}
	p := NewPool(PoolOptions{Root: root, Env: os.Environ(), Servers: servers, LookPath: func(name string) (string, error) {
		if name == "gopls" {
			return gopls, nil
		}
		return "", exec.ErrNotFound
	}})
	t.Cleanup(p.Close)
	return p
}

const helloGo = "package main\n\n// Pre-existing problem, left alone by the edit.\nvar _ = missing\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"

// TestGoplsIntroduced runs a real gopls: the edit that uses an undefined
// name is reported, the problem that was there before is not, and the
// fix is followed by none.
func TestGoplsIntroduced(t *testing.T) {
	for _, push := range []bool{false, true} {
		t.Run(map[bool]string{false: "pull", true: "push"}[push], func(t *testing.T) { goplsIntroduced(t, push) })
	}
}

func goplsIntroduced(t *testing.T, push bool) {
	root := goModule(t, map[string]string{"main.go": helloGo})
	p := goplsPool(t, root, push)
	path := filepath.Join(root, "main.go")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	before, err := p.Diagnostics(ctx, path, helloGo)
	if err != nil {
		t.Fatalf("before: %v", err)
	}
	if len(before) != 1 || !strings.Contains(before[0].Message, "missing") {
		t.Fatalf("before: want the pre-existing 'undefined: missing', got %+v", before)
	}
	broken := strings.Replace(helloGo, `println("hi")`, `println(x)`, 1)
	after, err := p.Diagnostics(ctx, path, broken)
	if err != nil {
		t.Fatalf("after: %v", err)
	}
	fresh := Introduced(before, after)
	if len(fresh) != 1 || !strings.Contains(fresh[0].Message, "undefined: x") || fresh[0].Line != 7 || fresh[0].Severity != SeverityError {
		t.Fatalf("introduced: want undefined: x at line 7, got %+v (after: %+v)", fresh, after)
	}
	got := Format([]Report{{Path: "main.go", New: fresh}}, DefaultLimits)
	if !strings.Contains(got, "main.go:7:10: error: undefined: x") || strings.Contains(got, "missing") {
		t.Fatalf("format:\n%s", got)
	}
	fixed, err := p.Diagnostics(ctx, path, helloGo)
	if err != nil {
		t.Fatalf("fixed: %v", err)
	}
	if fresh := Introduced(before, fixed); len(fresh) != 0 {
		t.Fatalf("after the fix: want nothing new, got %+v", fresh)
	}
	// The same text again is answered from what the server said.
	again, err := p.Diagnostics(ctx, path, helloGo)
	if err != nil || len(again) != 1 {
		t.Fatalf("same text again: %v %+v", err, again)
	}
	if names := p.Running(); len(names) != 1 || names[0] != "gopls" {
		t.Fatalf("running: %v", names)
	}
	if s, _, err := p.server(path); err != nil || s.pull == push {
		t.Fatalf("gopls answers pulls: %v, want %v (%v)", s != nil && s.pull, !push, err)
	}
	p.Close()
	if names := p.Running(); len(names) != 0 {
		t.Fatalf("running after close: %v", names)
	}
}

func TestNoServerIsSilence(t *testing.T) {
	p := NewPool(PoolOptions{Root: t.TempDir(), LookPath: func(string) (string, error) { return "", exec.ErrNotFound }})
	defer p.Close()
	start := time.Now()
	_, err := p.Diagnostics(context.Background(), "/x/a.go", "package a")
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("want ErrUnavailable, got %v", err)
	}
	if _, err := p.Diagnostics(context.Background(), "/x/a.txt", "hi"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("want ErrUnavailable for a file no server checks, got %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("a missing server took %v", d)
	}
}
