package jsonrpc

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/internal/gittest"
	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
)

const editScript = `
[[step]]
match.last_role = "user"
text = ["Let me ", "read ", "it."]
  [[step.tool_call]]
  name = "read_file"
  arguments = '{"path":"a.txt"}'

[[step]]
match.last_tool_result_contains = "hello"
text = ["Editing."]
  [[step.tool_call]]
  name = "edit_file"
  arguments = '{"path":"a.txt","old_string":"hello","new_string":"goodbye"}'

[[step]]
match.last_role = "tool"
text = ["Done: ", "a.txt says goodbye."]
`

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func toolCalls(t *testing.T, msgs []fakeeditor.Message, name string) []ToolCallParams {
	var out []ToolCallParams
	for _, m := range msgs {
		if m.Method != MethodToolCall {
			continue
		}
		var p ToolCallParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			t.Fatal(err)
		}
		if p.Name == name {
			out = append(out, p)
		}
	}
	return out
}

func lastStatus(calls []ToolCallParams) string {
	if len(calls) == 0 {
		return ""
	}
	return calls[len(calls)-1].Status
}

// The core scenario: ask -> streamed text -> read_file -> edit_file on an
// open buffer -> applyEdit applied -> the model answers.
func TestAskEditsOpenBuffer(t *testing.T) {
	e := newEnv(t, envOptions{script: editScript, cfg: fakeeditor.Config{Loom: true, ApplyEdit: true, WorkDoneProgress: true}})
	path := filepath.Join(e.folder, "a.txt")
	writeFile(t, path, "hello world\n")
	if err := e.ed.OpenFile(e.ctx, path); err != nil {
		t.Fatal(err)
	}
	from := len(e.ed.Messages(""))
	res := e.ask("change hello to goodbye")
	if res.Folder != e.folder || res.Turn != 1 {
		t.Fatalf("ask = %+v, want folder %s turn 1", res, e.folder)
	}
	e.await("turn ended", turnEnded(e.folder, from))
	e.await("answer streamed", containsText(e.folder, "a.txt says goodbye."))
	states := e.ed.Messages(MethodState)
	var last StateParams
	if err := states[len(states)-1].Decode(&last); err != nil || last.State != "WaitingForUserInput" || last.Turn != 1 {
		t.Errorf("last loom/state = %+v (%v), want WaitingForUserInput of turn 1", last, err)
	}
	msgs := e.ed.Messages("")
	if got, want := displayed(t, msgs, e.folder, 1), "Let me read it.Editing.Done: a.txt says goodbye."; got != want {
		t.Errorf("displayed %q, want %q", got, want)
	}
	if s := lastStatus(toolCalls(t, msgs, "read_file")); s != "succeeded" {
		t.Errorf("read_file status %q", s)
	}
	if s := lastStatus(toolCalls(t, msgs, "edit_file")); s != "succeeded" {
		t.Errorf("edit_file status %q", s)
	}
	if len(e.ed.Messages(protocol.MethodWorkspaceApplyEdit)) != 1 {
		t.Errorf("want one applyEdit")
	}
	text, version, _ := e.ed.BufferText(path)
	if text != "goodbye world\n" || version != 2 {
		t.Errorf("buffer = %q v%d, want the edit applied at v2", text, version)
	}
	if b, _ := os.ReadFile(path); string(b) != "hello world\n" {
		t.Errorf("disk = %q: an open buffer's edit must go through the editor", b)
	}
	// Work-done progress: every begin has its end. Progress waits for the
	// client's answer to each token's creation, so it may trail the turn:
	// wait for it rather than count once.
	e.await("a turn and two tools' progress, all ended", func(msgs []fakeeditor.Message) bool {
		begins, ends := 0, 0
		for _, m := range msgs {
			if m.Method != protocol.MethodProgress {
				continue
			}
			switch {
			case strings.Contains(string(m.Params), `"kind":"begin"`):
				begins++
			case strings.Contains(string(m.Params), `"kind":"end"`):
				ends++
			}
		}
		return begins >= 3 && begins == ends
	})
	// History redraws the transcript.
	var h HistoryResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdHistory, FolderArgs{}, &h); err != nil {
		t.Fatal(err)
	}
	if len(h.Messages) < 5 || h.Messages[len(h.Messages)-1].Content != "Done: a.txt says goodbye." {
		t.Errorf("history = %+v", h.Messages)
	}
}

