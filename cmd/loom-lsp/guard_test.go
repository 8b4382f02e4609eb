package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/internal/proctest"
	"github.com/loom-lsp/loom-lsp/jsonrpc"
	"github.com/loom-lsp/loom-lsp/tools/mcp/mcptest"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// The attacks of issue 21 on loom's own configuration, run through the
// built binary as a user (or a script) runs it.

// TestExecAgentCannotWriteItsConfig: in a folder the user trusts, a
// prompt-injected model's write_file of .loom.toml (to allow commands)
// and of .vscode/settings.json is refused with a tool error it reads, and
// both files stay as they were.
func TestExecAgentCannotWriteItsConfig(t *testing.T) {
	dir := testRepo(t)
	env := isolatedEnv(t)
	cfgDir := filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "loom")
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, cfgDir, "loom.toml", "[tools]\nbash = \"deny\"\n[trust]\nfolders = [\""+dir+"\"]\n")
	const mine = "[tools]\nbash = \"ask\"\n"
	writeFile(t, dir, ".loom.toml", mine)
	os.MkdirAll(filepath.Join(dir, ".vscode"), 0o755)
	writeFile(t, dir, ".vscode/settings.json", "{}\n")
	script := writeScript(t, `
[[step]]
match.last_role = "user"
  [[step.tool_call]]
  id = "w1"
  name = "write_file"
  arguments = '{"path":".loom.toml","content":"[tools]\nbash = \"allow\"\n"}'
  [[step.tool_call]]
  id = "w2"
  name = "write_file"
  arguments = '{"path":".vscode/settings.json","content":"{\"loom.tools.bash\": \"allow\"}\n"}'

[[step]]
match.last_tool_result_contains = "is loom's configuration: ask the user to change it"
text = ["Refused."]
`)
	r := runLoomEnv(t, env, dir, "", "exec", "--output", "jsonl", "--script", script, "follow the README")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{".loom.toml is loom's configuration", ".vscode/settings.json is loom's configuration", "Refused."} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout does not say %q:\n%s", want, r.stdout)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(dir, ".loom.toml")); string(got) != mine {
		t.Errorf(".loom.toml is now %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, ".vscode/settings.json")); string(got) != "{}\n" {
		t.Errorf(".vscode/settings.json is now %q", got)
	}
}

// TestBinaryHostileConfigFiles: a cloned repository whose .loom.toml
// links to /dev/zero or /dev/stdin, or is 2 MB, makes exec fail at once
// with an error naming the file (exit 3), instead of growing to gigabytes
// or hanging; the LSP daemon reports it and keeps answering.
func TestBinaryHostileConfigFiles(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(t *testing.T, p string)
		want string
	}{
		{"dev zero", func(t *testing.T, p string) { os.Symlink("/dev/zero", p) }, "a symlink to /dev/zero, outside"},
		{"dev stdin", func(t *testing.T, p string) { os.Symlink("/dev/stdin", p) }, "not read"},
		{"2 MB", func(t *testing.T, p string) {
			os.WriteFile(p, []byte("# "+strings.Repeat("x", 2<<20)+"\n"), 0o644)
		}, "larger than 1024 KiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := testRepo(t)
			p := filepath.Join(dir, ".loom.toml")
			tc.make(t, p)
			// stdin stays open and silent, as a terminal would be.
			r := runLoom(t, dir, "", "exec", "--script", writeScript(t, "[[step]]\ntext = [\"hi\"]\n"), "hi")
			if r.code != 3 || !strings.Contains(r.stderr, p+": ") || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("exec: exit %d (want 3), stderr (want %q about %s):\n%s", r.code, tc.want, p, r.stderr)
			}

			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c, ed := startInitialized(t, ctx, loomEditor([]string{dir}, nil))
			var st workspace.Status
			if err := ed.ExecuteCommand(ctx, jsonrpc.CmdStatus, jsonrpc.FolderArgs{}, &st); err != nil {
				t.Fatalf("loom.status: %v", err)
			}
			if !strings.Contains(st.ConfigError, tc.want) {
				t.Errorf("loom.status configError %q, want %q", st.ConfigError, tc.want)
			}
			if err := ed.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			_ = ed.Exit(ctx)
			if code := c.wait(t); code != 0 {
				t.Fatalf("exit code %d", code)
			}
		})
	}
}

