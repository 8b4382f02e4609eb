package workspace

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
)

// subagentNote is met by a NoteSubagent of child in state (any update
// when activity is set: one with an Activity).
func subagentNote(child, state string, activity bool) func(Notification) bool {
	return func(n Notification) bool {
		return n.Kind == NoteSubagent && n.Subagent != nil && n.Subagent.Child == child && n.Subagent.State == state &&
			(!activity || n.Subagent.Activity != "")
	}
}

// transcriptHas reports whether some message of msgs contains want.
func transcriptHas(msgs []fsm.Message, want string) bool {
	for _, m := range msgs {
		if strings.Contains(m.Content, want) {
			return true
		}
	}
	return false
}

// childrenByID are s.Children by child id.
func childrenByID(t *testing.T, s *Conversation) map[string]ChildView {
	t.Helper()
	kids, err := s.Children(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]ChildView{}
	for _, k := range kids {
		out[k.Info.Child] = k
	}
	return out
}

// With max_depth = 2, a child starts a grandchild. Stopping the
// grandchild by its id through the user's conversation stops it alone
// (StopSubagent resolves any descendant): the child's model reads that
// the user stopped it and the turn goes on. A child's tokens are told on
// each model response, not only with its tool calls. Children lists the
// children with their states and transcripts — live while they run,
// from their journals once ended, and again from the journal after the
// conversation is opened anew.
func TestSubagentGrandchildStopAndChildrenView(t *testing.T) {
	dir := gitRepo(t, map[string]string{"a.go": "package a\n"})
	grandchild := make(chan struct{})
	model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		res, isResult := lastToolResult(req)
		switch task := childTask(req); {
		case task == "" && !isResult:
			respond(req, emit, "", agentCall("w1", "worker", "spawn a helper"), agentCall("r1", "researcher", "look around"))
		case task == "":
			respond(req, emit, "the parent goes on")
		case task == "spawn a helper" && !isResult:
			respond(req, emit, "", agentCall("g1", "worker", "wait forever"))
		case task == "spawn a helper":
			respond(req, emit, "my helper said: "+res)
		case task == "wait forever":
			close(grandchild)
			<-ctx.Done()
		default:
			emit(fsm.LlmTextDelta{Request: req.ID, Text: "nothing to see"})
			emit(fsm.LlmCompleted{Request: req.ID, Usage: fsm.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}})
		}
	})
	stateDir := t.TempDir()
	tweak := func(c *config.Config) { c.Subagents.MaxDepth = 2 }
	h := newTestHostIn(t, stateDir, model, tweak)
	s, err := h.AddFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	turn, err := s.Ask(ctx, "delegate")
	if err != nil {
		t.Fatal(err)
	}
	<-grandchild
	h.editor.waitFor(t, "1-r1 done", subagentNote("1-r1", "completed", false))
	h.editor.waitFor(t, "1-r1's tokens before its end", func(n Notification) bool {
		return subagentNote("1-r1", "running", true)(n) && n.Subagent.Usage != nil && n.Subagent.Usage.TotalTokens == 15
	})

	kids := childrenByID(t, s)
	if w1, r1 := kids["1-w1"], kids["1-r1"]; len(kids) != 2 || w1.Info.State != "running" || r1.Info.State != "completed" ||
		!transcriptHas(w1.Messages, "spawn a helper") || !transcriptHas(r1.Messages, "nothing to see") || r1.Info.Usage == nil || r1.Info.Usage.TotalTokens != 15 {
		t.Fatalf("children while 1-w1 runs: %+v", kids)
	}

	if err := s.StopSubagent(ctx, "1-g9"); !errors.Is(err, ErrNoSubagent) {
		t.Fatalf("stopping no such grandchild: %v", err)
	}
	if err := s.StopSubagent(ctx, "1-g1"); err != nil {
		t.Fatalf("stopping the grandchild: %v", err)
	}
	h.editor.turnEndedIn(t, s.ID(), turn)
	if text := h.editor.text(turn); !strings.Contains(text, "the parent goes on") {
		t.Fatalf("the parent's turn: %q", text)
	}

	kids = childrenByID(t, s)
	if w1 := kids["1-w1"]; len(kids) != 2 || w1.Info.State != "completed" || !transcriptHas(w1.Messages, "the subagent was stopped: the user stopped it") {
		t.Fatalf("children after the turn: %+v", kids)
	}
	id := s.ID()
	h.Close()

	// Opened anew from its journal: the same children, ended.
	h2 := newTestHostIn(t, stateDir, model, tweak)
	s2, err := h2.AddFolder(dir) // the folder's most recent conversation: this one
	if err != nil {
		t.Fatal(err)
	}
	if s2.ID() != id {
		t.Fatalf("reopened %s, want %s", s2.ID(), id)
	}
	again := childrenByID(t, s2)
	if w1, r1 := again["1-w1"], again["1-r1"]; len(again) != 2 || w1.Info.State != "completed" || r1.Info.State != "completed" ||
		!transcriptHas(w1.Messages, "my helper said") || w1.Info.Conversation != kids["1-w1"].Info.Conversation || r1.Info.Agent != "researcher" {
		t.Fatalf("children after reopening: %+v", again)
	}
}
