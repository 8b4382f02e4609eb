package llm

import (
	"testing"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// TestMatchConditions: each condition a script step's match sets must
// hold; an unset one asks nothing.
func TestMatchConditions(t *testing.T) {
	msgs := []fsm.Message{
		{Role: fsm.RoleUser, Content: "fix the bug"},
		{Role: fsm.RoleAssistant, Content: "reading"},
		{Role: fsm.RoleTool, Content: "package main"},
		{Role: fsm.RoleUser, Content: "and the tests"},
		{Role: fsm.RoleAssistant, Content: "done"},
	}
	req := &Request{Messages: msgs, Tools: []ToolSchema{{Name: "read_file"}}}
	tests := []struct {
		m    Match
		want bool
	}{
		{Match{}, true},
		{Match{LastUserContains: "tests"}, true},
		{Match{LastUserContains: "bug"}, false}, // an earlier user message
		{Match{LastToolResultContains: "package"}, true},
		{Match{LastToolResultContains: "func"}, false},
		{Match{LastMessageContains: "done"}, true},
		{Match{LastMessageContains: "tests"}, false},
		{Match{LastRole: "assistant"}, true},
		{Match{LastRole: "user"}, false},
		{Match{LastRole: "assistant", LastMessageContains: "don"}, true},
		{Match{LastRole: "tool", LastMessageContains: "done"}, false},
		{Match{HasTool: "read_file"}, true},
		{Match{HasTool: "bash"}, false},
		{Match{LastUserContains: "tests", HasTool: "bash"}, false},
	}
	for _, tt := range tests {
		if got := tt.m.matches(req); got != tt.want {
			t.Errorf("%+v matches = %v, want %v", tt.m, got, tt.want)
		}
	}
	empty := &Request{}
	for _, m := range []Match{{LastUserContains: "x"}, {LastToolResultContains: "x"}, {LastMessageContains: "x"}, {LastRole: "user"}, {HasTool: "x"}} {
		if m.matches(empty) {
			t.Errorf("%+v matches a request without messages or tools", m)
		}
	}
	if !(&Match{}).matches(empty) {
		t.Errorf("an empty match refused an empty request")
	}
}

// TestResponsesFinishReason: response.incomplete's reason in Chat
// Completions' words.
func TestResponsesFinishReason(t *testing.T) {
	for reason, want := range map[string]string{"max_output_tokens": "length", "": "stop", "content_filter": "content_filter"} {
		r := &respResponse{}
		r.IncompleteDetails = &struct {
			Reason string `json:"reason"`
		}{reason}
		if got := r.finishReason(); got != want {
			t.Errorf("incomplete for %q: finish reason %q, want %q", reason, got, want)
		}
	}
	if got := (&respResponse{}).finishReason(); got != "stop" {
		t.Errorf("complete: finish reason %q, want stop", got)
	}
}
