package jsonrpc

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/llm/llmtest"
)

// modelServerOptions configures the folder's model as the scripted HTTP
// server.
func modelServerOptions(srv *llmtest.Server) map[string]any {
	return map[string]any{"model": map[string]any{"provider": "openai", "base_url": srv.BaseURL(), "name": "test-model"}}
}

// TestResetWithQueuedPrompt: loom.reset while a turn streams and a prompt
// is queued behind it drops the queued prompt (it never reaches the
// model), leaves nothing of the old conversation in loom.history, lets
// nothing of the old streams reach the new conversation, and keeps turn
// ids increasing.
func TestResetWithQueuedPrompt(t *testing.T) {
	srv := llmtest.NewServer(t, func(r llmtest.Request) llmtest.Reply {
		switch last := r.LastUser(); {
		case strings.Contains(last, "long story"):
			chunks := make([]string, 200)
			for i := range chunks {
				chunks[i] = fmt.Sprintf("chunk-%d ", i)
			}
			return llmtest.Reply{Text: chunks, Pace: 20 * time.Millisecond}
		case strings.Contains(last, "after reset"):
			return llmtest.Reply{Text: []string{"fresh ", "answer"}}
		default:
			return llmtest.Reply{Text: []string{"ORPHAN ", "ORPHAN ", "ORPHAN"}, Pace: 10 * time.Millisecond}
		}
	})
	e := newEnv(t, envOptions{cfg: loomClient, options: modelServerOptions(srv)})

	first := e.ask("a long story")
	e.await("streaming", containsText(e.folder, "chunk-3 "))
	queued := e.ask("queued prompt")
	if queued.Turn <= first.Turn {
		t.Fatalf("queued prompt got turn %d, after turn %d", queued.Turn, first.Turn)
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdReset, FolderArgs{}, nil); err != nil {
		t.Fatalf("loom.reset: %v", err)
	}
	from := len(e.ed.Messages(""))
	next := e.ask("after reset")
	if next.Turn <= queued.Turn {
		t.Errorf("after reset the turn id is %d, want more than %d (ids keep increasing)", next.Turn, queued.Turn)
	}
	e.await("the new turn ends", turnEnded(e.folder, from))
	if got := displayed(t, e.ed.Messages(""), e.folder, next.Turn); got != "fresh answer" {
		t.Errorf("the new turn displayed %q, want %q", got, "fresh answer")
	}

	var hist HistoryResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdHistory, FolderArgs{}, &hist); err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range hist.Messages {
		roles = append(roles, m.Role+":"+m.Content)
		for _, gone := range []string{"queued prompt", "ORPHAN", "long story", "chunk-"} {
			if strings.Contains(m.Content, gone) {
				t.Errorf("loom.history after reset holds %q: %s %q", gone, m.Role, m.Content)
			}
		}
	}
	if n := len(hist.Messages); n < 2 || hist.Messages[n-2].Content != "after reset" || hist.Messages[n-1].Content != "fresh answer" {
		t.Errorf("loom.history = %q, want the system prompt, then the new exchange", roles)
	}
	for i, r := range srv.Requests() {
		if strings.Contains(string(r.Body), "queued prompt") {
			t.Errorf("request %d sent the prompt that reset discarded", i+1)
		}
		if strings.Contains(r.LastUser(), "after reset") && strings.Contains(string(r.Body), "long story") {
			t.Errorf("request %d of the new conversation carries the old one", i+1)
		}
	}

	// Nothing of the discarded turn is ever shown, and the session stays
	// idle: once a status round trip has passed, no stream is left.
	var st struct {
		State  string   `json:"state"`
		Queued []string `json:"queued"`
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdStatus, FolderArgs{}, &st); err != nil {
		t.Fatal(err)
	}
	if st.State != "WaitingForUserInput" || len(st.Queued) != 0 {
		t.Errorf("status after the new turn: %s, queued %q", st.State, st.Queued)
	}
	for _, m := range e.ed.Messages(MethodDisplayMessage) {
		var p DisplayMessageParams
		if json.Unmarshal(m.Params, &p) == nil && (p.Turn == queued.Turn || strings.Contains(p.Text, "ORPHAN")) {
			t.Errorf("displayed %q of turn %d, the turn reset discarded", p.Text, p.Turn)
		}
	}
}
