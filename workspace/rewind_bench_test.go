package workspace

import (
	"context"
	"fmt"
	"testing"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/internal/gittest"
	"github.com/loom-lsp/loom-lsp/llm"
)

// BenchmarkRewind100Files times a files rewind of a turn whose commit
// edited 100 files, and its redo (each restores the 100 files on disk):
// one op is a rewind and a redo.
func BenchmarkRewind100Files(b *testing.B) {
	files := map[string]string{}
	var reads, edits []fsm.ToolCall
	for i := range 100 {
		name := fmt.Sprintf("d%d/f%03d.txt", i%10, i)
		files[name] = "line of " + name + "\nand another\n"
		reads = append(reads, call(fmt.Sprint("r", i), "read_file", `{"path":"`+name+`"}`))
		edits = append(edits, edit(fmt.Sprint("e", i), name, "line of", "AGENT's line of"))
	}
	dir := gittest.Repo(b, files)
	ed := newRecordingEditor()
	model := turnsModel([][]fsm.ToolCall{reads, edits})
	h := NewHost(HostOptions{
		Editor: ed,
		Config: func(string, []config.Override) (config.Config, error) {
			cfg := config.Default()
			cfg.Model.Name = "bench"
			return cfg, nil
		},
		Provider: func(config.Config, func(string) string) (llm.Provider, error) { return model, nil },
		StateDir: b.TempDir(),
	})
	defer h.Close()
	s, err := h.AddFolder(dir)
	if err != nil {
		b.Fatal(err)
	}
	turn, err := s.Ask(context.Background(), "edit them")
	if err != nil {
		b.Fatal(err)
	}
	ed.waitFor(b, "the commit", func(n Notification) bool { return n.Kind == NoteCommit && n.Turn == turn })
	ed.waitFor(b, "the turn's end", func(n Notification) bool { return n.Kind == NoteTurnEnded && n.Turn == turn })
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := s.Changes().Rewind(context.Background(), turn, fsm.RestoreFiles)
		if err != nil || len(res.Restored) != 100 {
			b.Fatalf("rewind: %v %+v", err, res)
		}
		if res, err = s.Changes().Redo(context.Background()); err != nil || len(res.Restored) != 100 {
			b.Fatalf("redo: %v %+v", err, res)
		}
	}
}
