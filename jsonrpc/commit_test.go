package jsonrpc

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/internal/gittest"
	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
)

// A generic LSP client (no loom/saveDocuments) that applies the agent's
// edit to its open buffer gets the commit all the same: it holds the
// agent's text, while the buffer stays unsaved and the disk untouched.
func TestGenericClientGetsTheAutoCommit(t *testing.T) {
	dir := gittest.Repo(t, map[string]string{"a.txt": "hello world\n"})
	e := newEnv(t, envOptions{script: editScript, cfg: fakeeditor.Config{ApplyEdit: true, Folders: []string{dir}},
		options: map[string]any{"hooks": map[string]any{"auto_commit": true}}})
	path := filepath.Join(dir, "a.txt")
	if err := e.ed.OpenFile(e.ctx, path); err != nil {
		t.Fatal(err)
	}
	e.ask("change hello")
	// A generic client hears of the turn through window/showMessage only.
	e.await("the turn's answer", func(msgs []fakeeditor.Message) bool {
		for _, m := range msgs {
			if m.Method == "window/showMessage" && strings.Contains(string(m.Params), "a.txt says goodbye") {
				return true
			}
		}
		return false
	})
	if got := gittest.Run(t, dir, "show", "HEAD:a.txt"); got != "goodbye world\n" {
		t.Fatalf("HEAD:a.txt = %q, want the agent's edit committed", got)
	}
	if text, _, _ := e.ed.BufferText(path); text != "goodbye world\n" {
		t.Errorf("buffer = %q", text)
	}
	if b, _ := os.ReadFile(path); string(b) != "hello world\n" {
		t.Errorf("disk = %q: nothing should have saved the buffer", b)
	}
	// The commit and what the user must do are a message they see (type
	// Info), once, not a log line.
	var shown []string
	for _, m := range e.ed.Messages("window/showMessage") {
		var p struct {
			Type    int    `json:"type"`
			Message string `json:"message"`
		}
		json.Unmarshal(m.Params, &p)
		if strings.Contains(p.Message, "committed ") {
			if p.Type != 3 {
				t.Errorf("the commit was shown as type %d, want Info (3): %q", p.Type, p.Message)
			}
			shown = append(shown, p.Message)
		}
	}
	if len(shown) != 1 || !strings.Contains(shown[0], "saved in git, not yet on disk: save the file (a.txt)") {
		t.Errorf("commit messages shown: %q", shown)
	}
}
