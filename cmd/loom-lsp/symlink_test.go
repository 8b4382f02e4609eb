package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/jsonrpc"
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
	script := writeScript(t, coreScript)
	writeFile(t, real, "a.txt", "hello world\n")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, ed := startInitialized(t, ctx, loomEditor([]string{link}, scriptedOptions(script, nil)))
	path := filepath.Join(link, "a.txt")
	if err := ed.OpenFile(ctx, path); err != nil {
		t.Fatal(err)
	}
	if err := ed.ExecuteCommand(ctx, jsonrpc.CmdAsk, jsonrpc.AskArgs{Prompt: "change hello"}, nil); err != nil {
		t.Fatal(err)
	}
	awaitText(t, ctx, ed, "answer", func(text string) bool { return strings.HasSuffix(text, "Done.") })
	if text, _, _ := ed.BufferText(path); text != "goodbye world\n" {
		t.Errorf("buffer opened through the link = %q, want the edit applied", text)
	}
}
