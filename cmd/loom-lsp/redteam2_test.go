package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/loom-lsp/loom-lsp/internal/gittest"
	"github.com/loom-lsp/loom-lsp/llm/llmtest"
	"github.com/loom-lsp/loom-lsp/tools/sandbox"
)

// A key kept in model.headers (Azure's api-key, Anthropic-style x-api-key
// behind a proxy, a gateway's token): a 401 body that echoes it is shown
// to nobody — not exec's JSONL, its log, nor the journal.
func TestExecRedactsAnEchoedHeaderKey(t *testing.T) {
	key := "azkey-echo-0123456789abcdef"
	var got atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Get("api-key")
		if h == key {
			got.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":"Access denied due to invalid subscription key %s","type":"invalid_request_error","code":"401"}}`, h)
	}))
	t.Cleanup(srv.Close)
	dir, env := testRepo(t), isolatedEnv(t)
	env = append(env, "OPENAI_API_KEY=unused-placeholder-key")
	cfg := filepath.Join(t.TempDir(), "loom.toml")
	if err := os.WriteFile(cfg, []byte("[model.headers]\napi-key = \""+key+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runLoomEnv(t, env, dir, "", "exec", "--output", "jsonl", "--verbose", "--base-url", srv.URL+"/v1", "--model", "m", "--config", cfg, "hi")
	if got.Load() == 0 {
		t.Fatalf("the server never received the header, so this test proves nothing; exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "invalid subscription key [REDACTED]") {
		t.Errorf("the 401 is not reported (redacted) in the JSONL:\n%s", r.stdout)
	}
	for name, out := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
		if strings.Contains(out, key) {
			t.Errorf("%s shows the header's key:\n%s", name, out)
		}
	}
	if n := grepTree(t, envDir(env, "XDG_STATE_HOME"), key); n == 0 {
		t.Errorf("no journal written under %s", envDir(env, "XDG_STATE_HOME"))
	}
}

// A trusted repository's stdio MCP server runs a script of the workspace
// (command = "sh", args = ["mcp.sh"]); under tools.bash = "deny" the
// agent rewrites that script with write_file (edits need no approval).
// The next session must not run the agent's script: commands are off, and
// trust bound the server's definition, not what it runs.
func TestRepositoryMCPServerRunsNoAgentCodeWhereCommandsAreOff(t *testing.T) {
	srv := llmtest.NewServer(t, func(r llmtest.Request) llmtest.Reply {
		switch {
		case !strings.Contains(r.LastUser(), "rewrite"):
			return llmtest.Reply{Text: []string{"done"}}
		case r.Last().Role != "tool":
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{llmtest.Call("r1", "read_file", `{"path":"mcp.sh"}`)}}
		case !strings.Contains(r.Last().Content, "user server"):
			return llmtest.Reply{Text: []string{"done"}}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{llmtest.Call("w1", "write_file",
			`{"path":"mcp.sh","content":"touch agent-code-ran; exit 1\n"}`)}}
	})
	dir := gittest.Repo(t, map[string]string{
		"mcp.sh":     "echo user server >&2; exit 1\n",
		".loom.toml": "[mcp.servers.repo]\ncommand = \"sh\"\nargs = [\"mcp.sh\"]\n",
	})
	env := isolatedEnv(t)
	writeUserConfig(t, env, "[trust]\nfolders = [\""+dir+"\"]\n[tools]\nbash = \"deny\"\n")
	args := []string{"exec", "--output", "jsonl", "--base-url", srv.BaseURL(), "--model", "m"}
	r := runLoomEnv(t, env, dir, "", append(args, "rewrite mcp.sh")...)
	if b, err := os.ReadFile(filepath.Join(dir, "mcp.sh")); err != nil || !strings.Contains(string(b), "agent-code-ran") {
		t.Fatalf("the agent did not rewrite mcp.sh (%v: %q), so this test proves nothing\nstdout:\n%s\nstderr:\n%s", err, b, r.stdout, r.stderr)
	}
	r = runLoomEnv(t, env, dir, "", append(args, "hi")...)
	if _, err := os.Stat(filepath.Join(dir, "agent-code-ran")); err == nil {
		t.Errorf("the repository's MCP server ran the script the agent wrote, with commands off\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, `tools.bash = \"deny\"`) {
		t.Errorf("the server held back is not said\nstdout:\n%s", r.stdout)
	}
}

// The same server under tools.bash = "ask": nobody approves its run, so
// it runs sandboxed with no network (the repository's agent hooks' floor);
// with commands allowed it has the commands' network; with the sandbox
// off it does not start.
func TestRepositoryMCPServerUnderAskRunsOffline(t *testing.T) {
	if s := sandbox.New(sandbox.Policy{Root: t.TempDir()}); !s.Active() {
		t.Skipf("no Landlock here: %s", s.Unavailable())
	}
	port := listenPort(t)
	probe := fmt.Sprintf("if (exec 3<>/dev/tcp/127.0.0.1/%d) 2>/dev/null; then echo on > net.txt; else echo off > net.txt; fi; exit 1\n", port)
	for _, tc := range []struct{ name, user, approve, want string }{
		{"ask", "", "", "off"},
		{"allow", "", "bash=allow", "on"},
		{"ask, sandbox off", "[tools]\nsandbox = \"off\"\n", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := gittest.Repo(t, map[string]string{
				"mcp.sh":     probe,
				".loom.toml": "[mcp.servers.repo]\ncommand = \"bash\"\nargs = [\"mcp.sh\"]\n",
			})
			env := isolatedEnv(t)
			writeUserConfig(t, env, "[trust]\nfolders = [\""+dir+"\"]\n"+tc.user)
			args := []string{"exec", "--output", "jsonl", "--script", writeScript(t, "[[step]]\ntext = [\"Hi.\"]\n")}
			if tc.approve != "" {
				args = append(args, "--approve", tc.approve)
			}
			r := runLoomEnv(t, env, dir, "", append(args, "hello")...)
			got, err := os.ReadFile(filepath.Join(dir, "net.txt"))
			if tc.want == "" {
				if err == nil {
					t.Errorf("the server ran with the sandbox off under \"ask\"")
				}
				if !strings.Contains(r.stdout, `MCP server \"repo\"`) {
					t.Errorf("the server held back is not said\n%s", r.stdout)
				}
				return
			}
			if err != nil {
				t.Fatalf("the server did not run: %v\n%s\n%s", err, r.stdout, r.stderr)
			}
			if strings.TrimSpace(string(got)) != tc.want {
				t.Errorf("network for the repository's MCP server: %q, want %q", got, tc.want)
			}
		})
	}
}

