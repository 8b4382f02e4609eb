package jsonrpc

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
	"github.com/loom-lsp/loom-lsp/llm/llmtest"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// thinkingModel is a real OpenAI-compatible HTTP server whose model
// streams reasoning_content before its answer, and reports cached and
// reasoning tokens.
func thinkingModel(t *testing.T) *llmtest.Server {
	return llmtest.NewServer(t, func(r llmtest.Request) llmtest.Reply {
		return llmtest.Reply{
			Reasoning: []string{"THOUGHT-1 the user ", "greets me. "},
			Text:      []string{"Hello ", "there."},
			Usage:     &llmtest.Usage{Prompt: 40, Completion: 12, Cached: llmtest.Int(32), Reasoning: llmtest.Int(8)},
		}
	})
}

// thoughts returns the folder's thought texts, joined.
func thoughts(t *testing.T, msgs []fakeeditor.Message, folder string) string {
	var b strings.Builder
	for _, m := range msgs {
		var p DisplayMessageParams
		if m.Method == MethodDisplayMessage && json.Unmarshal(m.Params, &p) == nil && p.Folder == folder && p.Kind == KindThought {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// TestThoughtsAndUsage: a client that declares experimental.loom.thoughts
// gets the model's reasoning as loom/displayMessage of kind "thought",
// numbered in the same seq as the answer and before it; the answer, the
// history and the next request hold none of it; the turn's end carries
// the usage with cached and reasoning tokens in loom/state,
// loom/turnEnded and loom.status.
func TestThoughtsAndUsage(t *testing.T) {
	srv := thinkingModel(t)
	cfg := loomClient
	cfg.Thoughts = true
	e := newEnv(t, envOptions{cfg: cfg, options: modelServerOptions(srv)})
	first := e.ask("hi")
	e.await("the turn ends", turnEnded(e.folder, 0))
	from := len(e.ed.Messages(""))
	e.ask("hi again")
	e.await("the second turn ends", turnEnded(e.folder, from))

	msgs := e.ed.Messages("")
	if got := displayed(t, msgs, e.folder, first.Turn); got != "Hello there." {
		t.Errorf("answer %q, want the text alone", got)
	}
	if got := thoughts(t, msgs, e.folder); got != "THOUGHT-1 the user greets me. THOUGHT-1 the user greets me. " {
		t.Errorf("thoughts %q", got)
	}
	// The first thought comes before the answer's first text.
	for _, m := range msgs {
		var p DisplayMessageParams
		if m.Method == MethodDisplayMessage && json.Unmarshal(m.Params, &p) == nil {
			if p.Kind != KindThought {
				t.Errorf("the answer (%q) came before the reasoning", p.Text)
			}
			break
		}
	}
	for i, r := range srv.Requests() {
		if strings.Contains(string(r.Body), "THOUGHT-1") {
			t.Errorf("request %d sends the reasoning back to the model", i+1)
		}
	}
	var hist HistoryResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdHistory, FolderArgs{}, &hist); err != nil {
		t.Fatal(err)
	}
	for _, m := range hist.Messages {
		if strings.Contains(m.Content, "THOUGHT-1") {
			t.Errorf("loom.history holds the reasoning: %s %q", m.Role, m.Content)
		}
	}

	// Usage at the end of each turn, and of the conversation.
	var ended []TurnEndedParams
	var idle []StateParams
	for _, m := range msgs {
		switch m.Method {
		case MethodTurnEnded:
			var p TurnEndedParams
			json.Unmarshal(m.Params, &p)
			ended = append(ended, p)
		case MethodState:
			var p StateParams
			json.Unmarshal(m.Params, &p)
			if p.State == "WaitingForUserInput" && p.Usage != nil {
				idle = append(idle, p)
			}
		}
	}
	perTurn := "40/12/52 cached=32 reasoning=8"
	if len(ended) != 2 || describedUsage(ended[1].Usage) != perTurn || ended[1].TotalUsage == nil ||
		describedUsage(*ended[1].TotalUsage) != "80/24/104 cached=64 reasoning=16" {
		t.Errorf("loom/turnEnded %+v", ended)
	}
	if len(idle) == 0 || describedUsage(*idle[len(idle)-1].TotalUsage) != "80/24/104 cached=64 reasoning=16" ||
		describedUsage(*idle[len(idle)-1].Usage) != perTurn {
		t.Errorf("loom/state at the turn's end carries no usage: %+v", idle)
	}
	var st workspace.Status
	if err := e.ed.ExecuteCommand(e.ctx, CmdStatus, FolderArgs{}, &st); err != nil {
		t.Fatal(err)
	}
	if describedUsage(st.Usage.Turn) != perTurn || describedUsage(st.Usage.Conversation) != "80/24/104 cached=64 reasoning=16" {
		t.Errorf("loom.status usage %+v", st.Usage)
	}
}

// describedUsage is a usage in fsm's canonical text.
func describedUsage(u fsm.Usage) string {
	d := fsm.Describe(fsm.WaitForInput{Usage: u})
	_, after, _ := strings.Cut(d, "usage=")
	return after
}

// TestNoThoughtsWithoutTheCapability: a client that knows loom/* but did
// not declare experimental.loom.thoughts never gets the reasoning, so it
// cannot show it as part of the answer.
func TestNoThoughtsWithoutTheCapability(t *testing.T) {
	srv := thinkingModel(t)
	e := newEnv(t, envOptions{cfg: loomClient, options: modelServerOptions(srv)})
	e.ask("hi")
	e.await("the turn ends", turnEnded(e.folder, 0))
	for _, m := range e.ed.Messages("") {
		if strings.Contains(string(m.Params), "THOUGHT-1") {
			t.Errorf("%s carries the reasoning to a client that did not ask for it: %s", m.Method, m.Params)
		}
	}
	if got := displayed(t, e.ed.Messages(""), e.folder, 1); got != "Hello there." {
		t.Errorf("answer %q", got)
	}
}
