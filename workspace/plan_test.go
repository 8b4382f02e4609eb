package workspace

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
)

// planModel plays a planning session: in plan mode it keeps a todo list
// and tries a write (refused), proposes a plan, revises it when the user
// rejects it with a comment, and once accepted writes the file in agent
// mode. It records the tool results it read.
type planModel struct {
	results []string
}

func (p *planModel) provider() llm.Provider {
	return funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == fsm.RoleTool {
			p.results = append(p.results, last.Content)
		}
		var prevCall string
		if n := len(req.Messages); n > 1 && len(req.Messages[n-2].ToolCalls) > 0 {
			prevCall = req.Messages[n-2].ToolCalls[0].ID
		}
		switch {
		case strings.HasPrefix(last.Content, "Carry out this plan"):
			respond(req, emit, "", call("r2", "read_file", `{"path":"a.txt"}`))
		case prevCall == "r2":
			respond(req, emit, "", call("w2", "write_file", `{"path":"a.txt","content":"fresh\n"}`))
		case prevCall == "r3":
			respond(req, emit, "", call("w3", "write_file", `{"path":"a.txt","content":"agent\n"}`))
		case last.Role == fsm.RoleUser && !last.Note:
			respond(req, emit, "", call("u1", fsm.UpdatePlanTool, `{"plan":[{"step":"read a.txt","status":"in_progress"},{"step":"change it","status":"pending"}]}`),
				call("w1", "write_file", `{"path":"a.txt","content":"planned\n"}`))
		case strings.Contains(last.Content, "refused in plan mode"):
			respond(req, emit, "", call("p1", fsm.ProposePlanTool, `{"plan":"1. change a.txt"}`))
		case strings.Contains(last.Content, "rejected the plan: smaller"):
			respond(req, emit, "", call("p2", fsm.ProposePlanTool, `{"plan":"1. change a.txt a little"}`))
		case strings.Contains(last.Content, "accepted the plan. You are now in agent mode"):
			respond(req, emit, "", call("r3", "read_file", `{"path":"a.txt"}`))
		case prevCall == "w3" || last.Note && strings.Contains(last.Content, "commit"):
			respond(req, emit, "", call("u2", fsm.UpdatePlanTool, `{"plan":[{"step":"read a.txt","status":"completed"},{"step":"change it","status":"completed"}]}`))
		default:
			respond(req, emit, "done")
		}
	})
}

func (e *recordingEditor) planProposal(t *testing.T, plan string) Notification {
	t.Helper()
	return e.waitFor(t, "the plan "+plan, func(n Notification) bool { return n.Kind == NotePlanProposal && n.Text == plan })
}

