package jsonrpc

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/internal/gittest"
	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
)

// TestUndoFileCommand: loom.undoFile over the wire takes the agent's
// turn-one line out of r.txt and keeps the user's line typed since; a
// missing path is an InvalidParams error.
func TestUndoFileCommand(t *testing.T) {
	dir := gittest.Repo(t, map[string]string{"r.txt": reviewBase})
	e := newEnv(t, envOptions{script: rewindScript, cfg: fakeeditor.Config{Loom: true, Folders: []string{dir}},
		options: map[string]any{"hooks": map[string]any{"auto_commit": true}}})
	path := filepath.Join(e.folder, "r.txt")
	from := len(e.ed.Messages(""))
	e.ask("turn one")
	e.await("turn one ended", turnEnded(e.folder, from))
	writeFile(t, path, strings.Replace(readFile(t, path), "d\n", "d by the user\n", 1))
	var res UndoResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdUndoFile, UndoFileArgs{Path: "r.txt"}, &res); err != nil {
		t.Fatalf("loom.undoFile: %v", err)
	}
	if got, want := readFile(t, path), strings.Replace(reviewBase, "d\n", "d by the user\n", 1); got != want {
		t.Fatalf("r.txt = %q, want %q", got, want)
	}
	if !strings.Contains(res.Message, "undid the agent's changes to r.txt") {
		t.Fatalf("result %+v", res)
	}
	if subject := strings.TrimSpace(gittest.Run(t, dir, "log", "-1", "--format=%s")); subject != "loom: undo the agent's changes to r.txt" {
		t.Fatalf("HEAD is %q", subject)
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdUndoFile, UndoFileArgs{}, &res); err == nil || !strings.Contains(err.Error(), "path is required") {
		t.Fatalf("no path: %v", err)
	}
}
