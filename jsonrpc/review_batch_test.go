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

// restartScript is reviewScript whose answer to the decision comes first:
// the restarted daemon's model is a new one, whose steps are all unused.
const restartScript = `
[[step]]
match.last_tool_result_contains = "applied"
text = ["noted"]
` + reviewScript

// TestReviewSurvivesRestart: the daemon stops while a proposal waits (a
// window reload restarts loom-lsp), with one hunk decided and a comment
// typed; the next daemon gives the proposal back with that draft, the
// decision then applies as before and the turn goes on to the model's
// answer. Nothing was cancelled, nothing written before the decision.
func TestReviewSurvivesRestart(t *testing.T) {
	dir := gittest.Repo(t, map[string]string{"r.txt": reviewBase})
	state := t.TempDir()
	opts := envOptions{script: restartScript, stateDir: state, cfg: fakeeditor.Config{Loom: true, ApplyEdit: true, Review: true, Folders: []string{dir}},
		options: map[string]any{"tools": map[string]any{"bash": "allow", "edits": "review"}, "hooks": map[string]any{"auto_commit": true}}}
	e := newEnv(t, opts)
	e.ask("change b and i")
	p := awaitProposal(e)
	h := p.Changes[0].Hunks
	if err := e.ed.ExecuteCommand(e.ctx, CmdReviewDraft, map[string]any{"id": p.ID, "accepted": []string{h[1].ID}, "comment": "keep b"}, nil); err != nil {
		t.Fatalf("loom.reviewDraft: %v", err)
	}
	e.stop()
	path := filepath.Join(dir, "r.txt")
	if b, _ := os.ReadFile(path); string(b) != reviewBase {
		t.Fatalf("r.txt %q before the decision", b)
	}

	e = newEnv(t, opts)
	// What the reloaded panel asks: one loom.panelState.
	var got PanelStateResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdPanelState, FolderArgs{}, &got); err != nil {
		t.Fatalf("loom.panelState: %v", err)
	}
	if len(got.Proposals) != 1 || got.Proposals[0].ID != p.ID || len(got.Proposals[0].Changes[0].Hunks) != 2 {
		t.Fatalf("proposals after the restart %+v, want %s back", got.Proposals, p.ID)
	}
	if d := got.Proposals[0].Draft; d == nil || strings.Join(d.Accepted, ",") != h[1].ID || d.Comment != "keep b" {
		t.Fatalf("draft after the restart %+v", d)
	}
	if got.Status.State != "ExecutingTools" {
		t.Fatalf("status after the restart %+v, want the turn still waiting", got.Status)
	}
	from := len(e.ed.Messages(""))
	var res workspace.ReviewResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdReview, map[string]any{"id": p.ID, "accept": []string{h[1].ID}, "comment": "keep b"}, &res); err != nil {
		t.Fatalf("loom.review after the restart: %v", err)
	}
	if strings.Join(res.Applied, ",") != h[1].ID {
		t.Fatalf("review result %+v", res)
	}
	e.await("the model's answer after the decision", containsText(e.folder, "noted"))
	e.await("turn ended", turnEnded(e.folder, from))
	if b, _ := os.ReadFile(path); string(b) != "a\nb\nc\nd\ne\nf\ng\nh\nI agent\nj\n" {
		t.Fatalf("r.txt %q, want the accepted hunk only", b)
	}
	if show := gittest.Run(t, e.folder, "show", "HEAD", "--", "r.txt"); !strings.Contains(show, "+I agent") {
		t.Fatalf("the accepted hunk is not committed:\n%s", show)
	}
	kept, _ := filepath.Glob(filepath.Join(state, "*.review.json"))
	if len(kept) != 0 {
		t.Fatalf("proposals still kept after the decision: %v", kept)
	}
}
