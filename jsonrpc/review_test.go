package jsonrpc

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/internal/gittest"
	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// reviewBase is the file the review tests start from; the agent changes
// line 2 (b) and line 9 (i).
const reviewBase = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"

// reviewScript reads the file, rewrites it changing b and i, then answers
// with whatever the tool said.
const reviewScript = `
[[step]]
match.last_role = "user"
  [[step.tool_call]]
  name = "read_file"
  arguments = '{"path":"r.txt"}'

[[step]]
match.last_tool_result_contains = "j"
  [[step.tool_call]]
  name = "write_file"
  arguments = '{"path":"r.txt","content":"a\nB agent\nc\nd\ne\nf\ng\nh\nI agent\nj\n"}'

[[step]]
match.last_role = "tool"
text = ["noted"]
`

// reviewEnv starts a server under review on a git repository holding
// r.txt = reviewBase, and returns it with r.txt's path.
func reviewEnv(t *testing.T, cfg fakeeditor.Config) (*env, string) {
	cfg.Loom, cfg.ApplyEdit = true, true
	cfg.Folders = []string{gittest.Repo(t, map[string]string{"r.txt": reviewBase})}
	e := newEnv(t, envOptions{script: reviewScript, cfg: cfg,
		options: map[string]any{"tools": map[string]any{"bash": "allow", "edits": "review"}, "hooks": map[string]any{"auto_commit": true}}})
	return e, filepath.Join(e.folder, "r.txt")
}

// proposals decodes the loom/proposedChanges received.
func proposals(t *testing.T, msgs []fakeeditor.Message) []ProposedChangesParams {
	var out []ProposedChangesParams
	for _, m := range msgs {
		if m.Method == MethodProposedChanges {
			var p ProposedChangesParams
			if err := json.Unmarshal(m.Params, &p); err != nil {
				t.Fatal(err)
			}
			out = append(out, p)
		}
	}
	return out
}

func awaitProposal(e *env) ProposedChangesParams {
	e.t.Helper()
	e.await("a proposal", func(msgs []fakeeditor.Message) bool { return len(proposals(e.t, msgs)) > 0 })
	return proposals(e.t, e.ed.Messages(MethodProposedChanges))[0]
}

// TestReviewPartialAcceptWhileTyping: under tools.edits = "review" nothing
// reaches the open buffer nor the disk before loom.review; the user types
// elsewhere in the file meanwhile; accepting hunk 2 only applies exactly
// that hunk over the typing, the model reads that hunk 1 was rejected with
// the comment, and the commit holds only the accepted hunk.
func TestReviewPartialAcceptWhileTyping(t *testing.T) {
	e, path := reviewEnv(t, fakeeditor.Config{Review: true})
	if err := e.ed.OpenFile(e.ctx, path); err != nil {
		t.Fatal(err)
	}
	from := len(e.ed.Messages(""))
	e.ask("change b and i")
	p := awaitProposal(e)
	if len(p.Changes) != 1 || p.Changes[0].Path != "r.txt" || len(p.Changes[0].Hunks) != 2 {
		t.Fatalf("proposal %+v, want r.txt with 2 hunks", p)
	}
	h := p.Changes[0].Hunks
	if h[0].Range.Start.Line != 1 || h[1].Range.Start.Line != 8 || !strings.Contains(h[1].Diff, "+I agent") {
		t.Fatalf("hunks %+v", h)
	}
	if !strings.Contains(p.Changes[0].URI, "r.txt") || p.Changes[0].Kind != "edit" {
		t.Fatalf("change %+v", p.Changes[0])
	}
	e.await("the card waits for the review", func(msgs []fakeeditor.Message) bool {
		calls := toolCalls(t, msgs, "write_file")
		return len(calls) > 0 && strings.Contains(calls[len(calls)-1].Progress, "waiting for your review")
	})
	// Nothing reached the buffer or the disk.
	if n := len(e.ed.Messages(protocol.MethodWorkspaceApplyEdit)); n != 0 {
		t.Fatalf("%d applyEdit before the review", n)
	}
	if text, _, _ := e.ed.BufferText(path); text != reviewBase {
		t.Fatalf("buffer changed before the review: %q", text)
	}
	if b, _ := os.ReadFile(path); string(b) != reviewBase {
		t.Fatalf("disk changed before the review: %q", b)
	}
	// The user types on line e meanwhile.
	if err := e.ed.EditBuffer(e.ctx, path, protocol.Range{Start: protocol.Position{Line: 4, Character: 1}, End: protocol.Position{Line: 4, Character: 1}}, " typed"); err != nil {
		t.Fatal(err)
	}
	var res workspace.ReviewResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdReview, map[string]any{"id": p.ID, "accept": []string{h[1].ID}, "comment": "keep b"}, &res); err != nil {
		t.Fatalf("loom.review: %v", err)
	}
	if strings.Join(res.Applied, ",") != h[1].ID || strings.Join(res.Rejected, ",") != h[0].ID {
		t.Fatalf("review result %+v", res)
	}
	want := "a\nb\nc\nd\ne typed\nf\ng\nh\nI agent\nj\n"
	if text, _, _ := e.ed.BufferText(path); text != want {
		t.Fatalf("buffer %q, want %q", text, want)
	}
	e.await("turn ended", turnEnded(e.folder, from))
	calls := toolCalls(t, e.ed.Messages(MethodToolCall), "write_file")
	last := calls[len(calls)-1]
	if last.Status != "succeeded" || !strings.Contains(last.Progress, "applied in part: hunk 1 rejected by the user: keep b") {
		t.Fatalf("write_file ended %q %q", last.Status, last.Progress)
	}
	// The commit holds the accepted hunk and not the user's typing.
	show := gittest.Run(t, e.folder, "show", "HEAD", "--", "r.txt")
	if !strings.Contains(show, "+I agent") || strings.Contains(show, "typed") || strings.Contains(show, "B agent") {
		t.Fatalf("commit:\n%s", show)
	}
	// A second decision for the same proposal is refused.
	if err := e.ed.ExecuteCommand(e.ctx, CmdReview, map[string]any{"id": p.ID, "accept": "all"}, &res); err == nil {
		t.Fatalf("a second loom.review of %s succeeded", p.ID)
	}
}

