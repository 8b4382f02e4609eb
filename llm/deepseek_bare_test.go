package llm

import (
	"testing"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm/llmtest"
)

// TestDeepSeekToolTurnWithoutReasoning: DeepSeek (thinking mode) returns a
// tool turn with no reasoning; the next request of the tool loop, and of
// every later turn, carries it back as DeepSeek accepts it (not "", which
// it refuses as missing: HTTP 400), so the conversation stays usable.
func TestDeepSeekToolTurnWithoutReasoning(t *testing.T) {
	plan := "tools_bare"
	srv := llmtest.NewDialectServer(t, "deepseek", func(int, llmtest.Request) string { return plan })
	p := dialectProvider(t, srv, "deepseek")
	got := streamOnce(t, p, Request{ID: 1, Messages: []fsm.Message{{Role: fsm.RoleUser, Content: "go"}}})
	if got.err != nil {
		t.Fatal(got.err.Message)
	}
	if got.done.Reasoning != "" || len(got.done.ToolCalls) != 1 {
		t.Fatalf("the bare tool turn decoded to reasoning %q, %d calls", got.done.Reasoning, len(got.done.ToolCalls))
	}
	loop := []fsm.Message{{Role: fsm.RoleUser, Content: "go"},
		{Role: fsm.RoleAssistant, ToolCalls: got.done.ToolCalls, Reasoning: got.done.Reasoning},
		{Role: fsm.RoleTool, ToolCallID: got.done.ToolCalls[0].ID, Content: "hello"}}
	plan = "answer"
	r := streamOnce(t, p, Request{ID: 2, Messages: loop})
	if r.err != nil {
		t.Fatalf("the tool loop's next request was refused: %s", r.err.Message)
	}
	later := append(loop, fsm.Message{Role: fsm.RoleAssistant, Content: r.text}, fsm.Message{Role: fsm.RoleUser, Content: "and now?"})
	if r := streamOnce(t, p, Request{ID: 3, Messages: later}); r.err != nil {
		t.Fatalf("a later prompt was refused: %s", r.err.Message)
	}
	if n := srv.Rejected(); n != 0 {
		t.Fatalf("DeepSeek refused %d requests", n)
	}
}
