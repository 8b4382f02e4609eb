package jsonrpc

import (
	"os"
	"path/filepath"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// TestStatusSaysEditsInForce: loom.status reports tools.edits as in
// force, so a client's "Review edits before they apply" toggle shows it:
// the editor's pulled setting, and an untrusted folder's .loom.toml that
// asks for review winning over an editor's "auto" (a widening it may not
// undo), which the setting alone would not show.
func TestStatusSaysEditsInForce(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	edits := func(v string) map[string]any {
		return map[string]any{"loom": map[string]any{"tools": map[string]any{"edits": v}}}
	}
	e := newEnv(t, envOptions{cfg: fakeeditor.Config{Loom: true, Folders: []string{t.TempDir()}, Settings: edits("review")}})
	e.statusUntil("edits = review from the setting", func(st workspace.Status) bool { return st.Edits == "review" })
	e.ed.SetSettings(edits("auto"))
	if err := e.ed.Notify(e.ctx, protocol.MethodWorkspaceDidChangeConfiguration, map[string]any{"settings": nil}); err != nil {
		t.Fatal(err)
	}
	e.statusUntil("edits = auto from the setting", func(st workspace.Status) bool { return st.Edits == "auto" })

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".loom.toml"), []byte("[tools]\nedits = \"review\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e2 := newEnv(t, envOptions{cfg: fakeeditor.Config{Loom: true, Folders: []string{dir}, Settings: edits("auto")}})
	e2.statusUntil("edits = review from the untrusted .loom.toml", func(st workspace.Status) bool { return st.Edits == "review" })
}
