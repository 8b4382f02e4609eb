package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/jsonrpc"
	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
)

// The built binary, with the workspace folder opened through an
// unresolved symlink: the edit lands in the buffer the editor opened
// under the link.
func TestBinarySymlinkedFolderEditsTheOpenBuffer(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "model.toml")
	if err := os.WriteFile(script, []byte(coreScript), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, "a.txt"), []byte("hello world\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := startServer(t, loomBinary)
	ed := fakeeditor.Connect(ctx, c.conn, fakeeditor.Config{
		Loom: true, ApplyEdit: true, WorkDoneProgress: true, Folders: []string{link},
		InitializationOptions: map[string]any{
			"model": map[string]any{"provider": "script", "script": script},
			"hooks": map[string]any{"auto_commit": false},
		},
	})
	if _, err := ed.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(link, "a.txt")
	if err := ed.OpenFile(ctx, path); err != nil {
		t.Fatal(err)
	}
	if err := ed.ExecuteCommand(ctx, jsonrpc.CmdAsk, jsonrpc.AskArgs{Prompt: "change hello"}, nil); err != nil {
		t.Fatal(err)
	}
	err := ed.Await(ctx, "answer", func(msgs []fakeeditor.Message) bool {
		var text strings.Builder
		for _, m := range msgs {
			var p jsonrpc.DisplayMessageParams
			if m.Method == jsonrpc.MethodDisplayMessage && json.Unmarshal(m.Params, &p) == nil {
				text.WriteString(p.Text)
			}
		}
		return strings.HasSuffix(text.String(), "Done.")
	})
	if err != nil {
		t.Fatal(err)
	}
	if text, _, _ := ed.BufferText(path); text != "goodbye world\n" {
		t.Errorf("buffer opened through the link = %q, want the edit applied", text)
	}
}
