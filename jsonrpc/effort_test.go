package jsonrpc

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/internal/gittest"
	"github.com/loom-lsp/loom-lsp/llm/llmtest"
)

// effortOf is the reasoning_effort a Chat Completions request carried,
// "" when none.
func effortOf(t *testing.T, r llmtest.Request) string {
	t.Helper()
	var body struct {
		ReasoningEffort string `json:"reasoning_effort"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatal(err)
	}
	return body.ReasoningEffort
}

// loom.setEffort sets the conversation's reasoning effort over [model]
// reasoning_effort: the next request carries it, loom.status says it, a
// restarted daemon resuming the conversation keeps it (journaled), and
// "" goes back to the configured one; an unknown effort is refused.
func TestSetEffortPerConversation(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: []string{"ok"}} })
	opts := modelServerOptions(srv)
	opts["model"].(map[string]any)["reasoning_effort"] = "low"
	cfg := loomClient
	cfg.Folders = []string{gittest.Repo(t, map[string]string{"a.txt": "a\n"})}
	env := envOptions{cfg: cfg, options: opts, stateDir: t.TempDir()}
	e := newEnv(t, env)
	e.ask("first")
	e.await("turn 1 ended", turnEnded(e.folder, 0))
	var set SetEffortResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdSetEffort, map[string]any{"effort": "high"}, &set); err != nil || set.Effort != "high" {
		t.Fatalf("setEffort high: %+v, %v", set, err)
	}
	from := len(e.ed.Messages(""))
	e.ask("second")
	e.await("turn 2 ended", turnEnded(e.folder, from))
	var st struct {
		Effort       string `json:"effort"`
		EffortChosen bool   `json:"effortChosen"`
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdStatus, FolderArgs{}, &st); err != nil || st.Effort != "high" || !st.EffortChosen {
		t.Errorf("loom.status effort %+v (%v), want high, chosen", st, err)
	}
	err := e.ed.ExecuteCommand(e.ctx, CmdSetEffort, map[string]any{"effort": "turbo"}, nil)
	if err == nil || !strings.Contains(err.Error(), `unknown reasoning effort "turbo"`) {
		t.Errorf("setEffort turbo: %v, want refused", err)
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdSetEffort, map[string]any{}, nil); err == nil || !strings.Contains(err.Error(), "effort is required") {
		t.Errorf("setEffort {}: %v, want invalid params", err)
	}
	e.stop()

	// A window reload: the next daemon resumes the conversation with its effort.
	e = newEnv(t, env)
	from = len(e.ed.Messages(""))
	e.ask("third")
	e.await("turn 3 ended", turnEnded(e.folder, from))
	if err := e.ed.ExecuteCommand(e.ctx, CmdSetEffort, map[string]any{"effort": ""}, &set); err != nil || set.Effort != "low" {
		t.Fatalf("setEffort \"\": %+v, %v, want the configured low", set, err)
	}
	from = len(e.ed.Messages(""))
	e.ask("fourth")
	e.await("turn 4 ended", turnEnded(e.folder, from))
	var got []string
	for _, r := range srv.Requests() {
		got = append(got, r.LastUser()+"="+effortOf(t, r))
	}
	if want := "first=low second=high third=high fourth=low"; strings.Join(got, " ") != want {
		t.Fatalf("requests %s, want %s", strings.Join(got, " "), want)
	}
}
