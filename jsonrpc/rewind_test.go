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

// rewindScript edits one line of r.txt per turn: b in turn one, f in
// turn two, i in turn three.
const rewindScript = `
[[step]]
match.last_user_contains = "turn one"
match.last_role = "user"
  [[step.tool_call]]
  name = "read_file"
  arguments = '{"path":"r.txt"}'
[[step]]
match.last_user_contains = "turn one"
match.last_tool_result_contains = "j"
  [[step.tool_call]]
  name = "edit_file"
  arguments = '{"path":"r.txt","old_string":"b\n","new_string":"B one\n"}'
[[step]]
match.last_user_contains = "turn one"
match.last_role = "tool"
text = ["one done"]

[[step]]
match.last_user_contains = "turn two"
match.last_role = "user"
  [[step.tool_call]]
  name = "read_file"
  arguments = '{"path":"r.txt"}'
[[step]]
match.last_user_contains = "turn two"
match.last_tool_result_contains = "j"
  [[step.tool_call]]
  name = "edit_file"
  arguments = '{"path":"r.txt","old_string":"f\n","new_string":"F two\n"}'
[[step]]
match.last_user_contains = "turn two"
match.last_role = "tool"
text = ["two done"]

[[step]]
match.last_user_contains = "turn three"
match.last_role = "user"
  [[step.tool_call]]
  name = "edit_file"
  arguments = '{"path":"r.txt","old_string":"i\n","new_string":"I three\n"}'
[[step]]
match.last_user_contains = "turn three"
match.last_role = "tool"
text = ["three done"]
`

// TestRewindFilesKeepsTheUsersEdit: three turns each commit an agent
// change to r.txt; between turns one and two the user edits line d of the
// same file on disk. Rewinding the files to turn 1 takes the three agent
// changes back in one commit "loom: rewind to turn 1" and keeps the
// user's line; redo brings the agent's lines back, the user's line still
// there; the conversation stays (files only).
func TestRewindFilesKeepsTheUsersEdit(t *testing.T) {
	dir := gittest.Repo(t, map[string]string{"r.txt": reviewBase})
	e := newEnv(t, envOptions{script: rewindScript, cfg: fakeeditor.Config{Loom: true, Folders: []string{dir}},
		options: map[string]any{"tools": map[string]any{"bash": "allow"}, "hooks": map[string]any{"auto_commit": true}}})
	path := filepath.Join(e.folder, "r.txt")
	turn := func(prompt string) {
		t.Helper()
		from := len(e.ed.Messages(""))
		e.ask(prompt)
		e.await(prompt+" ended", turnEnded(e.folder, from))
	}
	turn("turn one")
	user := strings.Replace(readFile(t, path), "d\n", "d by the user\n", 1)
	writeFile(t, path, user)
	turn("turn two")
	turn("turn three")
	if got, want := readFile(t, path), "a\nB one\nc\nd by the user\ne\nF two\ng\nh\nI three\nj\n"; got != want {
		t.Fatalf("after three turns %q, want %q", got, want)
	}
	var cps CheckpointsResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdCheckpoints, FolderArgs{}, &cps); err != nil {
		t.Fatal(err)
	}
	if len(cps.Checkpoints) != 3 || cps.Checkpoints[0].Prompt != "turn one" || len(cps.Checkpoints[1].Commits) != 1 || cps.Checkpoints[2].Files[0] != "r.txt" {
		t.Fatalf("checkpoints %+v", cps)
	}
	var res workspace.RewindResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdRewind, RewindArgs{Turn: 1, Restore: "files"}, &res); err != nil {
		t.Fatalf("loom.rewind: %v", err)
	}
	if got := readFile(t, path); got != strings.Replace(reviewBase, "d\n", "d by the user\n", 1) {
		t.Fatalf("after the rewind %q: want the base with the user's line", got)
	}
	if strings.Join(res.Restored, ",") != "r.txt" || strings.Join(res.Kept, ",") != "r.txt" || res.Commit == "" {
		t.Fatalf("rewind result %+v", res)
	}
	if subject := strings.TrimSpace(gittest.Run(t, dir, "log", "-1", "--format=%s")); subject != "loom: rewind to turn 1" {
		t.Fatalf("HEAD is %q", subject)
	}
	// The conversation stays: three prompts in the history.
	var hist HistoryResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdHistory, FolderArgs{}, &hist); err != nil {
		t.Fatal(err)
	}
	if n := countUser(hist, "turn "); n != 3 {
		t.Fatalf("%d prompts after a files rewind, want 3", n)
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdRedo, FolderArgs{}, &res); err != nil {
		t.Fatalf("loom.redo: %v", err)
	}
	if got, want := readFile(t, path), "a\nB one\nc\nd by the user\ne\nF two\ng\nh\nI three\nj\n"; got != want {
		t.Fatalf("after redo %q, want %q", got, want)
	}
	// Nothing left to redo.
	if err := e.ed.ExecuteCommand(e.ctx, CmdRedo, FolderArgs{}, &res); err == nil {
		t.Fatalf("a second redo succeeded")
	}
}

// TestRewindConversationReturnsThePrompt: a conversation rewind cuts the
// history back before turn 2 and hands its prompt back; the files stay.
func TestRewindConversationReturnsThePrompt(t *testing.T) {
	dir := gittest.Repo(t, map[string]string{"r.txt": reviewBase})
	e := newEnv(t, envOptions{script: rewindScript, cfg: fakeeditor.Config{Loom: true, Folders: []string{dir}},
		options: map[string]any{"tools": map[string]any{"bash": "allow"}, "hooks": map[string]any{"auto_commit": true}}})
	path := filepath.Join(e.folder, "r.txt")
	for _, p := range []string{"turn one", "turn two"} {
		from := len(e.ed.Messages(""))
		e.ask(p)
		e.await(p+" ended", turnEnded(e.folder, from))
	}
	before := readFile(t, path)
	var res workspace.RewindResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdRewind, RewindArgs{Turn: 2, Restore: "conversation"}, &res); err != nil {
		t.Fatalf("loom.rewind: %v", err)
	}
	if res.Prompt != "turn two" || len(res.Restored) != 0 {
		t.Fatalf("result %+v", res)
	}
	if readFile(t, path) != before {
		t.Fatalf("a conversation rewind changed the files")
	}
	var hist HistoryResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdHistory, FolderArgs{}, &hist); err != nil {
		t.Fatal(err)
	}
	if countUser(hist, "turn two") != 0 || countUser(hist, "turn one") != 1 {
		t.Fatalf("history after the rewind: %+v", hist.Messages)
	}
	e.await("loom/rewound with the prompt", func(msgs []fakeeditor.Message) bool {
		for _, m := range msgs {
			if m.Method == MethodRewound && strings.Contains(string(m.Params), `"prompt":"turn two"`) {
				return true
			}
		}
		return false
	})
	// Bad arguments are refused with a clear error.
	if err := e.ed.ExecuteCommand(e.ctx, CmdRewind, RewindArgs{Turn: 2, Restore: "everything"}, &res); err == nil || !strings.Contains(err.Error(), "restore must be") {
		t.Fatalf("bad restore: %v", err)
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdRewind, RewindArgs{Turn: 9}, &res); err == nil || !strings.Contains(err.Error(), "no checkpoint for turn 9") {
		t.Fatalf("unknown turn: %v", err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func countUser(h HistoryResult, prefix string) int {
	n := 0
	for _, m := range h.Messages {
		if m.Role == "user" && strings.HasPrefix(m.Content, prefix) {
			n++
		}
	}
	return n
}
