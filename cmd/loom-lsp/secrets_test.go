package main

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/internal/proctest"
	"github.com/loom-lsp/loom-lsp/jsonrpc"
	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
)

// keyEchoServer is an OpenAI-compatible server that refuses every
// request with a 401 whose body echoes the Authorization header, as some
// providers and proxies do. It counts the requests that carried want.
func keyEchoServer(t *testing.T, want string) (*httptest.Server, *atomic.Int32) {
	var got atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		if strings.Contains(auth, want) {
			got.Add(1)
		}
		key := strings.TrimPrefix(auth, "Bearer ")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s (header %q)","type":"invalid_request_error","code":"invalid_api_key"}}`, key, auth)
	}))
	t.Cleanup(srv.Close)
	return srv, &got
}

// envDir returns the value of NAME in env.
func envDir(env []string, name string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// grepTree fails the test for every file under dir that holds secret.
func grepTree(t *testing.T, dir, secret string) (files int) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		files++
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), secret) {
			t.Errorf("%s holds the key:\n%s", p, b)
		}
		return nil
	})
	return files
}

// A 401 that echoes the key: neither exec's JSONL, nor its log, nor the
// journal shows it; for OPENAI_API_KEY and for a custom api_key_env.
func TestExecRedactsAnEchoedKey(t *testing.T) {
	for _, tc := range []struct{ name, variable string }{
		{"OPENAI_API_KEY", "OPENAI_API_KEY"},
		{"custom api_key_env", "MY_LLM_TOKEN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "sk-echo-" + strings.ToLower(tc.variable) + "-0123456789abcdef"
			srv, got := keyEchoServer(t, key)
			dir, env := testRepo(t), isolatedEnv(t)
			env = append(env, tc.variable+"="+key)
			args := []string{"exec", "--output", "jsonl", "--verbose", "--base-url", srv.URL + "/v1", "--model", "m"}
			if tc.variable != "OPENAI_API_KEY" {
				cfg := filepath.Join(t.TempDir(), "loom.toml")
				if err := os.WriteFile(cfg, []byte("[model]\napi_key_env = \""+tc.variable+"\"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--config", cfg)
			}
			r := runLoomEnv(t, env, dir, "", append(args, "hi")...)
			if got.Load() == 0 {
				t.Fatalf("the server never received the key, so this test proves nothing; exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout, "Incorrect API key provided: [REDACTED]") {
				t.Errorf("the 401 is not reported (redacted) in the JSONL:\n%s", r.stdout)
			}
			for name, out := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
				if strings.Contains(out, key) {
					t.Errorf("%s shows the key:\n%s", name, out)
				}
			}
			if n := grepTree(t, envDir(env, "XDG_STATE_HOME"), key); n == 0 {
				t.Errorf("no journal written under %s", envDir(env, "XDG_STATE_HOME"))
			}
		})
	}
}

