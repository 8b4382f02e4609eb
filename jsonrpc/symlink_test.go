package jsonrpc

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/internal/gittest"
	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
)

// A workspace folder opened through a symlink (~/code -> /data/code): the
// edit of an open buffer and loom/saveDocuments name the document by the
// URI the editor opened it under, so the edit lands in the buffer and the
// save request names a document the editor has open.
func TestSymlinkedFolderEditsTheOpenBuffer(t *testing.T) {
	real := gittest.Repo(t, map[string]string{"a.txt": "hello world\n"})
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var saveAsked []string
	e := newEnv(t, envOptions{
		script:     editScript,
		unresolved: true,
		cfg:        fakeeditor.Config{Loom: true, ApplyEdit: true, WorkDoneProgress: true, Folders: []string{link}},
		options:    map[string]any{"hooks": map[string]any{"auto_commit": true}},
		hooks: fakeeditor.Hooks{SaveDocuments: func(uris []string) []string {
			mu.Lock()
			saveAsked = append(saveAsked, uris...)
			mu.Unlock()
			return uris
		}},
	})
	path := filepath.Join(link, "a.txt") // as the editor knows it
	if err := e.ed.OpenFile(e.ctx, path); err != nil {
		t.Fatal(err)
	}
	e.ask("change hello to goodbye")
	e.await("answer streamed", func(msgs []fakeeditor.Message) bool {
		return indexOf(msgs, MethodDisplayMessage, "says goodbye") >= 0
	})
	for _, m := range e.ed.Messages(protocol.MethodWorkspaceApplyEdit) {
		if !strings.Contains(string(m.Params), "file://"+link+"/a.txt") {
			t.Errorf("applyEdit names a URI the editor did not open: %s", m.Params)
		}
	}
	if text, version, _ := e.ed.BufferText(path); text != "goodbye world\n" || version != 2 {
		t.Fatalf("buffer = %q v%d, want the edit applied through the link", text, version)
	}
	e.await("saveDocuments asked", hasMethod(MethodSaveDocuments, "a.txt"))
	mu.Lock()
	defer mu.Unlock()
	if len(saveAsked) != 1 || saveAsked[0] != "file://"+link+"/a.txt" {
		t.Errorf("loom/saveDocuments asked for %q, want the link's URI", saveAsked)
	}
}
