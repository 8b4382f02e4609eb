package jsonrpc

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/loom-lsp/loom-lsp/internal/gittest"
	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// ownWritesScript reads s.txt and r.txt and rewrites r.txt (hunks on b
// and i); then runs a command that changes lines a and j of r.txt; then
// answers "ok" to anything.
const ownWritesScript = `
[[step]]
match.last_message_contains = "change b and i"
  [[step.tool_call]]
  name = "read_file"
  arguments = '{"path":"r.txt"}'
  [[step.tool_call]]
  name = "read_file"
  arguments = '{"path":"s.txt"}'

[[step]]
match.last_tool_result_contains = "sentinel"
  [[step.tool_call]]
  name = "write_file"
  arguments = '{"path":"r.txt","content":"a\nB agent\nc\nd\ne\nf\ng\nh\nI agent\nj\n"}'

[[step]]
match.last_message_contains = "run it"
  [[step.tool_call]]
  name = "bash"
  arguments = '{"command":"sed -i -e \"s/^a$/A cmd/\" -e \"s/^j$/J cmd/\" r.txt"}'

[[step]]
repeat = true
text = ["ok"]
`

// TestReviewDecisionsAreNoNews: loom's own writes of a review decision
// (an accepted hunk of two, through the open buffer and saved, or on
// disk; a command's hunk discarded) are not reported to the user nor to
// the model as a file "changed on disk", while a real change of the same
// file by the user afterwards still is, to both.
func TestReviewDecisionsAreNoNews(t *testing.T) {
	for _, open := range []bool{true, false} {
		t.Run(map[bool]string{true: "open", false: "disk"}[open], func(t *testing.T) { testReviewDecisionsAreNoNews(t, open) })
	}
}

func testReviewDecisionsAreNoNews(t *testing.T, open bool) {
	dir := gittest.Repo(t, map[string]string{"r.txt": reviewBase, "s.txt": "sentinel 0\n"})
	e := newEnv(t, envOptions{script: ownWritesScript, cfg: fakeeditor.Config{Loom: true, Review: true, ApplyEdit: true, Folders: []string{dir}},
		options: map[string]any{"tools": map[string]any{"bash": "allow", "edits": "review"}, "hooks": map[string]any{"auto_commit": true}}})
	path, sentinel := filepath.Join(e.folder, "r.txt"), filepath.Join(e.folder, "s.txt")
	// Like VS Code, saving writes the buffer to disk and says so.
	e.ed.Hooks.SaveDocuments = func(uris []string) []string {
		for _, u := range uris {
			p := uri.URI(u).FsPath()
			if text, _, ok := e.ed.BufferText(p); ok {
				writeFile(t, p, text)
				_ = e.ed.Notify(e.ctx, protocol.MethodTextDocumentDidSave, &protocol.DidSaveTextDocumentParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(p)}})
			}
		}
		return uris
	}
	if open {
		if err := e.ed.OpenFile(e.ctx, path); err != nil {
			t.Fatal(err)
		}
	}
	barriers := 0
	// barrier changes s.txt as another program would, and waits until the
	// user is told: the watcher has then handled every earlier write.
	barrier := func() {
		t.Helper()
		barriers++
		writeFile(t, sentinel, fmt.Sprintf("sentinel %d\n", barriers))
		from := len(e.ed.Messages(""))
		e.await("the sentinel's change noticed", func(msgs []fakeeditor.Message) bool {
			for _, m := range msgs[from:] {
				if strings.Contains(string(m.Params), "changed on disk") && strings.Contains(string(m.Params), "s.txt") {
					return true
				}
			}
			return false
		})
	}
	// noNews fails if the user or the model was told r.txt changed on disk.
	noNews := func(when string) {
		t.Helper()
		for _, m := range e.ed.Messages("") {
			if strings.Contains(string(m.Params), "changed on disk") && strings.Contains(string(m.Params), "r.txt") {
				t.Fatalf("%s: %s tells the user r.txt changed on disk: %s", when, m.Method, m.Params)
			}
		}
		for _, m := range history(e) {
			if strings.Contains(m.Content, "changed on disk") && strings.Contains(m.Content, "r.txt") {
				t.Fatalf("%s: the model was told %q", when, m.Content)
			}
		}
	}

	// An accepted hunk of two.
	from := len(e.ed.Messages(""))
	e.ask("change b and i")
	p := awaitProposal(e)
	var res workspace.ReviewResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdReview, map[string]any{"id": p.ID, "accept": []string{p.Changes[0].Hunks[0].ID}}, &res); err != nil {
		t.Fatalf("loom.review: %v", err)
	}
	e.await("turn ended", turnEnded(e.folder, from))
	e.await("the commit", hasMethod(MethodCommit, "r.txt"))
	accepted := strings.Replace(reviewBase, "b\n", "B agent\n", 1)
	if got := readFile(t, path); got != accepted {
		t.Fatalf("r.txt on disk %q, want %q", got, accepted)
	}
	barrier()
	if open {
		if err := e.ed.CloseFile(e.ctx, path); err != nil {
			t.Fatal(err)
		}
	}
	// The model's next request carries no news of r.txt.
	from = len(e.ed.Messages(""))
	e.ask("anything new?")
	e.await("turn ended", turnEnded(e.folder, from))
	noNews("after an accepted hunk")

	// A command's hunk kept, the other discarded.
	from = len(e.ed.Messages(""))
	e.ask("run it")
	e.await("the command's proposal", func(msgs []fakeeditor.Message) bool { return len(proposals(t, msgs[from:])) > 0 })
	p = proposals(t, e.ed.Messages("")[from:])[0]
	if len(p.Changes) != 1 || len(p.Changes[0].Hunks) != 2 {
		t.Fatalf("command proposal %+v, want r.txt with 2 hunks", p.Changes)
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdReview, map[string]any{"id": p.ID, "accept": []string{p.Changes[0].Hunks[0].ID}}, &res); err != nil {
		t.Fatalf("loom.review: %v", err)
	}
	e.await("turn ended", turnEnded(e.folder, from))
	kept := strings.Replace(accepted, "a\n", "A cmd\n", 1)
	if got := readFile(t, path); got != kept {
		t.Fatalf("r.txt on disk %q, want %q", got, kept)
	}
	barrier()
	from = len(e.ed.Messages(""))
	e.ask("anything new now?")
	e.await("turn ended", turnEnded(e.folder, from))
	noNews("after a command's hunk was discarded")

	// The user's own change of r.txt is news, to both.
	writeFile(t, path, kept+"by the user\n")
	from = len(e.ed.Messages(""))
	e.await("the user's change noticed", func(msgs []fakeeditor.Message) bool {
		for _, m := range msgs {
			if strings.Contains(string(m.Params), "changed on disk") && strings.Contains(string(m.Params), "r.txt") {
				return true
			}
		}
		return false
	})
	e.ask("and now?")
	e.await("turn ended", turnEnded(e.folder, from))
	told := false
	for _, m := range history(e) {
		told = told || strings.HasPrefix(m.Content, "[loom] changed on disk") && strings.Contains(m.Content, "r.txt")
	}
	if !told {
		t.Fatal("the model was not told of the user's change to r.txt")
	}
}

// history is the conversation's messages as the model reads them.
func history(e *env) []HistoryMessage {
	e.t.Helper()
	var hist HistoryResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdHistory, FolderArgs{}, &hist); err != nil {
		e.t.Fatal(err)
	}
	return hist.Messages
}
