package jsonrpc

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
	"github.com/loom-lsp/loom-lsp/tools/sandbox"
)

// escalationScript appends to ~/.bashrc, which the sandbox blocks, then
// reports what it got.
const escalationScript = `
[[step]]
match.last_tool_result_contains = "approved running it again outside the sandbox"
text = ["ran outside"]
[[step]]
match.last_tool_result_contains = "declined to run it outside the sandbox"
text = ["still blocked"]
[[step]]
text = ["editing your shell"]
  [[step.tool_call]]
  id = "b1"
  name = "bash"
  arguments = '{"command":"echo pwned >> ~/.bashrc"}'
`

// TestSandboxEscalationOverLSP: under bash = "ask", the command is
// approved, blocked by the sandbox, and the editor is asked once more,
// with the reason, whether to run it outside; loom.status shows the
// sandbox.
func TestSandboxEscalationOverLSP(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rerun   bool
		changed bool
		answer  string
	}{
		{"approved", true, true, "ran outside"},
		{"denied", false, false, "still blocked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			bashrc := filepath.Join(home, ".bashrc")
			os.WriteFile(bashrc, []byte("# mine\n"), 0o644)
			t.Setenv("HOME", home)
			t.Setenv("TMPDIR", t.TempDir())
			if s := sandbox.New(sandbox.Policy{Root: home}); !s.Active() {
				t.Skipf("no Landlock here: %s", s.Unavailable())
			}
			var mu sync.Mutex
			var asked []string
			hooks := fakeeditor.Hooks{ShowMessageRequest: func(p *protocol.ShowMessageRequestParams) *protocol.MessageActionItem {
				mu.Lock()
				defer mu.Unlock()
				asked = append(asked, p.Message)
				if len(asked) == 2 && !tc.rerun {
					return &protocol.MessageActionItem{Title: approveDeny}
				}
				return &protocol.MessageActionItem{Title: approveAllow}
			}}
			e := newEnv(t, envOptions{cfg: fakeeditor.Config{Loom: true}, script: escalationScript, hooks: hooks,
				options: map[string]any{"tools": map[string]any{"bash": "ask"}}})
			if st := e.status(); !strings.HasPrefix(st.Sandbox, "landlock ABI ") || !strings.Contains(st.Sandbox, "network: on") {
				t.Errorf("loom.status sandbox = %q", st.Sandbox)
			}
			e.ask("make my shell nicer")
			e.await("the answer", containsText(e.folder, tc.answer))
			mu.Lock()
			defer mu.Unlock()
			if len(asked) != 2 || !strings.Contains(asked[1], "bash outside the sandbox") || !strings.Contains(asked[1], "The sandbox blocked it: write to "+bashrc) {
				t.Fatalf("approvals asked: %q", asked)
			}
			data, _ := os.ReadFile(bashrc)
			if changed := strings.Contains(string(data), "pwned"); changed != tc.changed {
				t.Errorf("~/.bashrc changed = %v, want %v", changed, tc.changed)
			}
		})
	}
}
