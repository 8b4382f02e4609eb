package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/llm/llmtest"
	"github.com/loom-lsp/loom-lsp/tools/mcp/mcptest"
)

// writeUserConfig writes the user's loom.toml of an isolated environment.
func writeUserConfig(t *testing.T, env []string, body string) {
	t.Helper()
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_CONFIG_HOME="); ok {
			if err := os.MkdirAll(filepath.Join(v, "loom"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(v, "loom", "loom.toml"), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatal("no XDG_CONFIG_HOME")
}

// TestExecOffersMCPToolsOnTheFirstRequest: a one-shot `exec` with the real
// npm @modelcontextprotocol/server-everything waits for it to start
// (mcp.startup_timeout), so the first request already offers its tools,
// and the model's call of one of them runs.
func TestExecOffersMCPToolsOnTheFirstRequest(t *testing.T) {
	everything := mcptest.Find(t).Everything
	srv := llmtest.NewServer(t, func(r llmtest.Request) llmtest.Reply {
		if r.Last().Role == "tool" {
			return llmtest.Reply{Text: []string{"The server said: " + r.Last().Content}}
		}
		if !strings.Contains(string(r.Body), `"ev__echo"`) {
			return llmtest.Reply{Text: []string{"no MCP tool offered"}}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{llmtest.Call("e1", "ev__echo", `{"message":"hello from exec"}`)}}
	})
	env := isolatedEnv(t)
	writeUserConfig(t, env, "[mcp.servers.ev]\ncommand = \""+everything+"\"\napprove = \"allow\"\n")
	r := runLoomEnv(t, env, testRepo(t), "", "exec", "--output", "jsonl", "--base-url", srv.BaseURL(), "--model", "m", "echo it")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) == 0 || !strings.Contains(string(reqs[0].Body), `"ev__echo"`) {
		t.Fatalf("the first request does not offer ev__echo\nstdout:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "The server said: Echo: hello from exec") {
		t.Errorf("the MCP tool's result did not reach the answer\nstdout:\n%s", r.stdout)
	}
}

// TestExecGoesOnWhenAnMCPServerNeverComesUp: a server that never answers
// its handshake holds exec only mcp.startup_timeout; the run says which
// server did not come up and answers without it.
func TestExecGoesOnWhenAnMCPServerNeverComesUp(t *testing.T) {
	srv := llmtest.NewServer(t, func(r llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: []string{"answered without MCP"}}
	})
	env := isolatedEnv(t)
	writeUserConfig(t, env, "[mcp]\nstartup_timeout = \"300ms\"\n[mcp.servers.mute]\ncommand = \"sleep\"\nargs = [\"30\"]\napprove = \"allow\"\n")
	r := runLoomEnv(t, env, testRepo(t), "", "exec", "--output", "jsonl", "--base-url", srv.BaseURL(), "--model", "m", "hi")
	if r.code != 0 || !strings.Contains(r.stdout, "answered without MCP") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, `MCP server(s) \"mute\" did not come up within 300ms`) {
		t.Errorf("the run does not say which server did not come up\nstdout:\n%s", r.stdout)
	}
}

// TestExecElicit: exec cannot ask, so an MCP server's question (the
// go-sdk asking server, a real stdio process) is answered as --elicit
// says, and the jsonl stream says so: decline by default; defaults
// accepts a form whose required fields all have defaults, and declines
// one with a required field without one, naming it.
func TestExecElicit(t *testing.T) {
	asker := mcptest.AskStdio(t)
	srv := llmtest.NewServer(t, func(r llmtest.Request) llmtest.Reply {
		if r.Last().Role == "tool" {
			return llmtest.Reply{Text: []string{"The server said: " + r.Last().Content}}
		}
		tool := "asking__confirm"
		if strings.Contains(r.Last().Content, "deploy") {
			tool = "asking__deploy"
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{llmtest.Call("e1", tool, `{}`)}}
	})
	env := isolatedEnv(t)
	writeUserConfig(t, env, "[mcp.servers.asking]\ncommand = \""+asker+"\"\napprove = \"allow\"\n")
	for _, c := range []struct {
		args       []string
		prompt     string
		said, want string
	}{
		{nil, "confirm", `MCP server asking asked \"Go ahead?\" (its form): declined (exec --elicit decline;`, "The server said: action=decline"},
		{[]string{"--elicit", "defaults"}, "confirm", `MCP server asking asked \"Go ahead?\" (its form): accepted with the defaults (exec --elicit defaults;`,
			`The server said: action=accept content={confirm=true region=\"eu\"}`},
		{[]string{"--elicit", "defaults"}, "deploy", `declined (exec --elicit defaults: required without a default: env, api_token;`, "The server said: action=decline"},
	} {
		args := append([]string{"exec", "--output", "jsonl", "--base-url", srv.BaseURL(), "--model", "m"}, c.args...)
		r := runLoomEnv(t, env, testRepo(t), "", append(args, c.prompt)...)
		if r.code != 0 || !strings.Contains(r.stdout, c.said) || !strings.Contains(r.stdout, c.want) {
			t.Errorf("%v %s: exit %d, want %q and %q\nstdout:\n%s\nstderr:\n%s", c.args, c.prompt, r.code, c.said, c.want, r.stdout, r.stderr)
		}
	}
	if r := runLoomEnv(t, env, testRepo(t), "", "exec", "--elicit", "ask", "hi"); r.code == 0 || !strings.Contains(r.stderr, "--elicit is decline or defaults") {
		t.Errorf("--elicit ask: exit %d, stderr %s", r.code, r.stderr)
	}
}