// The user types in the buffer while the edit is in flight: the editor
// refuses the versioned edit and nothing is clobbered.
// A client that applies edits but cannot check versions (Neovim's built-in
// client) gets unversioned changes in its buffer, not a write under it.
func TestEditOpenBufferWithoutVersionedEdits(t *testing.T) {
	e := newEnv(t, envOptions{script: editScript, cfg: fakeeditor.Config{Loom: true, ApplyEdit: true, Unversioned: true}})
	path := filepath.Join(e.folder, "a.txt")
	writeFile(t, path, "hello world\n")
	if err := e.ed.OpenFile(e.ctx, path); err != nil {
		t.Fatal(err)
	}
	from := len(e.ed.Messages(""))
	e.ask("change hello to goodbye")
	e.await("turn ended", turnEnded(e.folder, from))
	edits := e.ed.Messages(protocol.MethodWorkspaceApplyEdit)
	if len(edits) != 1 || !strings.Contains(string(edits[0].Params), `"changes"`) || strings.Contains(string(edits[0].Params), `"documentChanges"`) {
		t.Fatalf("want one unversioned applyEdit, got %d: %v", len(edits), edits)
	}
	if text, _, _ := e.ed.BufferText(path); text != "goodbye world\n" {
		t.Errorf("buffer = %q, want the edit applied", text)
	}
	if b, _ := os.ReadFile(path); string(b) != "hello world\n" {
		t.Errorf("disk = %q: an open buffer's edit must go through the editor", b)
	}
}

func TestEditRefusedWhenUserTyped(t *testing.T) {
	script := strings.Replace(editScript, `match.last_role = "tool"`, `match.last_tool_result_contains = "changed"`, 1) + `
[[step]]
match.last_role = "tool"
text = ["Gave up."]
`
	typed := false
	e := newEnv(t, envOptions{script: script, cfg: fakeeditor.Config{Loom: true, ApplyEdit: true}})
	path := filepath.Join(e.folder, "a.txt")
	e.ed.Hooks.BeforeApplyEdit = func(ed *fakeeditor.Editor, p *protocol.ApplyWorkspaceEditParams) {
		if !typed {
			typed = true
			_ = ed.EditBuffer(e.ctx, path, protocol.Range{}, "// typed\n")
		}
	}
	writeFile(t, path, "hello world\n")
	if err := e.ed.OpenFile(e.ctx, path); err != nil {
		t.Fatal(err)
	}
	from := len(e.ed.Messages(""))
	e.ask("change hello")
	e.await("turn ended", turnEnded(e.folder, from))
	msgs := e.ed.Messages("")
	calls := toolCalls(t, msgs, "edit_file")
	if s := lastStatus(calls); s != "failed" {
		t.Errorf("edit_file status %q, want failed", s)
	}
	text, _, _ := e.ed.BufferText(path)
	if text != "// typed\nhello world\n" {
		t.Errorf("buffer = %q: the user's typing must survive", text)
	}
}

// An edit to a file that is not open lands on disk.
func TestEditClosedFileLandsOnDisk(t *testing.T) {
	e := newEnv(t, envOptions{script: editScript, cfg: fakeeditor.Config{Loom: true, ApplyEdit: true}})
	path := filepath.Join(e.folder, "a.txt")
	writeFile(t, path, "hello world\n")
	from := len(e.ed.Messages(""))
	e.ask("change hello")
	e.await("turn ended", turnEnded(e.folder, from))
	if b, _ := os.ReadFile(path); string(b) != "goodbye world\n" {
		t.Errorf("disk = %q, want the edit", b)
	}
	if n := len(e.ed.Messages(protocol.MethodWorkspaceApplyEdit)); n != 0 {
		t.Errorf("%d applyEdit for a closed file", n)
	}
}

