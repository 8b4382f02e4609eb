package toolcall

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/tools/cmdrules"
	"github.com/loom-lsp/loom-lsp/workspace/changes"
)

// recorder serves every port and records what the stages asked of it,
// call by call.
type recorder struct {
	mu     sync.Mutex
	log    map[string][]string
	answer bool // the user's answer to AskCommand
	done   map[string]Outcome
}

func newRecorder() *recorder {
	return &recorder{log: map[string][]string{}, done: map[string]Outcome{}}
}

func (r *recorder) note(id, what string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log[id] = append(r.log[id], what)
}

func (r *recorder) PreToolUse(_ context.Context, _ uint64, c fsm.ToolCall) Hooked {
	r.note(c.ID, "pre")
	return Hooked{Call: c}
}
func (r *recorder) PostToolUse(_ context.Context, c fsm.ToolCall, _ Outcome) []fsm.HookReport {
	r.note(c.ID, "post")
	return nil
}
func (r *recorder) Tool(name string) (bool, string) { return name != "fly", "" }
func (r *recorder) FetchHosts() []string            { return nil }

func (r *recorder) Rules(c fsm.ToolCall, _ bool) ([]cmdrules.Rule, []string) {
	r.note(c.ID, "rules")
	return []cmdrules.Rule{{Prefix: "go test"}}, nil
}
func (r *recorder) AskCommand(_ context.Context, _ uint64, c fsm.ToolCall, _ Decision, _ string) (string, bool, bool) {
	r.note(c.ID, "ask")
	if !r.answer {
		return "", true, false
	}
	return "", false, true
}
func (r *recorder) AskServer(_ context.Context, _ uint64, c fsm.ToolCall) string {
	r.note(c.ID, "ask-server")
	return ""
}
func (r *recorder) Running(_ context.Context, _ uint64, id string) bool {
	r.note(id, "running")
	return true
}
func (r *recorder) Approved(_ context.Context, ev fsm.ApprovalDecided) bool {
	r.note(ev.CallID, "approved:"+ev.Why)
	return true
}
func (r *recorder) Complete(_ context.Context, _ uint64, c fsm.ToolCall, out Outcome, _ []fsm.HookReport) {
	r.note(c.ID, "complete")
	r.mu.Lock()
	r.done[c.ID] = out
	r.mu.Unlock()
}
func (r *recorder) Run(_ context.Context, c fsm.ToolCall, writeLock bool) Outcome {
	r.note(c.ID, map[bool]string{true: "run locked", false: "run"}[writeLock])
	return Outcome{Result: "ran " + c.Name + "\n"}
}
func (r *recorder) Escalate(_ context.Context, c fsm.ToolCall, out Outcome, _ bool) Outcome {
	r.note(c.ID, "escalate")
	return out
}
func (r *recorder) Review(_ context.Context, _ uint64, c fsm.ToolCall, _ Outcome) (*changes.Proposal, bool) {
	r.note(c.ID, "review")
	return nil, false
}
func (r *recorder) Settle(context.Context, []*changes.Proposal) {}
func (r *recorder) Prime([]fsm.ToolCall)                        {}
func (r *recorder) BeforeEdit(_ context.Context, c fsm.ToolCall) {
	r.note(c.ID, "before-edit")
}
func (r *recorder) AfterCall(_ context.Context, c fsm.ToolCall, _ Outcome) (string, *Diagnosed) {
	r.note(c.ID, "after-call")
	if c.Name == "edit_file" {
		return "1 new problem", &Diagnosed{Summary: "1 new problem in a.go"}
	}
	return "", nil
}

// TestBatchStagesInOrder: each call goes through its stages in the one
// order the package documents, and a refused call neither runs nor gets
// its PostToolUse hooks.
func TestBatchStagesInOrder(t *testing.T) {
	r := newRecorder()
	r.answer = true
	calls := []fsm.ToolCall{
		{ID: "read", Name: "read_file", Arguments: `{"path":"a.go"}`},
		{ID: "edit", Name: "edit_file", Arguments: `{"path":"a.go","old_string":"a","new_string":"b"}`},
		{ID: "rule", Name: "bash", Arguments: `{"command":"go test ./..."}`},
		{ID: "asked", Name: "bash", Arguments: `{"command":"make"}`},
		{ID: "unknown", Name: "fly", Arguments: `{}`},
		{ID: "protected", Name: "write_file", Arguments: `{"path":".loom.toml","content":"x"}`},
	}
	specs := map[string]fsm.ToolSpec{"edit_file": {Mutating: true}, "write_file": {Mutating: true}, "bash": {Mutating: true}}
	b := &Batch{Turn: 1, Calls: calls, Mutating: []bool{false, true, true, true, false, true}, Specs: specs,
		Policy: Policy{Root: t.TempDir(), Bash: config.PolicyAsk},
		Ports:  Ports{Hooks: r, Approver: r, Stepper: r, Runner: r, Reviewer: r, Diagnostics: r}}
	b.Run(context.Background())
	want := map[string]string{
		"read":      "pre running before-edit run review after-call post complete",
		"edit":      "pre running before-edit run locked review after-call post complete",
		"rule":      "pre rules approved:allowed by the rule commands starting with `go test` before-edit run locked review after-call post complete",
		"asked":     "pre rules ask before-edit run locked review after-call post complete",
		"unknown":   "pre review after-call complete",
		"protected": "pre review after-call complete",
	}
	for id, w := range want {
		if got := strings.Join(r.log[id], " "); got != w {
			t.Errorf("%s: stages %q, want %q", id, got, w)
		}
	}
	if out := r.done["edit"]; out.Diagnosed == nil || !strings.HasSuffix(out.Result, "\n\n1 new problem\n") {
		t.Errorf("the edit's result does not carry the diagnostics: %+v", out)
	}
	if out := r.done["protected"]; !out.IsError || !strings.Contains(out.Result, ".loom.toml is loom's configuration") {
		t.Errorf("protected write: %+v", out)
	}
}

// TestBatchDeniedCommandSettles: a command the user denies is settled by
// the machine: nothing runs and nothing more is reported.
func TestBatchDeniedCommandSettles(t *testing.T) {
	r := newRecorder()
	b := &Batch{Turn: 1, Calls: []fsm.ToolCall{{ID: "c", Name: "bash", Arguments: `{"command":"make"}`}}, Mutating: []bool{true},
		Specs: map[string]fsm.ToolSpec{"bash": {Mutating: true}}, Policy: Policy{Root: t.TempDir()},
		Ports: Ports{Hooks: r, Approver: r, Stepper: r, Runner: r, Reviewer: r, Diagnostics: r}}
	b.Run(context.Background())
	if got := strings.Join(r.log["c"], " "); got != "pre rules ask" {
		t.Errorf("stages %q, want the call to stop at the user's denial", got)
	}
}