// The same over LSP: no frame the client receives, nor the log file,
// nor the journal holds the key.
func TestServeRedactsAnEchoedKey(t *testing.T) {
	key := "sk-echo-lsp-0123456789abcdef"
	srv, got := keyEchoServer(t, key)
	t.Setenv("OPENAI_API_KEY", key)
	folder, _ := filepath.EvalSymlinks(t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, ed := startInitialized(t, ctx, fakeeditor.Config{
		Loom: true, Folders: []string{folder},
		InitializationOptions: map[string]any{"model": map[string]any{"base_url": srv.URL + "/v1", "name": "m"}},
	})
	history := askAndStop(t, ctx, c, ed, "hi", "the 401", func(m fakeeditor.Message) bool {
		return strings.Contains(string(m.Params), "Incorrect API key provided")
	})
	if got.Load() == 0 {
		t.Fatal("the server never received the key")
	}
	for _, m := range ed.Messages("") {
		if strings.Contains(string(m.Params), key) {
			t.Errorf("%s shows the key: %s", m.Method, m.Params)
		}
	}
	if strings.Contains(fmt.Sprint(history), key) {
		t.Errorf("loom.history shows the key: %v", history)
	}
	log := c.cmd.Args[len(c.cmd.Args)-1]
	if b, err := os.ReadFile(log); err != nil || strings.Contains(string(b), key) {
		t.Errorf("log %s: %v, or holds the key:\n%s", log, err, b)
	}
	if n := grepTree(t, envDir(c.cmd.Env, "XDG_STATE_HOME"), key); n == 0 {
		t.Error("no journal written")
	}
}

// The bash tool cannot read the key from its parent's /proc/PID/environ,
// nor from its own environment, even as root (the tests run as root
// here; a non-root user is also kept out by the daemon being
// non-dumpable, see package secret).
func TestBashCannotReadTheKeyFromProc(t *testing.T) {
	for _, variable := range []string{"OPENAI_API_KEY", "MY_LLM_TOKEN"} {
		t.Run(variable, func(t *testing.T) {
			key := "sk-proc-" + strings.ToLower(variable) + "-0123456789abcdef"
			dir, env := testRepo(t), isolatedEnv(t)
			out := t.TempDir()
			command := fmt.Sprintf(`cat /proc/$PPID/environ > %[1]s/cat.txt 2>&1; tr '\0' '\n' < /proc/$PPID/environ > %[1]s/tr.txt 2>&1; env > %[1]s/env.txt; cat /proc/self/environ > %[1]s/self.txt; grep -a -c %[2]s /proc/$PPID/environ > %[1]s/grep.txt 2>&1; echo $PPID > %[1]s/ppid.txt`, out, key)
			script := bashScript(t, command)
			cfg := filepath.Join(t.TempDir(), "loom.toml")
			if err := os.WriteFile(cfg, []byte("[model]\napi_key_env = \""+variable+"\"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			env = append(env, variable+"="+key)
			r := runLoomEnv(t, env, dir, "", "exec", "--approve", "bash=allow", "--config", cfg, "--script", script, "look")
			if r.code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			cat, _ := os.ReadFile(filepath.Join(out, "cat.txt"))
			if !strings.Contains(string(cat), "PATH=") && !strings.Contains(string(cat), "Permission denied") {
				t.Fatalf("bash read neither the environment nor a refusal, so this test proves nothing: %q", cat)
			}
			for _, f := range []string{"cat.txt", "tr.txt", "env.txt", "self.txt"} {
				if b, _ := os.ReadFile(filepath.Join(out, f)); strings.Contains(string(b), key) {
					t.Errorf("%s shows the key:\n%s", f, b)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(out, "grep.txt")); strings.TrimSpace(string(b)) != "0" && !strings.Contains(string(b), "denied") {
				t.Errorf("grep found the key in /proc/$PPID/environ: %q", b)
			}
		})
	}
}

// bashScript is a model that runs command with bash, then says Done.
func bashScript(t *testing.T, command string) string {
	return writeScript(t, fmt.Sprintf(`
[[step]]
match.last_role = "user"
  [[step.tool_call]]
  name = "bash"
  arguments = %s

[[step]]
match.last_role = "tool"
text = ["Done."]
`, strconv.Quote(fmt.Sprintf(`{"command":%s}`, strconv.Quote(command)))))
}

// watchdogOf returns the pid of the reap watchdog of daemon, 0 if none.
func watchdogOf(daemon int) int {
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	want := "\x00" + strconv.Itoa(daemon) + "\x00"
	for _, p := range cmdlines {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), "__loom-lsp-reap-watchdog"+want) {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			return pid
		}
	}
	return 0
}

// awaitGone waits until pid has exited, with a deadline.
func awaitGone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err != nil {
			return
		}
		if b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); strings.Contains(string(b), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) did not exit", what, pid)
		}
		time.Sleep(10 * time.Millisecond) // polling /proc for another process's exit
	}
}

// Orphans left by a bash call, with the daemon ended by SIGTERM or
// SIGKILL: none survives.
func TestExecLeavesNoOrphanWhenSignalled(t *testing.T) {
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM, os.Kill} {
		t.Run(sig.String(), func(t *testing.T) {
			tag := "LOOM_ORPHAN_TEST=" + strconv.Itoa(os.Getpid()) + "-" + filepath.Base(t.TempDir())
			ready := filepath.Join(t.TempDir(), "ready")
			dir := testRepo(t)
			cmd := exec.Command(loomBinary, "exec", "--approve", "bash=allow",
				"--script", bashScript(t, proctest.OrphanCommand(tag, ready, "sleep 1000")), "leave orphans")
			cmd.Dir, cmd.Env = dir, isolatedEnv(t)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			proctest.AwaitWithEnv(t, tag, proctest.OrphansStarted)
			watchdog := watchdogOf(cmd.Process.Pid)
			if watchdog == 0 {
				t.Fatal("no watchdog process")
			}
			cmd.Process.Signal(sig)
			cmd.Wait()
			awaitGone(t, watchdog, "the watchdog")
			proctest.AssertNoneWithEnv(t, tag, sig.String()+" of loom-lsp exec")
		})
	}
}

// stdin EOF ends `loom-lsp serve` mid-turn: no orphan survives.
func TestServeLeavesNoOrphanAtStdinEOF(t *testing.T) {
	tag := "LOOM_ORPHAN_TEST=" + strconv.Itoa(os.Getpid()) + "-" + filepath.Base(t.TempDir())
	ready := filepath.Join(t.TempDir(), "ready")
	folder, _ := filepath.EvalSymlinks(t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, ed := startInitialized(t, ctx, fakeeditor.Config{
		Loom: true, Folders: []string{folder},
		InitializationOptions: scriptedOptions(bashScript(t, proctest.OrphanCommand(tag, ready, "sleep 1000")),
			map[string]any{"tools": map[string]any{"bash": "allow"}}),
	})
	if err := ed.ExecuteCommand(ctx, jsonrpc.CmdAsk, jsonrpc.AskArgs{Prompt: "leave orphans"}, nil); err != nil {
		t.Fatal(err)
	}
	proctest.AwaitWithEnv(t, tag, proctest.OrphansStarted)
	c.conn.WriteCloser.Close() // stdin EOF
	c.wait(t)
	proctest.AssertNoneWithEnv(t, tag, "stdin EOF of loom-lsp serve")
}