// loom.undo over LSP reverts the session's auto-commit, and refuses a
// second time with the reason.
func TestUndoRevertsTheAutoCommit(t *testing.T) {
	dir := gittest.Repo(t, map[string]string{"a.txt": "hello world\n"})
	e := newEnv(t, envOptions{script: editScript, cfg: fakeeditor.Config{Loom: true, Folders: []string{dir}},
		options: map[string]any{"hooks": map[string]any{"auto_commit": true}}})
	from := len(e.ed.Messages(""))
	e.ask("change hello")
	e.await("turn ended", turnEnded(e.folder, from))
	if log := gittest.Run(t, dir, "log", "--format=%s"); !strings.HasPrefix(log, "loom: ") {
		t.Fatalf("no auto-commit:\n%s", log)
	}
	head := strings.TrimSpace(gittest.Run(t, dir, "rev-parse", "HEAD"))
	var commit CommitParams
	if msgs := e.ed.Messages(MethodCommit); len(msgs) != 1 {
		t.Fatalf("%d loom/commit notifications, want 1", len(msgs))
	} else if err := json.Unmarshal(msgs[0].Params, &commit); err != nil {
		t.Fatal(err)
	}
	if commit.SHA != head || commit.Folder != e.folder || commit.Turn != 1 || !strings.HasPrefix(commit.Message, "loom: ") || len(commit.Files) != 1 {
		t.Errorf("loom/commit = %+v, want HEAD %s of turn 1 with one file", commit, head)
	}
	var res UndoResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdUndo, FolderArgs{}, &res); err != nil {
		t.Fatalf("loom.undo: %v", err)
	}
	if log := gittest.Run(t, dir, "log", "--format=%s"); log != "initial\n" {
		t.Errorf("after undo, log:\n%s", log)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "hello world\n" {
		t.Errorf("after undo, a.txt = %q", b)
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdUndo, FolderArgs{}, &res); err == nil {
		t.Errorf("a second undo succeeded: %+v", res)
	}
}

// loom/turnEnded tells how each turn ended and the tokens it used.
func TestTurnEndedCarriesOutcomeAndUsage(t *testing.T) {
	e := newEnv(t, envOptions{cfg: loomClient, script: `
[[step]]
text = ["hi"]
usage = { prompt = 50, completion = 12 }
`})
	res := e.ask("hello")
	e.await("loom/turnEnded", hasMethod(MethodTurnEnded, `"outcome"`))
	var p TurnEndedParams
	if err := json.Unmarshal(e.ed.Messages(MethodTurnEnded)[0].Params, &p); err != nil {
		t.Fatal(err)
	}
	if p.Folder != e.folder || p.Turn != res.Turn || p.Outcome != "done" || p.Usage.PromptTokens != 50 || p.Usage.CompletionTokens != 12 || p.Usage.TotalTokens != 62 {
		t.Errorf("loom/turnEnded = %+v, want turn %d done with 50+12 tokens", p, res.Turn)
	}
}

func TestAskWithoutModel(t *testing.T) {
	e := newEnv(t, envOptions{})
	err := e.ed.ExecuteCommand(e.ctx, CmdAsk, AskArgs{Prompt: "hi"}, nil)
	var we *jsonrpc2.Error
	if !errors.As(err, &we) || !strings.Contains(we.Message, "base_url") && !strings.Contains(we.Message, "api_key") {
		t.Fatalf("err = %v, want one saying how to configure a model", err)
	}
}

// A client without experimental.loom gets deltas as window/logMessage and
// the final answer as window/showMessage.
func TestGenericClient(t *testing.T) {
	e := newEnv(t, envOptions{script: `
[[step]]
text = ["The answer ", "is 42."]
`})
	e.ask("what is the answer?")
	e.await("final answer shown", hasMethod(protocol.MethodWindowShowMessage, "The answer is 42."))
	if len(e.ed.Messages(MethodDisplayMessage)) != 0 || len(e.ed.Messages(MethodState)) != 0 {
		t.Error("loom/* notifications sent to a client that did not declare experimental.loom")
	}
	var log strings.Builder
	for _, m := range e.ed.Messages(protocol.MethodWindowLogMessage) {
		var p protocol.LogMessageParams
		_ = json.Unmarshal(m.Params, &p)
		if p.Type == protocol.MessageTypeLog {
			log.WriteString(p.Message)
		}
	}
	if log.String() != "The answer is 42." {
		t.Errorf("logMessage deltas = %q", log.String())
	}
}
