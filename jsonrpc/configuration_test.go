package jsonrpc

import (
	"testing"

	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
)

// TestSettingsSeenByTheNextRequest: a request the editor sends right
// after workspace/didChangeConfiguration sees the new settings (the VS
// Code extension asks loom.status at once to draw the model's name).
func TestSettingsSeenByTheNextRequest(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	e := newEnv(t, envOptions{cfg: fakeeditor.Config{Loom: true, Folders: []string{t.TempDir()}}})
	for _, timeout := range []string{"1m", "2m", "3m"} {
		if err := e.ed.Notify(e.ctx, protocol.MethodWorkspaceDidChangeConfiguration,
			map[string]any{"settings": map[string]any{"loom": map[string]any{
				"tools": map[string]any{"approval_timeout": timeout}}}}); err != nil {
			t.Fatal(err)
		}
		if st := e.status(); st.ApprovalTimeout != timeout {
			t.Fatalf("loom.status right after the settings: approval timeout %q, want %q", st.ApprovalTimeout, timeout)
		}
	}
}