// TestReviewRejectAllWritesNothing: rejecting with a comment writes
// nothing anywhere, and the model reads the comment in the same turn.
func TestReviewRejectAllWritesNothing(t *testing.T) {
	e, path := reviewEnv(t, fakeeditor.Config{Review: true})
	from := len(e.ed.Messages(""))
	e.ask("change b and i")
	p := awaitProposal(e)
	var res workspace.ReviewResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdReview, map[string]any{"id": p.ID, "reject": "all", "comment": "leave it"}, &res); err != nil {
		t.Fatalf("loom.review: %v", err)
	}
	if len(res.Applied) != 0 || len(res.Rejected) != 2 {
		t.Fatalf("result %+v", res)
	}
	e.await("turn ended", turnEnded(e.folder, from))
	if b, _ := os.ReadFile(path); string(b) != reviewBase {
		t.Fatalf("disk %q after a rejection", b)
	}
	calls := toolCalls(t, e.ed.Messages(MethodToolCall), "write_file")
	if last := calls[len(calls)-1]; last.Status != "failed" || !strings.Contains(last.Progress, "rejected by the user; nothing was written: leave it") {
		t.Fatalf("write_file ended %+v", last)
	}
	if n := len(e.ed.Messages(protocol.MethodWorkspaceApplyEdit)); n != 0 {
		t.Fatalf("%d applyEdit after a rejection", n)
	}
}

// TestReviewCancelWhilePending: cancelling the turn while a proposal
// waits rejects it; nothing is written and loom.review then fails.
func TestReviewCancelWhilePending(t *testing.T) {
	e, path := reviewEnv(t, fakeeditor.Config{Review: true})
	from := len(e.ed.Messages(""))
	e.ask("change b and i")
	p := awaitProposal(e)
	if err := e.ed.ExecuteCommand(e.ctx, CmdCancel, FolderArgs{}, nil); err != nil {
		t.Fatal(err)
	}
	e.await("turn ended", turnEnded(e.folder, from))
	var res workspace.ReviewResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdReview, map[string]any{"id": p.ID, "accept": "all"}, &res); err == nil {
		t.Fatalf("loom.review after cancel succeeded: %+v", res)
	}
	if b, _ := os.ReadFile(path); string(b) != reviewBase {
		t.Fatalf("disk %q after cancel", b)
	}
}

// TestReviewGenericClientConfirms: a client without
// experimental.loom.review that confirms annotated edits
// (changeAnnotationSupport) gets the change as an applyEdit whose
// annotation needs confirmation; applying it accepts it whole.
func TestReviewGenericClientConfirms(t *testing.T) {
	e, path := reviewEnv(t, fakeeditor.Config{Annotations: true})
	if err := e.ed.OpenFile(e.ctx, path); err != nil {
		t.Fatal(err)
	}
	from := len(e.ed.Messages(""))
	e.ask("change b and i")
	e.await("turn ended", turnEnded(e.folder, from))
	edits := e.ed.Messages(protocol.MethodWorkspaceApplyEdit)
	if len(edits) == 0 || !strings.Contains(string(edits[0].Params), `"needsConfirmation":true`) {
		t.Fatalf("want an applyEdit needing confirmation first, got %d: %s", len(edits), edits)
	}
	if text, _, _ := e.ed.BufferText(path); text != "a\nB agent\nc\nd\ne\nf\ng\nh\nI agent\nj\n" {
		t.Fatalf("buffer %q", text)
	}
	if n := len(proposals(t, e.ed.Messages(MethodProposedChanges))); n != 0 {
		t.Fatalf("a generic client got %d loom/proposedChanges", n)
	}
}
