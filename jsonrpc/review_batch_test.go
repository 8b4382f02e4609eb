package jsonrpc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/internal/gittest"
	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// batchScript reads two files, then writes both and a.txt once more in
// one response.
const batchScript = `
[[step]]
match.last_role = "user"
  [[step.tool_call]]
  name = "read_file"
  arguments = '{"path":"a.txt"}'
  [[step.tool_call]]
  name = "read_file"
  arguments = '{"path":"b.txt"}'

[[step]]
match.last_tool_result_contains = "bee"
  [[step.tool_call]]
  name = "write_file"
  arguments = '{"path":"a.txt","content":"ay agent\n"}'
  [[step.tool_call]]
  name = "write_file"
  arguments = '{"path":"b.txt","content":"bee agent\n"}'
  [[step.tool_call]]
  name = "write_file"
  arguments = '{"path":"a.txt","content":"ay agent twice\n"}'

[[step]]
match.last_role = "tool"
text = ["done"]
`

// TestReviewProposesEveryFileAtOnce: the edits of one response to
// different files are proposed together, before any decision, and are
// decided in any order; an edit of a file already proposed waits for
// that decision (it is computed from the decided text).
func TestReviewProposesEveryFileAtOnce(t *testing.T) {
	dir := gittest.Repo(t, map[string]string{"a.txt": "ay\n", "b.txt": "bee\n"})
	e := newEnv(t, envOptions{script: batchScript, cfg: fakeeditor.Config{Loom: true, ApplyEdit: true, Review: true, Folders: []string{dir}},
		options: map[string]any{"tools": map[string]any{"bash": "allow", "edits": "review"}, "hooks": map[string]any{"auto_commit": true}}})
	from := len(e.ed.Messages(""))
	e.ask("write both")
	e.await("both files proposed", func(msgs []fakeeditor.Message) bool { return len(proposals(t, msgs)) >= 2 })
	ps := proposals(t, e.ed.Messages(MethodProposedChanges))
	if ps[0].Changes[0].Path != "a.txt" || ps[1].Changes[0].Path != "b.txt" {
		t.Fatalf("proposed %s then %s, want a.txt then b.txt", ps[0].Changes[0].Path, ps[1].Changes[0].Path)
	}
	// b.txt first: the second file is decided before the first.
	var res workspace.ReviewResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdReview, map[string]any{"id": ps[1].ID, "accept": "all"}, &res); err != nil {
		t.Fatalf("loom.review b.txt: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "b.txt")); string(b) != "bee agent\n" {
		t.Fatalf("b.txt %q after its accept", b)
	}
	if n := len(proposals(t, e.ed.Messages(MethodProposedChanges))); n != 2 {
		t.Fatalf("%d proposals while a.txt waits, want 2 (a.txt's second write waits for the first's decision)", n)
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdReview, map[string]any{"id": ps[0].ID, "accept": "all"}, &res); err != nil {
		t.Fatalf("loom.review a.txt: %v", err)
	}
	e.await("a.txt's second write proposed", func(msgs []fakeeditor.Message) bool { return len(proposals(t, msgs)) >= 3 })
	third := proposals(t, e.ed.Messages(MethodProposedChanges))[2]
	if third.Changes[0].Path != "a.txt" || !strings.Contains(third.Changes[0].Diff, "-ay agent") {
		t.Fatalf("third proposal %+v, want a.txt computed from the accepted text", third.Changes[0])
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdReview, map[string]any{"id": third.ID, "reject": "all"}, &res); err != nil {
		t.Fatalf("loom.review a.txt again: %v", err)
	}
	e.await("turn ended", turnEnded(e.folder, from))
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "ay agent\n" {
		t.Fatalf("a.txt %q, want the first write only", b)
	}
}