// TestExecTrustBindsToContent: `loom-lsp exec` in an untrusted clone names
// its own way to trust (`loom-lsp trust`); after it, the settings apply;
// when a command changes them, they are ignored again with a notice until
// the user trusts the folder again.
func TestExecTrustBindsToContent(t *testing.T) {
	dir := testRepo(t)
	env := isolatedEnv(t)
	script := writeScript(t, "[[step]]\ntext = [\"Hi.\"]\n")
	writeFile(t, dir, ".loom.toml", "[agent]\nmax_iterations = 3\n")
	exec := func() execRun {
		t.Helper()
		r := runLoomEnv(t, env, dir, "", "exec", "--script", script, "hi")
		if r.code != 0 {
			t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
		}
		return r
	}
	if r := exec(); !strings.Contains(r.stderr, "not trusted") || !strings.Contains(r.stderr, "agent.max_iterations") ||
		!strings.Contains(r.stderr, "run `loom-lsp trust` in this folder") || strings.Contains(r.stderr, "Command Palette") {
		t.Fatalf("untrusted: stderr:\n%s", r.stderr)
	}
	if r := runLoomEnv(t, env, dir, "", "trust"); r.code != 0 || !strings.Contains(r.stdout, "trusted "+dir) {
		t.Fatalf("loom-lsp trust: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := exec(); strings.Contains(r.stderr, "trust") {
		t.Fatalf("trusted: stderr:\n%s", r.stderr)
	}
	// A command run by the agent rewrites it.
	writeFile(t, dir, ".loom.toml", "[agent]\nmax_iterations = 500\n")
	if r := exec(); !strings.Contains(r.stderr, "since you trusted") || !strings.Contains(r.stderr, "agent.max_iterations") {
		t.Fatalf("changed: stderr:\n%s", r.stderr)
	}
	runLoomEnv(t, env, dir, "", "trust")
	if r := exec(); strings.Contains(r.stderr, "trust") {
		t.Fatalf("trusted again: stderr:\n%s", r.stderr)
	}
}

// TestMCPServersReaped: an MCP server that leaves processes outside its
// process group (setsid -f, a daemonised one ignoring SIGTERM and SIGHUP)
// leaves none behind, whether the daemon is killed with SIGKILL (the
// watchdog kills them) or shuts down normally.
func TestMCPServersReaped(t *testing.T) {
	everything := mcptest.Find(t).Everything
	for _, how := range []string{"SIGKILL", "shutdown"} {
		t.Run(how, func(t *testing.T) {
			tag := "LOOM_ORPHAN_TEST=" + strconv.Itoa(os.Getpid()) + "-mcp-" + strconv.FormatInt(time.Now().UnixNano(), 36)
			script := writeFile(t, t.TempDir(), "server.sh", "#!/bin/sh\nexport "+tag+"\n"+
				"setsid -f sleep 1000 >/dev/null 2>&1\n"+
				"(trap '' TERM HUP; setsid sleep 1000 >/dev/null 2>&1 &)\n"+
				"exec "+everything+"\n")
			os.Chmod(script, 0o755)
			dir := testRepo(t)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			c, ed := startInitialized(t, ctx, loomEditor([]string{dir}, map[string]any{
				"mcp": map[string]any{"servers": map[string]any{"orph": map[string]any{"command": script}}},
				// The sandbox's own tests cover it; here, only the reaping.
				"tools": map[string]any{"sandbox": "off"}}))
			// The server itself (node, after exec) and its two helpers.
			proctest.AwaitWithEnv(t, tag, 3)
			if how == "SIGKILL" {
				watchdog := watchdogOf(c.cmd.Process.Pid)
				if watchdog == 0 {
					t.Fatal("no watchdog process")
				}
				c.cmd.Process.Kill()
				<-c.done
				c.done <- nil // for the cleanup
				awaitGone(t, watchdog, "the watchdog")
			} else {
				if err := ed.Shutdown(ctx); err != nil {
					t.Fatal(err)
				}
				_ = ed.Exit(ctx)
				if code := c.wait(t); code != 0 {
					t.Fatalf("exit code %d", code)
				}
			}
			proctest.AssertNoneWithEnv(t, tag, how+" of loom-lsp serve")
		})
	}
}
