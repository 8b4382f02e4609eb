package jsonrpc

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
)

const rebaseScript = `
[[step]]
match.last_role = "user"
  [[step.tool_call]]
  name = "read_file"
  arguments = '{"path":"a.txt"}'

[[step]]
match.last_tool_result_contains = "line 20"
delay = "300ms"
  [[step.tool_call]]
  name = "edit_file"
  arguments = '{"path":"a.txt","old_string":"line 20\n","new_string":"line 20 fixed by loom\n"}'

[[step]]
match.last_role = "tool"
text = ["done"]
`

// The user types on line 1, twice: once after the agent read the file
// (before it computed its edit), once while the edit is on its way (the
// editor refuses the versioned edit). The agent's edit of line 20 lands,
// rebased onto the user's newer text, and the typing survives.
func TestEditRebasedWhileUserTypes(t *testing.T) {
	e := newEnv(t, envOptions{script: rebaseScript, cfg: fakeeditor.Config{Loom: true, ApplyEdit: true}})
	path := filepath.Join(e.folder, "a.txt")
	var b strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	writeFile(t, path, b.String())
	if err := e.ed.OpenFile(e.ctx, path); err != nil {
		t.Fatal(err)
	}
	rejected := 0
	e.ed.Hooks.BeforeApplyEdit = func(ed *fakeeditor.Editor, p *protocol.ApplyWorkspaceEditParams) {
		if rejected == 0 {
			rejected++
			// Typing lands first: the edit's version is now old.
			_ = ed.EditBuffer(e.ctx, path, protocol.Range{}, "// second\n")
		}
	}
	from := len(e.ed.Messages(""))
	e.ask("fix line 20")
	e.await("the file was read", func(msgs []fakeeditor.Message) bool {
		return lastStatus(toolCalls(t, msgs, "read_file")) == "succeeded"
	})
	// The model takes its time (delay) before its edit: the user types.
	if err := e.ed.EditBuffer(e.ctx, path, protocol.Range{}, "// first\n"); err != nil {
		t.Fatal(err)
	}
	e.await("turn ended", turnEnded(e.folder, from))
	if s := lastStatus(toolCalls(t, e.ed.Messages(""), "edit_file")); s != "succeeded" {
		t.Fatalf("edit_file %s, want succeeded", s)
	}
	text, _, _ := e.ed.BufferText(path)
	if !strings.Contains(text, "line 20 fixed by loom\n") || !strings.Contains(text, "// first\n") || !strings.Contains(text, "// second\n") {
		t.Fatalf("buffer:\n%s\nwant the agent's line 20 and both typed lines", text)
	}
	if rejected != 1 {
		t.Errorf("the editor refused %d edits, want 1 (the test did not exercise the retry)", rejected)
	}
}
