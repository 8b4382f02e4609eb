package jsonrpc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/internal/gittest"
	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// commandScript runs one command that changes lines b and i of r.txt and
// makes n.txt, then answers with the command's result.
const commandScript = `
[[step]]
match.last_role = "user"
  [[step.tool_call]]
  name = "bash"
  arguments = '{"command":"sed -i -e \"s/^b$/B cmd/\" -e \"s/^i$/I cmd/\" r.txt && echo new > n.txt"}'

[[step]]
match.last_role = "tool"
text = ["done"]
`

// commandReviewEnv: a repository with r.txt = reviewBase, under review
// with commands allowed; the user has changed line e of r.txt on disk
// (uncommitted) before the prompt.
func commandReviewEnv(t *testing.T) (*env, string, string) {
	dir := gittest.Repo(t, map[string]string{"r.txt": reviewBase})
	e := newEnv(t, envOptions{script: commandScript, cfg: fakeeditor.Config{Loom: true, Review: true, ApplyEdit: true, Folders: []string{dir}},
		options: map[string]any{"tools": map[string]any{"bash": "allow", "edits": "review"}, "hooks": map[string]any{"auto_commit": true}}})
	path := filepath.Join(e.folder, "r.txt")
	user := strings.Replace(reviewBase, "e\n", "e by the user\n", 1)
	writeFile(t, path, user)
	return e, path, user
}

// TestReviewKeepsPartOfACommandsChanges: under review, a command's
// changes are proposed (kind command) with the command's own hunks only
// (not the user's earlier line); keeping hunk 1 of r.txt and n.txt and
// discarding hunk 2 leaves exactly that on disk (the user's line
// stays), the commit holds only the kept bytes, the model reads the
// command's output and the decision, and nothing is reported again as
// an undecided command change.
func TestReviewKeepsPartOfACommandsChanges(t *testing.T) {
	e, path, user := commandReviewEnv(t)
	head := strings.TrimSpace(gittest.Run(t, e.folder, "rev-parse", "HEAD"))
	from := len(e.ed.Messages(""))
	e.ask("run it")
	p := awaitProposal(e)
	if len(p.Changes) != 2 || p.Changes[0].Path != "n.txt" || p.Changes[1].Path != "r.txt" {
		t.Fatalf("proposal %+v, want n.txt and r.txt", p.Changes)
	}
	if !strings.HasPrefix(p.Command, "sed -i") {
		t.Fatalf("proposal's command %q", p.Command)
	}
	r := p.Changes[1]
	if r.Kind != "command" || len(r.Hunks) != 2 || strings.Contains(r.Diff, "+e by the user") || !strings.Contains(r.Hunks[0].Diff, "+B cmd") {
		t.Fatalf("r.txt change %+v", r)
	}
	var res workspace.ReviewResult
	accept := []string{p.Changes[0].Hunks[0].ID, r.Hunks[0].ID}
	if err := e.ed.ExecuteCommand(e.ctx, CmdReview, map[string]any{"id": p.ID, "accept": accept, "comment": "not i"}, &res); err != nil {
		t.Fatalf("loom.review: %v", err)
	}
	if strings.Join(res.Rejected, ",") != r.Hunks[1].ID {
		t.Fatalf("review result %+v", res)
	}
	e.await("turn ended", turnEnded(e.folder, from))
	if got, want := readFile(t, path), strings.Replace(user, "b\n", "B cmd\n", 1); got != want {
		t.Fatalf("r.txt %q, want %q", got, want)
	}
	if got := readFile(t, filepath.Join(e.folder, "n.txt")); got != "new\n" {
		t.Fatalf("n.txt %q", got)
	}
	if parent := strings.TrimSpace(gittest.Run(t, e.folder, "rev-parse", "HEAD~1")); parent != head {
		t.Fatalf("no single commit on top of %s", head)
	}
	if got := gittest.Run(t, e.folder, "show", "HEAD:r.txt"); got != strings.Replace(reviewBase, "b\n", "B cmd\n", 1) {
		for _, m := range e.ed.Messages(MethodCommit) {
			t.Logf("%s", m.Params)
		}
		t.Fatalf("committed r.txt %q: want the kept hunk only", got)
	}
	if got := gittest.Run(t, e.folder, "show", "HEAD:n.txt"); got != "new\n" {
		t.Fatalf("committed n.txt %q", got)
	}
	if got := lastToolResult(e); !strings.Contains(got, "the user kept this command's changes to n.txt, r.txt in part: hunk "+r.Hunks[1].ID+" discarded; the user says: not i") {
		t.Fatalf("the model read %q", got)
	}
	if n := len(e.ed.Messages(MethodCommandChanges)); n != 0 {
		t.Fatalf("%d loom/commandChanges after the review decided them", n)
	}
}

