package jsonrpc

import (
	"os"
	"path/filepath"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
)

// loneCRScript reads a.txt and edits a line the user typed: it finds the
// text only if the server's copy of the buffer is the editor's.
const loneCRScript = `
[[step]]
match.last_role = "user"
text = ["Reading."]
  [[step.tool_call]]
  name = "read_file"
  arguments = '{"path":"a.txt"}'

[[step]]
match.last_tool_result_contains = "G: delta"
text = ["Editing."]
  [[step.tool_call]]
  name = "edit_file"
  arguments = '{"path":"a.txt","old_string":"G: delta","new_string":"G: epsilon"}'

[[step]]
match.last_role = "tool"
text = ["Done: epsilon."]
`

// A document whose lines end in a lone "\r" (classic Mac), edited by the
// user with incremental didChanges: the server's copy stays the editor's,
// so the agent finds what the user typed, and its edit, sent back as LSP
// positions, lands where the user sees it. Every expected text is worked
// out by hand, so a converter shared by the fake editor and the server
// cannot hide a mistake.
func TestLoneCRDocumentStaysInStep(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.txt")
	writeFile(t, path, "alpha\rbeta\rgamma\r")
	e := newEnv(t, envOptions{script: loneCRScript, cfg: fakeeditor.Config{Loom: true, ApplyEdit: true, Folders: []string{dir}}})
	if err := e.ed.OpenFile(e.ctx, path); err != nil {
		t.Fatal(err)
	}
	at := func(line, char uint32) protocol.Position { return protocol.Position{Line: line, Character: char} }
	for _, step := range []struct {
		r    protocol.Range
		text string
		want string
	}{
		{protocol.Range{Start: at(2, 0), End: at(2, 0)}, "G: ", "alpha\rbeta\rG: gamma\r"},
		{protocol.Range{Start: at(1, 4), End: at(1, 4)}, "!", "alpha\rbeta!\rG: gamma\r"},
		{protocol.Range{Start: at(0, 5), End: at(0, 5)}, "\rone", "alpha\rone\rbeta!\rG: gamma\r"},
		{protocol.Range{Start: at(3, 3), End: at(3, 99)}, "delta", "alpha\rone\rbeta!\rG: delta\r"},
	} {
		if err := e.ed.EditBuffer(e.ctx, path, step.r, step.text); err != nil {
			t.Fatal(err)
		}
		if got, _, _ := e.ed.BufferText(path); got != step.want {
			t.Fatalf("editor buffer = %q, want %q", got, step.want)
		}
	}
	e.ask("change delta to epsilon")
	e.await("answer streamed", containsText(e.folder, "Done: epsilon."))
	if got, version, _ := e.ed.BufferText(path); got != "alpha\rone\rbeta!\rG: epsilon\r" || version != 6 {
		t.Fatalf("buffer = %q v%d, want the agent's edit on the line the user typed (v6)", got, version)
	}
	if b, _ := os.ReadFile(path); string(b) != "alpha\rbeta\rgamma\r" {
		t.Errorf("disk = %q: nothing should have saved the buffer", b)
	}
}
