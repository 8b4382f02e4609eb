package jsonrpc

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/internal/gittest"
	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// rewindThreeFilesScript: turn one changes line b of r.txt, s.txt and
// t.txt; turns two and three change lines f and i of r.txt.
const rewindThreeFilesScript = `
[[step]]
match.last_user_contains = "turn one"
match.last_role = "user"
  [[step.tool_call]]
  name = "read_file"
  arguments = '{"path":"r.txt"}'
  [[step.tool_call]]
  name = "read_file"
  arguments = '{"path":"s.txt"}'
  [[step.tool_call]]
  name = "read_file"
  arguments = '{"path":"t.txt"}'
[[step]]
match.last_user_contains = "turn one"
match.last_tool_result_contains = "j"
  [[step.tool_call]]
  name = "edit_file"
  arguments = '{"path":"r.txt","old_string":"b\n","new_string":"B one\n"}'
  [[step.tool_call]]
  name = "edit_file"
  arguments = '{"path":"s.txt","old_string":"b\n","new_string":"B one\n"}'
  [[step.tool_call]]
  name = "edit_file"
  arguments = '{"path":"t.txt","old_string":"b\n","new_string":"B one\n"}'
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

// TestRewindLeavesAnOverlappingFileAlone: turn one changes r.txt, s.txt
// and t.txt; between turns one and two the user edits line d of r.txt
// (apart from the agent's lines) and the agent's own line of s.txt (over
// it). Rewinding the files to turn 1 takes the agent's changes back from
// r.txt (keeping the user's line) and t.txt, leaves s.txt byte for byte
// as it was and names it, all in one commit "loom: rewind to turn 1"
// that holds r.txt and t.txt only; redo brings the agent's lines back.
func TestRewindLeavesAnOverlappingFileAlone(t *testing.T) {
	dir := gittest.Repo(t, map[string]string{"r.txt": reviewBase, "s.txt": reviewBase, "t.txt": reviewBase})
	e := newEnv(t, envOptions{script: rewindThreeFilesScript, cfg: fakeeditor.Config{Loom: true, Folders: []string{dir}},
		options: map[string]any{"hooks": map[string]any{"auto_commit": true}}})
	r, s, tt := filepath.Join(e.folder, "r.txt"), filepath.Join(e.folder, "s.txt"), filepath.Join(e.folder, "t.txt")
	turn := func(prompt string) {
		t.Helper()
		from := len(e.ed.Messages(""))
		e.ask(prompt)
		e.await(prompt+" ended", turnEnded(e.folder, from))
	}
	turn("turn one")
	for _, p := range []string{r, s, tt} {
		if got := readFile(t, p); !strings.Contains(got, "B one\n") {
			t.Fatalf("turn one did not edit %s: %q", p, got)
		}
	}
	writeFile(t, r, strings.Replace(readFile(t, r), "d\n", "d by the user\n", 1))
	userS := strings.Replace(readFile(t, s), "B one\n", "B one, then the user's\n", 1)
	writeFile(t, s, userS)
	turn("turn two")
	turn("turn three")
	headBefore := strings.TrimSpace(gittest.Run(t, dir, "rev-parse", "HEAD"))

	var res workspace.RewindResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdRewind, RewindArgs{Turn: 1, Restore: "files"}, &res); err != nil {
		t.Fatalf("loom.rewind: %v", err)
	}
	if got, want := readFile(t, r), strings.Replace(reviewBase, "d\n", "d by the user\n", 1); got != want {
		t.Fatalf("r.txt after the rewind %q, want %q (the base with the user's line)", got, want)
	}
	if got := readFile(t, tt); got != reviewBase {
		t.Fatalf("t.txt after the rewind %q, want the base", got)
	}
	if got := readFile(t, s); got != userS {
		t.Fatalf("s.txt was touched: %q, want it as the user left it %q", got, userS)
	}
	if strings.Join(res.Conflicts, ",") != "s.txt" || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "s.txt") {
		t.Fatalf("conflicts %q notes %q, want s.txt named", res.Conflicts, res.Notes)
	}
	if strings.Join(res.Restored, ",") != "r.txt,t.txt" || res.Commit == "" {
		t.Fatalf("rewind result %+v", res)
	}
	// One commit on top of the old HEAD, with only the rewound files.
	if parent := strings.TrimSpace(gittest.Run(t, dir, "rev-parse", "HEAD^")); parent != headBefore {
		t.Fatalf("the rewind is not one commit on top of %s (HEAD^ is %s)", headBefore, parent)
	}
	if subject := strings.TrimSpace(gittest.Run(t, dir, "log", "-1", "--format=%s")); subject != "loom: rewind to turn 1" {
		t.Fatalf("HEAD is %q", subject)
	}
	if files := strings.Fields(gittest.Run(t, dir, "show", "--name-only", "--format=", "HEAD")); strings.Join(files, ",") != "r.txt,t.txt" {
		t.Fatalf("the rewind commit holds %v", files)
	}
	// The user is told which file was left, and why.
	e.await("the rewind names s.txt", func(msgs []fakeeditor.Message) bool {
		for _, m := range msgs {
			if m.Method == MethodNotice && strings.Contains(string(m.Params), "left as they are: s.txt") {
				return true
			}
		}
		return false
	})

	if err := e.ed.ExecuteCommand(e.ctx, CmdRedo, FolderArgs{}, &res); err != nil {
		t.Fatalf("loom.redo: %v", err)
	}
	if got, want := readFile(t, r), "a\nB one\nc\nd by the user\ne\nF two\ng\nh\nI three\nj\n"; got != want {
		t.Fatalf("r.txt after redo %q, want %q", got, want)
	}
	if got := readFile(t, tt); got != strings.Replace(reviewBase, "b\n", "B one\n", 1) {
		t.Fatalf("t.txt after redo %q", got)
	}
	if got := readFile(t, s); got != userS {
		t.Fatalf("s.txt changed by redo: %q", got)
	}
}