// TestReviewDiscardsACommandsChanges: discarding all of a command's
// changes puts r.txt back as it was before the command (the user's line
// stays), removes n.txt, and commits nothing.
func TestReviewDiscardsACommandsChanges(t *testing.T) {
	e, path, user := commandReviewEnv(t)
	head := strings.TrimSpace(gittest.Run(t, e.folder, "rev-parse", "HEAD"))
	from := len(e.ed.Messages(""))
	e.ask("run it")
	p := awaitProposal(e)
	var res workspace.ReviewResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdReview, map[string]any{"id": p.ID, "reject": "all"}, &res); err != nil {
		t.Fatalf("loom.review: %v", err)
	}
	e.await("turn ended", turnEnded(e.folder, from))
	if got := readFile(t, path); got != user {
		t.Fatalf("r.txt %q, want it as before the command %q", got, user)
	}
	if _, err := os.Stat(filepath.Join(e.folder, "n.txt")); !os.IsNotExist(err) {
		t.Fatalf("n.txt is still there: %v", err)
	}
	if now := strings.TrimSpace(gittest.Run(t, e.folder, "rev-parse", "HEAD")); now != head {
		t.Fatal("a discarded command's changes were committed")
	}
	if got := lastToolResult(e); !strings.Contains(got, "the user discarded this command's changes to n.txt, r.txt") {
		t.Fatalf("the model read %q", got)
	}
}

// lastToolResult is the last tool result of the conversation's history.
func lastToolResult(e *env) string {
	e.t.Helper()
	var hist HistoryResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdHistory, FolderArgs{}, &hist); err != nil {
		e.t.Fatal(err)
	}
	for i := len(hist.Messages) - 1; i >= 0; i-- {
		if hist.Messages[i].Role == "tool" {
			return hist.Messages[i].Content
		}
	}
	return ""
}

// TestGenericClientKeepsOrDiscardsACommandsChanges: a client without
// experimental.loom.review is asked Keep / Discard with a
// window/showMessageRequest naming the command and the files; Discard
// puts the files back, Keep commits them.
func TestGenericClientKeepsOrDiscardsACommandsChanges(t *testing.T) {
	for _, choice := range []string{"Keep", "Discard"} {
		t.Run(choice, func(t *testing.T) {
			dir := gittest.Repo(t, map[string]string{"r.txt": reviewBase})
			var asked []string
			e := newEnv(t, envOptions{script: commandScript, cfg: fakeeditor.Config{ApplyEdit: true, Folders: []string{dir}},
				hooks: fakeeditor.Hooks{ShowMessageRequest: func(p *protocol.ShowMessageRequestParams) *protocol.MessageActionItem {
					asked = append(asked, p.Message)
					for _, a := range p.Actions {
						if a.Title == choice {
							return &a
						}
					}
					return nil
				}},
				options: map[string]any{"tools": map[string]any{"bash": "allow", "edits": "review"}, "hooks": map[string]any{"auto_commit": true}}})
			head := strings.TrimSpace(gittest.Run(t, e.folder, "rev-parse", "HEAD"))
			e.ask("run it")
			e.await("the turn's answer", func(msgs []fakeeditor.Message) bool {
				for _, m := range msgs {
					if m.Method == protocol.MethodWindowShowMessage && strings.Contains(string(m.Params), "done") {
						return true
					}
				}
				return false
			})
			if len(asked) != 1 || !strings.Contains(asked[0], "`sed -i") || !strings.Contains(asked[0], "changed n.txt, r.txt") {
				t.Fatalf("asked %q", asked)
			}
			moved := strings.TrimSpace(gittest.Run(t, e.folder, "rev-parse", "HEAD")) != head
			got := readFile(t, filepath.Join(e.folder, "r.txt"))
			if choice == "Keep" && (!moved || !strings.Contains(got, "B cmd")) {
				t.Fatalf("kept: HEAD moved %v, r.txt %q", moved, got)
			}
			if choice == "Discard" && (moved || got != reviewBase) {
				t.Fatalf("discarded: HEAD moved %v, r.txt %q", moved, got)
			}
		})
	}
}

// TestCancelLeavesACommandsChangesToDecide: cancelling the turn while a
// command's changes wait for review leaves them on disk, uncommitted, in
// the keep/discard list (loom/commandChanges); loom.discard then puts
// r.txt back as it was before the command, the user's line staying.
func TestCancelLeavesACommandsChangesToDecide(t *testing.T) {
	e, path, user := commandReviewEnv(t)
	head := strings.TrimSpace(gittest.Run(t, e.folder, "rev-parse", "HEAD"))
	from := len(e.ed.Messages(""))
	e.ask("run it")
	awaitProposal(e)
	if err := e.ed.ExecuteCommand(e.ctx, CmdCancel, FolderArgs{}, nil); err != nil {
		t.Fatal(err)
	}
	e.await("turn ended", turnEnded(e.folder, from))
	e.await("the changes join the keep/discard list", func(msgs []fakeeditor.Message) bool {
		for _, m := range msgs {
			if m.Method == MethodCommandChanges && strings.Contains(string(m.Params), `"rel":"r.txt"`) && strings.Contains(string(m.Params), `"rel":"n.txt"`) {
				return true
			}
		}
		return false
	})
	if got := readFile(t, path); !strings.Contains(got, "B cmd") {
		t.Fatalf("r.txt after the cancel %q: the command's change should stay", got)
	}
	if now := strings.TrimSpace(gittest.Run(t, e.folder, "rev-parse", "HEAD")); now != head {
		t.Fatal("a cancelled review committed")
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdDiscard, PathsArgs{Paths: []string{"r.txt", "n.txt"}}, nil); err != nil {
		t.Fatalf("loom.discard: %v", err)
	}
	if got := readFile(t, path); got != user {
		t.Fatalf("r.txt after discard %q, want %q", got, user)
	}
}
