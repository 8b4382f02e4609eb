package jsonrpc

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
)

// A subagent's approval over LSP is named as the child's: the message
// says which subagent and which task asks, and loom.subagent carries the
// same words; the user's "no" (the message dismissed) reaches the child,
// and the command does not run.
func TestApprovalOfSubagentNamed(t *testing.T) {
	script := `
[[step]]
match.last_user_contains = "delegate"
  [[step.tool_call]]
  id = "w1"
  name = "agent"
  arguments = '{"agent":"worker","task":"run the tests"}'

[[step]]
match.last_user_contains = "run the tests"
  [[step.tool_call]]
  id = "b1"
  name = "bash"
  arguments = '{"command":"touch ran"}'

[[step]]
match.last_tool_result_contains = "denied"
text = ["I could not run them."]

[[step]]
match.last_role = "tool"
text = ["The worker could not run the tests."]
`
	var mu sync.Mutex
	var asked []approvalAsked
	e := newEnv(t, envOptions{
		script:  script,
		cfg:     loomClient,
		options: map[string]any{"tools": map[string]any{"bash": "ask"}},
		hooks: fakeeditor.Hooks{RawShowMessageRequest: func(raw json.RawMessage) any {
			var a approvalAsked
			_ = json.Unmarshal(raw, &a)
			mu.Lock()
			asked = append(asked, a)
			mu.Unlock()
			return nil // dismissed: denied
		}},
	})
	e.ask("delegate it")
	e.await("the parent's answer", hasMethod("loom/displayMessage", "The worker could not run the tests."))
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 {
		t.Fatalf("%d approvals asked, want 1", len(asked))
	}
	a := asked[0]
	if !strings.HasPrefix(a.Message, "Loom's subagent worker 1-w1 (task: run the tests), (") || a.Loom.Subagent != "subagent worker 1-w1 (task: run the tests)" {
		t.Errorf("the child's approval: message %q, loom.subagent %q", a.Message, a.Loom.Subagent)
	}
	if _, err := os.Stat(filepath.Join(e.folder, "ran")); err == nil {
		t.Error("the denied command ran")
	}
}
