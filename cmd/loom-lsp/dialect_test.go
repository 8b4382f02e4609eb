package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/internal/gittest"
	"github.com/loom-lsp/loom-lsp/llm/llmtest"
)

// dialectEnv is an isolated environment whose user config names the
// server's dialect (model.server) and retries quickly.
func dialectEnv(t *testing.T, server string) []string {
	env := isolatedEnv(t)
	var cfgHome string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_CONFIG_HOME="); ok {
			cfgHome = v
		}
	}
	cfg := "[model]\nserver = \"" + server + "\"\n[agent]\nretry_base = \"10ms\"\nretry_max = \"50ms\"\n"
	if err := os.MkdirAll(filepath.Join(cfgHome, "loom"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfgHome, "loom", "loom.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return env
}

// TestExecDialects runs `exec --output jsonl` on the built binary against
// each server family's recorded bytes: the first attempt fails mid-stream
// after a partial answer, the retry makes two parallel tool calls (which
// run), and the answer follows. The partial answer is retracted, never
// doubled; the calls are exactly the server's, their results paired; the
// usage adds up; the server's own validation accepts every request. A bad
// key then fails at once, classified as that server means it.
func TestExecDialects(t *testing.T) {
	schema := eventSchema(t)
	for _, name := range llmtest.Dialects() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			plan, start := []string{"midstream", "tools", "answer"}, 0
			setPlan := func(p ...string) {
				mu.Lock()
				defer mu.Unlock()
				plan, start = p, -1
			}
			srv := llmtest.NewDialectServer(t, name, func(n int, _ llmtest.Request) string {
				mu.Lock()
				defer mu.Unlock()
				if start < 0 {
					start = n
				}
				if i := n - start; i < len(plan) {
					return plan[i]
				}
				return "answer"
			})
			fx := srv.Fixture
			dir := gittest.Repo(t, map[string]string{"a.txt": "hello\n"})
			env := dialectEnv(t, name)
			model := []string{"--base-url", srv.BaseURL(), "--model", "m"}
			r := runLoomEnv(t, env, dir, "", append([]string{"exec", "--output", "jsonl"}, append(model, "read a.txt and list the files")...)...)
			if r.code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			events := validEvents(t, schema, r.stdout)
			retracted := ofType(events, "message_retracted")
			if len(retracted) != 1 {
				t.Fatalf("%d message_retracted events; want 1 (the partial answer before the retry)\n%s", len(retracted), r.stdout)
			}
			var texts []string
			for _, m := range ofType(events, "message_completed") {
				texts = append(texts, m["text"].(string))
				if m["id"] == retracted[0]["id"] {
					t.Errorf("the retried message reuses the retracted id %v", m["id"])
				}
			}
			if want := []string{fx.Expect.Text, fx.Expect.AnswerText}; strings.Join(texts, "|") != strings.Join(want, "|") {
				t.Errorf("messages %q; want %q (not doubled)", texts, want)
			}
			var ids []string
			for _, ev := range ofType(events, "tool_started") {
				ids = append(ids, ev["id"].(string))
			}
			done := 0
			for _, ev := range ofType(events, "tool_completed") {
				if ev["status"] == "succeeded" {
					done++
				} else {
					t.Errorf("tool %v %v: %v", ev["name"], ev["status"], ev["summary"])
				}
			}
			if done != 2 {
				t.Errorf("%d tools succeeded; want 2", done)
			}
			if strings.Join(ids, " ") != strings.Join(fx.Expect.CallIDs, " ") {
				t.Errorf("tool calls %v; want the server's %v", ids, fx.Expect.CallIDs)
			}
			reqs := srv.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d requests; want 3 (failed, retried, after the tools)", len(reqs))
			}
			var paired []string
			for _, m := range reqs[2].Messages {
				if m.Role == "tool" {
					paired = append(paired, m.ToolCallID)
				}
			}
			if strings.Join(paired, " ") != strings.Join(fx.Expect.CallIDs, " ") {
				t.Errorf("tool results answer %v; want %v", paired, fx.Expect.CallIDs)
			}
			ended := ofType(events, "turn_completed")[0]
			usage, _ := ended["usage"].(map[string]any)
			if usage["prompt_tokens"] != float64(fx.Expect.Prompt+fx.Expect.AnswerPrompt) ||
				usage["completion_tokens"] != float64(fx.Expect.Completion+fx.Expect.AnswerCompletion) {
				t.Errorf("usage %v", usage)
			}
			if n := srv.Rejected(); n != 0 {
				t.Errorf("the %s server's validation refused %d requests", name, n)
			}

			// Rate limited (or, for llama.cpp, still loading): retried
			// after the delay the server asked for, then answered.
			setPlan("rate_limit", "answer")
			rl := fx.Error(t, "rate_limit")
			r = runLoomEnv(t, env, dir, "", append([]string{"exec", "--resume", "--output", "jsonl"}, append(model, "and now?")...)...)
			events = validEvents(t, schema, r.stdout)
			retries := ofType(events, "retry_scheduled")
			if r.code != 0 || len(retries) != 1 {
				t.Fatalf("rate limited: exit %d, %d retries; want one retry, then done\n%s", r.code, len(retries), r.stdout)
			}
			if retries[0]["kind"] != rl.Kind {
				t.Errorf("retry kind %v; want %s", retries[0]["kind"], rl.Kind)
			}
			if rl.RetryAfter != "" {
				want, _ := time.ParseDuration(rl.RetryAfter)
				if got := time.Duration(retries[0]["delay_ms"].(float64)) * time.Millisecond; got < want {
					t.Errorf("retried after %s; the server asked for %s", got, want)
				}
			}

			// A bad key: one request, no retry, the error kind the
			// server's answer means.
			setPlan("auth")
			before := len(srv.Requests())
			r = runLoomEnv(t, env, dir, "", append([]string{"exec", "--output", "jsonl"}, append(model, "again")...)...)
			errs := ofType(validEvents(t, schema, r.stdout), "error")
			if r.code == 0 || len(errs) != 1 || errs[0]["kind"] != "auth" {
				t.Errorf("bad key: exit %d, errors %v; want one auth error", r.code, errs)
			}
			if got := len(srv.Requests()) - before; got != 1 {
				t.Errorf("bad key: %d requests; want 1 (not retried)", got)
			}
		})
	}
}
