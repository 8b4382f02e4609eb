package jsonrpc

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/internal/gittest"
	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
)

// genericReviewEnv starts a server under review for a generic client
// (no experimental.loom) on a git repository holding r.txt = reviewBase.
func genericReviewEnv(t *testing.T, cfg fakeeditor.Config, hooks fakeeditor.Hooks) (*env, string) {
	cfg.Folders = []string{gittest.Repo(t, map[string]string{"r.txt": reviewBase})}
	e := newEnv(t, envOptions{script: reviewScript, cfg: cfg, hooks: hooks,
		options: map[string]any{"tools": map[string]any{"bash": "allow", "edits": "review"}, "hooks": map[string]any{"auto_commit": true}}})
	return e, filepath.Join(e.folder, "r.txt")
}

// toolResult is what the model read for the conversation's last tool call.
func (e *env) toolResult() string {
	e.t.Helper()
	var h HistoryResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdHistory, FolderArgs{}, &h); err != nil {
		e.t.Fatal(err)
	}
	for i := len(h.Messages) - 1; i >= 0; i-- {
		if h.Messages[i].Role == "tool" {
			return h.Messages[i].Content
		}
	}
	return ""
}

// answerTitle answers every window/showMessageRequest with title,
// recording the questions.
func answerTitle(title string, asked *[]string) fakeeditor.Hooks {
	return fakeeditor.Hooks{ShowMessageRequest: func(p *protocol.ShowMessageRequestParams) *protocol.MessageActionItem {
		*asked = append(*asked, p.Message)
		return &protocol.MessageActionItem{Title: title}
	}}
}

// A generic client that cannot confirm annotated edits (eglot, Neovim
// 0.10: documentChanges without changeAnnotationSupport; Neovim without
// documentChanges; a client without applyEdit) is asked Keep / Discard
// with a summary of the change. Nothing reaches the buffer or the disk
// before the answer; Keep writes and commits exactly the change, and the
// model reads "applied"; Discard writes nothing and commits nothing.
func TestReviewGenericKeepDiscard(t *testing.T) {
	clients := map[string]fakeeditor.Config{
		"documentChanges": {ApplyEdit: true, ClientName: "Eglot"},
		"unversioned":     {ApplyEdit: true, Unversioned: true, ClientName: "Neovim"},
		"noApplyEdit":     {ClientName: "emacs"},
	}
	for name, cfg := range clients {
		for _, answer := range []string{keepChanges, discardChanges} {
			t.Run(name+"/"+answer, func(t *testing.T) {
				var asked []string
				e, path := genericReviewEnv(t, cfg, answerTitle(answer, &asked))
				if cfg.ApplyEdit {
					if err := e.ed.OpenFile(e.ctx, path); err != nil {
						t.Fatal(err)
					}
				}
				head := gittest.Run(t, e.folder, "rev-parse", "HEAD")
				from := len(e.ed.Messages(""))
				e.ask("change b and i")
				e.await("the answer", hasMethod("window/showMessage", "noted"))
				_ = from
				if len(asked) != 1 {
					t.Fatalf("asked %d questions, want 1: %q", len(asked), asked)
				}
				for _, want := range []string{"r.txt (+2 −2)", "- b", "+ B agent", "- i", "+ I agent", "Keep it"} {
					if !strings.Contains(asked[0], want) {
						t.Errorf("the question lacks %q:\n%s", want, asked[0])
					}
				}
				for _, m := range e.ed.Messages("") {
					if strings.Contains(string(m.Params), `"loom"`) && !strings.HasPrefix(m.Method, "loom/") {
						t.Errorf("%s carries a loom member to a generic client: %s", m.Method, m.Params)
					}
				}
				disk, _ := os.ReadFile(path)
				text := string(disk)
				if cfg.ApplyEdit {
					text, _, _ = e.ed.BufferText(path)
				}
				result := e.toolResult()
				newHead := gittest.Run(t, e.folder, "rev-parse", "HEAD")
				const agent = "a\nB agent\nc\nd\ne\nf\ng\nh\nI agent\nj\n"
				if answer == keepChanges {
					if text != agent {
						t.Errorf("kept: the file holds %q", text)
					}
					if newHead == head {
						t.Error("kept: nothing committed")
					} else if got := gittest.Run(t, e.folder, "show", "HEAD:r.txt"); got != agent {
						t.Errorf("kept: the commit holds %q", got)
					}
					if !strings.HasPrefix(result, "applied") {
						t.Errorf("the model read %q, want applied", result)
					}
					return
				}
				if text != reviewBase || string(disk) != reviewBase {
					t.Errorf("discarded: the file holds %q (disk %q)", text, disk)
				}
				if newHead != head {
					t.Error("discarded: a commit was made")
				}
				if !strings.Contains(result, "rejected by the user") {
					t.Errorf("the model read %q", result)
				}
			})
		}
	}
}

// A client that confirms annotated edits but refuses one because the
// user typed meanwhile (a version race): nothing is written, and the
// model reads a race, not "rejected by the user".
func TestReviewGenericVersionRace(t *testing.T) {
	e, path := genericReviewEnv(t, fakeeditor.Config{ApplyEdit: true, Annotations: true}, fakeeditor.Hooks{
		BeforeApplyEdit: func(ed *fakeeditor.Editor, p *protocol.ApplyWorkspaceEditParams) {
			if p.Edit.ChangeAnnotations != nil {
				path := p.Edit.DocumentChanges[0].(*protocol.TextDocumentEdit).TextDocument.URI.FsPath()
				_ = ed.EditBuffer(context.Background(), path, protocol.Range{}, "typed\n")
			}
		},
	})
	if err := e.ed.OpenFile(e.ctx, path); err != nil {
		t.Fatal(err)
	}
	head := gittest.Run(t, e.folder, "rev-parse", "HEAD")
	e.ask("change b and i")
	e.await("the answer", hasMethod("window/showMessage", "noted"))
	result := e.toolResult()
	if !strings.Contains(result, "version race") || strings.Contains(result, "rejected by the user") {
		t.Errorf("the model read %q, want a version race", result)
	}
	if text, _, _ := e.ed.BufferText(path); strings.Contains(text, "agent") {
		t.Errorf("the buffer holds the agent's text: %q", text)
	}
	if gittest.Run(t, e.folder, "rev-parse", "HEAD") != head {
		t.Error("a commit was made")
	}
}
