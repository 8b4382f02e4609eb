package jsonrpc

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
)

const compactScript = `
[[step]]
match.last_user_contains = "about to be compacted"
text = ["Goals: greet the world. Decisions: none."]

[[step]]
match.last_role = "user"
repeat = true
text = ["Hello there."]
`

// loom.compact from an editor: the chat of a client that declares
// experimental.loom hears that the session compacts and that it did
// (loom/notice), and the summary is in loom.history.
func TestCompactFromTheEditorIsNoticed(t *testing.T) {
	e := newEnv(t, envOptions{script: compactScript, cfg: fakeeditor.Config{Loom: true}})
	e.ask("say hello")
	e.await("the first turn ends", turnEnded(e.folder, 0))
	e.ask("say hello again")
	e.await("the second turn ends", func(msgs []fakeeditor.Message) bool {
		n := 0
		for _, m := range msgs {
			if m.Method == MethodTurnEnded {
				n++
			}
		}
		return n >= 2
	})
	if err := e.ed.ExecuteCommand(e.ctx, CmdCompact, FolderArgs{}, nil); err != nil {
		t.Fatalf("loom.compact: %v", err)
	}
	var notices []NoticeParams
	e.await("a loom/notice of kind compacted", func(msgs []fakeeditor.Message) bool {
		notices = notices[:0]
		done := false
		for _, m := range msgs {
			if m.Method != MethodNotice {
				continue
			}
			var n NoticeParams
			if err := json.Unmarshal(m.Params, &n); err != nil {
				t.Fatalf("loom/notice params %s: %v", m.Params, err)
			}
			notices = append(notices, n)
			done = done || n.Kind == NoticeCompacted
		}
		return done
	})
	var sawStart bool
	for _, n := range notices {
		if n.Folder != e.folder {
			t.Errorf("notice for folder %q, want %q", n.Folder, e.folder)
		}
		sawStart = sawStart || (n.Kind == NoticeInfo && strings.Contains(n.Text, "compacting"))
		if n.Kind == NoticeCompacted && !strings.Contains(n.Text, "summary") {
			t.Errorf("compacted notice %q does not say where the summary is", n.Text)
		}
	}
	if !sawStart {
		t.Errorf("no notice that the compaction started: %+v", notices)
	}
	var hist HistoryResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdHistory, FolderArgs{}, &hist); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(hist)
	if !strings.Contains(string(b), "Goals: greet the world.") {
		t.Errorf("loom.history after compacting lacks the summary: %s", b)
	}
	// The summary is loom's note, not a prompt of the user: clients draw
	// it as a notice, and it starts no turn.
	for _, m := range hist.Messages {
		if m.Role == "user" && strings.Contains(m.Content, "Goals: greet the world.") != m.Note {
			t.Errorf("user message %q has note=%v", m.Content, m.Note)
		}
	}
}