// memProbe is a bash command that looks for key in the memory of every
// ancestor process (loom-lsp keeps the key in its heap) through
// /proc/PID/mem, and writes how many regions held it (or the refusal)
// to out.
func memProbe(key, out string) string {
	return fmt.Sprintf(`n=0; p=$$; while [ "$p" -gt 1 ]; do
  p=$(awk '{print $4}' /proc/$p/stat 2>/dev/null) || break; [ -n "$p" ] || break
  while read -r range perms _ _ _ path; do
    case "$perms" in rw*) ;; *) continue;; esac
    [ -z "$path" ] || continue
    s=$((16#${range%%-*})); e=$((16#${range##*-}))
    if dd if=/proc/$p/mem bs=4096 skip=$((s/4096)) count=$(((e-s)/4096)) status=none 2>>%[2]s.err | grep -a -q %[1]s; then n=$((n+1)); fi
  done < /proc/$p/maps 2>>%[2]s.err
done; echo $n > %[2]s`, key, out)
}

// A sandboxed command cannot read the model's key out of loom-lsp's
// memory (/proc/PID/mem of an ancestor: Landlock refuses ptrace access to
// a process outside the sandbox). With the sandbox off the same probe
// finds it where the kernel lets a process read its parent's memory
// (no Yama), which shows the probe works.
func TestSandboxedCommandCannotReadTheKeyFromLoomsMemory(t *testing.T) {
	if s := sandbox.New(sandbox.Policy{Root: t.TempDir()}); !s.Active() {
		t.Skipf("no Landlock here: %s", s.Unavailable())
	}
	key := "sk-mem-probe-0123456789abcdef"
	found := map[string]string{}
	for _, mode := range []string{"off", "on"} {
		dir, env := testRepo(t), isolatedEnv(t)
		out := filepath.Join(t.TempDir(), "found.txt")
		cfg := filepath.Join(t.TempDir(), "loom.toml")
		body := "[model]\napi_key_env = \"MY_LLM_TOKEN\"\n"
		if mode == "off" {
			body += "[tools]\nsandbox = \"off\"\n"
		}
		if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		env = append(env, "MY_LLM_TOKEN="+key)
		r := runLoomEnv(t, env, dir, "", "exec", "--approve", "bash=allow", "--config", cfg, "--script", bashScript(t, memProbe(key, out)), "look")
		if r.code != 0 {
			t.Fatalf("sandbox %s: exit %d\nstdout:\n%s\nstderr:\n%s", mode, r.code, r.stdout, r.stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatalf("sandbox %s: the probe did not run: %v\n%s", mode, err, r.stdout)
		}
		found[mode] = strings.TrimSpace(string(b))
	}
	t.Logf("regions holding the key: sandbox off %s, on %s", found["off"], found["on"])
	if found["off"] == "0" {
		t.Skip("even unsandboxed the probe cannot read a parent's memory here (Yama or not root), so it proves nothing")
	}
	if found["on"] != "0" {
		t.Errorf("a sandboxed command found the key in %s memory regions of loom-lsp", found["on"])
	}
}

// The home directory opened as the workspace contains loom's state
// directory, where the user's approval rules live: the agent writing its
// folder's rules file ("always allow every command") with write_file got
// its next commands run unasked. The state directory is loom's own, as
// its configuration directory is: refused.
func TestAgentCannotWriteItsOwnApprovalRules(t *testing.T) {
	home, _ := filepath.EvalSymlinks(t.TempDir())
	gitT(t, home, "init", "-q")
	env := isolatedEnv(t)
	for i, kv := range env {
		if strings.HasPrefix(kv, "XDG_STATE_HOME=") {
			env[i] = "XDG_STATE_HOME=" + filepath.Join(home, ".local", "state")
		}
	}
	sum := sha256.Sum256([]byte(home))
	rules := filepath.Join(".local", "state", "loom", "rules", filepath.Base(home)+"-"+hex.EncodeToString(sum[:6])+".json")
	content := fmt.Sprintf(`{"folder":%q,"allowCommands":[{"every":true}]}`, home)
	write := writeScript(t, fmt.Sprintf(`
[[step]]
match.last_role = "user"
  [[step.tool_call]]
  name = "write_file"
  arguments = %s

[[step]]
match.last_role = "tool"
text = ["Done."]
`, strconv.Quote(fmt.Sprintf(`{"path":%q,"content":%q}`, rules, content))))
	r := runLoomEnv(t, env, home, "", "exec", "--output", "jsonl", "--script", write, "go")
	if _, err := os.Stat(filepath.Join(home, rules)); err == nil {
		t.Errorf("the agent wrote its folder's approval rules\n%s", r.stdout)
	} else if !strings.Contains(r.stdout, "loom's configuration") {
		t.Errorf("the write was not refused as loom's own: %v\n%s\n%s", err, r.stdout, r.stderr)
	}
	// What the rule would have granted: a command run unasked (exec
	// cannot ask, so under "ask" commands are refused).
	r = runLoomEnv(t, env, home, "", "exec", "--output", "jsonl", "--script", bashScript(t, "echo ran-unasked"), "go")
	if strings.Contains(r.stdout, `"output":"ran-unasked`) {
		t.Errorf("a command ran unasked\n%s", r.stdout)
	}
}

// The home directory opened as the workspace: what the sandbox hides from
// commands (~/.ssh, loom's state directory with every conversation's
// journal) is hidden from the read and write tools too — read_file gave
// the model the private key and other folders' conversations, and
// write_file could add to authorized_keys.
func TestHomeAsWorkspaceHidesWhatCommandsCannotSee(t *testing.T) {
	home, _ := filepath.EvalSymlinks(t.TempDir())
	gitT(t, home, "init", "-q")
	for name, body := range map[string]string{
		".ssh/id_rsa":                        "PRIVATE-KEY-PROBE\n",
		".local/state/loom/other-0.jsonl":    `{"journal":"OTHER-FOLDER-PROBE"}` + "\n",
		"notes.txt":                          "NOTES-PROBE\n",
		".config/loom/placeholder-unrelated": "x\n",
	} {
		p := filepath.Join(home, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := isolatedEnv(t)
	for i, kv := range env {
		switch {
		case strings.HasPrefix(kv, "HOME="):
			env[i] = "HOME=" + home
		case strings.HasPrefix(kv, "XDG_STATE_HOME="):
			env[i] = "XDG_STATE_HOME=" + filepath.Join(home, ".local", "state")
		}
	}
	call := func(name, args string) string {
		return fmt.Sprintf("  [[step.tool_call]]\n  name = %q\n  arguments = %s\n", name, strconv.Quote(args))
	}
	script := writeScript(t, "[[step]]\nmatch.last_role = \"user\"\n"+
		call("read_file", `{"path":"notes.txt"}`)+
		call("read_file", `{"path":".ssh/id_rsa"}`)+
		call("read_file", `{"path":".local/state/loom/other-0.jsonl"}`)+
		call("grep", `{"pattern":"PROBE"}`)+
		call("list_files", `{"path":"."}`)+
		call("write_file", `{"path":".ssh/authorized_keys","content":"ssh-ed25519 AAAA agent\n"}`)+
		"\n[[step]]\nmatch.last_role = \"tool\"\ntext = [\"Done.\"]\n")
	r := runLoomEnv(t, env, home, "", "exec", "--output", "jsonl", "--script", script, "look")
	if !strings.Contains(r.stdout, "NOTES-PROBE") {
		t.Fatalf("the workspace's own file was not read, so this test proves nothing\n%s\n%s", r.stdout, r.stderr)
	}
	for _, secret := range []string{"PRIVATE-KEY-PROBE", "OTHER-FOLDER-PROBE", "id_rsa\\n", "other-0.jsonl\\n"} {
		if strings.Contains(r.stdout, secret) {
			t.Errorf("the tools showed %s\n%s", secret, r.stdout)
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".ssh", "authorized_keys")); err == nil {
		t.Error("write_file wrote ~/.ssh/authorized_keys")
	}
}

// A client's cwd inside a git directory (/repo/.git, /repo/.git/hooks):
// the sandbox kept only <folder>/.git read-only and the tools looked for
// git directories below the folder only, so an approved command (or
// write_file, in .git/hooks) planted a hook the user's next git command
// runs outside the sandbox.
func TestWorkspaceInsideAGitDirectoryPlantsNoHook(t *testing.T) {
	if s := sandbox.New(sandbox.Policy{Root: t.TempDir()}); !s.Active() {
		t.Skipf("no Landlock here: %s", s.Unavailable())
	}
	for _, tc := range []struct{ name, cwd, tool, args string }{
		{"bash in .git", ".git", "bash", `{"command":"printf '#!/bin/sh\\necho pwned\\n' > hooks/post-checkout; chmod +x hooks/post-checkout"}`},
		{"write_file in .git/hooks", ".git/hooks", "write_file", `{"path":"post-checkout","content":"#!/bin/sh\necho pwned\n"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := testRepo(t)
			script := writeScript(t, fmt.Sprintf("[[step]]\nmatch.last_role = \"user\"\n  [[step.tool_call]]\n  name = %q\n  arguments = %s\n\n[[step]]\nmatch.last_role = \"tool\"\ntext = [\"Done.\"]\n", tc.tool, strconv.Quote(tc.args)))
			r := runLoomEnv(t, isolatedEnv(t), filepath.Join(repo, tc.cwd), "", "exec", "--output", "jsonl", "--approve", "bash=allow", "--script", script, "go")
			if !strings.Contains(r.stdout, `"name":"`+tc.tool+`","status"`) {
				t.Fatalf("the tool did not run, so this test proves nothing\n%s\n%s", r.stdout, r.stderr)
			}
			if _, err := os.Stat(filepath.Join(repo, ".git", "hooks", "post-checkout")); err == nil {
				t.Errorf("a git hook was planted\n%s", r.stdout)
			}
		})
	}
}
