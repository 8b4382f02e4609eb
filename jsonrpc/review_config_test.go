package jsonrpc

import (
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// TestConfigChangeDuringReview: a real configuration change that leaves
// the model alone (a new approval timeout; or the review toggle turned
// off) arrives while a proposal waits for the user; the turn then goes on
// with the same model provider, as if nothing happened: the accepted hunk
// lands, the model is asked once, answers, and the turn ends; neither the
// user nor the model hears of a file "changed on disk". (Before, every
// reload built a new provider: the scripted model forgot which steps it
// had played and proposed the same write again, and a real server's
// learned dialect and request cache were thrown away mid-turn.)
func TestConfigChangeDuringReview(t *testing.T) {
	for _, how := range []string{"settings", "toggle"} {
		t.Run(how, func(t *testing.T) { testConfigChangeDuringReview(t, how) })
	}
}

func testConfigChangeDuringReview(t *testing.T, how string) {
	e, path := reviewEnv(t, fakeeditor.Config{Review: true})
	if err := e.ed.OpenFile(e.ctx, path); err != nil {
		t.Fatal(err)
	}
	from := len(e.ed.Messages(""))
	e.ask("change b and i")
	p := awaitProposal(e)
	switch how {
	case "settings":
		if err := e.ed.Notify(e.ctx, protocol.MethodWorkspaceDidChangeConfiguration,
			map[string]any{"settings": map[string]any{"loom": map[string]any{
				"tools": map[string]any{"approval_timeout": "7m"}}}}); err != nil {
			t.Fatal(err)
		}
	case "toggle":
		if err := e.ed.Notify(e.ctx, protocol.MethodWorkspaceDidChangeConfiguration,
			map[string]any{"settings": map[string]any{"loom": map[string]any{
				"tools": map[string]any{"approval_timeout": "7m", "edits": "auto"}}}}); err != nil {
			t.Fatal(err)
		}
	case "file":
		writeFile(t, filepath.Join(e.folder, ".loom.toml"), "[tools]\napproval_timeout = \"7m\"\n")
		e.await("the reload", func(msgs []fakeeditor.Message) bool {
			for _, m := range msgs {
				if strings.Contains(string(m.Params), "configuration reloaded") {
					return true
				}
			}
			return false
		})
	}
	if st := e.status(); st.ApprovalTimeout != "7m" {
		t.Fatalf("the configuration did not change: approval timeout %q", st.ApprovalTimeout)
	}
	var res workspace.ReviewResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdReview, map[string]any{"id": p.ID, "accept": []string{p.Changes[0].Hunks[0].ID}, "comment": "keep i"}, &res); err != nil {
		t.Fatalf("loom.review: %v", err)
	}
	e.await("turn ended", turnEnded(e.folder, from))
	if got, _, _ := e.ed.BufferText(path); got != "a\nB agent\nc\nd\ne\nf\ng\nh\ni\nj\n" {
		t.Fatalf("r.txt %q", got)
	}
	for _, m := range e.ed.Messages("")[from:] {
		if strings.Contains(string(m.Params), "changed on disk") {
			t.Fatalf("%s says a file changed on disk: %s", m.Method, m.Params)
		}
	}
	var hist HistoryResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdHistory, FolderArgs{}, &hist); err != nil {
		t.Fatal(err)
	}
	for _, m := range hist.Messages {
		if strings.Contains(m.Content, "changed on disk") {
			t.Fatalf("the model was told a file changed on disk: %q", m.Content)
		}
	}
	if n := len(proposals(t, e.ed.Messages(MethodProposedChanges))); n != 1 {
		t.Fatalf("%d proposals in the turn, want 1: the model was asked again", n)
	}
	if last := hist.Messages[len(hist.Messages)-1]; last.Role != "assistant" || last.Content != "noted" {
		t.Fatalf("the turn ended with %+v, want the model's answer", last)
	}
}