// TestPlanModeRefusesWritesThenAgentCarriesOut: in plan mode a write is
// refused and the model reads why; a plan rejected with a comment is
// revised; accepting it switches to agent mode, where the write happens;
// the todo list and the mode are the same after a resume (journal
// replay).
func TestPlanModeRefusesWritesThenAgentCarriesOut(t *testing.T) {
	ctx := context.Background()
	state := t.TempDir()
	folder := gitRepo(t, map[string]string{"a.txt": "old\n"})
	model := &planModel{}
	h := newTestHostIn(t, state, model.provider(), nil)
	c, err := h.AddFolder(folder)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Controls().SetMode(ctx, fsm.ModePlan); err != nil {
		t.Fatal(err)
	}
	h.editor.waitFor(t, "the mode", func(n Notification) bool { return n.Kind == NoteMode && n.Text == "plan" })
	if _, err := c.Ask(ctx, "change a.txt"); err != nil {
		t.Fatal(err)
	}
	h.editor.planProposal(t, "1. change a.txt")
	if b, _ := os.ReadFile(filepath.Join(folder, "a.txt")); string(b) != "old\n" {
		t.Fatalf("a.txt in plan mode = %q", b)
	}
	if err := c.Controls().DecidePlan(ctx, PlanDecision{Comment: "smaller"}); err != nil {
		t.Fatal(err)
	}
	h.editor.planProposal(t, "1. change a.txt a little")
	if err := c.Controls().DecidePlan(ctx, PlanDecision{Accept: true}); err != nil {
		t.Fatal(err)
	}
	h.editor.turnEnded(t, 1)
	if b, _ := os.ReadFile(filepath.Join(folder, "a.txt")); string(b) != "agent\n" {
		t.Fatalf("a.txt after the accepted plan = %q; results %q", b, model.results)
	}
	if !slices.ContainsFunc(model.results, func(r string) bool { return strings.Contains(r, "write_file is refused in plan mode") }) {
		t.Fatalf("the model never read why its write was refused: %q", model.results)
	}
	if err := c.Controls().DecidePlan(ctx, PlanDecision{Accept: true}); err == nil {
		t.Fatal("DecidePlan with no plan waiting succeeded")
	}
	mode, plan, err := c.Controls().Mode(ctx)
	wantPlan := "[x] read a.txt; [x] change it"
	if err != nil || mode != fsm.ModeAgent || fsm.DescribePlan(plan, "; ") != wantPlan {
		t.Fatalf("mode, plan = %s, %s, %v", mode, fsm.DescribePlan(plan, "; "), err)
	}
	h.editor.waitFor(t, "the list shown", func(n Notification) bool {
		return n.Kind == NotePlan && fsm.DescribePlan(n.Plan, "; ") == wantPlan
	})
	want := transcript(t, c)
	h.Close()

	h2 := newTestHostIn(t, state, model.provider(), nil)
	c2, err := h2.AddFolder(folder)
	if err != nil {
		t.Fatal(err)
	}
	h2.editor.waitFor(t, "the list announced on resume", func(n Notification) bool {
		return n.Kind == NotePlan && fsm.DescribePlan(n.Plan, "; ") == wantPlan
	})
	mode, plan, _ = c2.Controls().Mode(ctx)
	if mode != fsm.ModeAgent || fsm.DescribePlan(plan, "; ") != wantPlan {
		t.Fatalf("resumed mode, plan = %s, %s", mode, fsm.DescribePlan(plan, "; "))
	}
	if got := transcript(t, c2); got != want {
		t.Fatalf("resumed transcript:\n%s\nwant:\n%s", got, want)
	}
}

// TestPlanAcceptedFresh: "accept and start a new conversation" starts one
// whose first prompt is the plan, in agent mode.
func TestPlanAcceptedFresh(t *testing.T) {
	ctx := context.Background()
	folder := gitRepo(t, map[string]string{"a.txt": "old\n"})
	model := &planModel{}
	h := newTestHost(t, model.provider(), nil)
	c, _ := h.AddFolder(folder)
	c.Controls().SetMode(ctx, fsm.ModePlan)
	c.Ask(ctx, "change a.txt")
	h.editor.planProposal(t, "1. change a.txt")
	if err := c.Controls().DecidePlan(ctx, PlanDecision{Accept: true, Fresh: true, Plan: "1. change a.txt freshly"}); err != nil {
		t.Fatal(err)
	}
	n := h.editor.waitFor(t, "the new conversation's turn", func(n Notification) bool {
		return n.Kind == NoteTurnStarted && strings.HasPrefix(n.Text, "Carry out this plan")
	})
	if !strings.Contains(n.Text, "1. change a.txt freshly") {
		t.Fatalf("fresh prompt = %q", n.Text)
	}
	h.editor.turnEnded(t, n.Turn)
	if b, _ := os.ReadFile(filepath.Join(folder, "a.txt")); string(b) != "fresh\n" {
		t.Fatalf("a.txt = %q", b)
	}
	msgs, _ := c.History(ctx)
	for _, m := range msgs {
		if strings.Contains(m.Content, "change a.txt") && !strings.HasPrefix(m.Content, "Carry out") && m.Role == fsm.RoleUser {
			t.Fatalf("the old conversation is still in the new one: %q", m.Content)
		}
	}
}
