package acp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/config"
)

// reviewEditScript reads and edits notes.txt, then answers.
const reviewEditScript = `
[[step]]
match.last_user_contains = "tidy notes"
match.last_role = "user"
  [[step.tool_call]]
  id = "read1"
  name = "read_file"
  arguments = '{"path":"notes.txt"}'

[[step]]
match.last_tool_result_contains = "saved on disk"
  [[step.tool_call]]
  id = "edit1"
  name = "edit_file"
  arguments = '{"path":"notes.txt","old_string":"saved on disk","new_string":"tidied by loom"}'

[[step]]
match.last_role = "tool"
text = ["ok"]
`

func reviewTweak(c *config.Config) { c.Tools.Edits = config.EditsReview }

// TestReviewPermissionCarriesTheDiffBeforeAnyWrite: under tools.edits =
// "review" the edit is a session/request_permission whose tool call
// carries the diff (old and new text); nothing is written through
// fs/write_text_file before the answer; Accept writes it, Reject does not.
func TestReviewPermissionCarriesTheDiffBeforeAnyWrite(t *testing.T) {
	for _, accept := range []bool{true, false} {
		dir := repo(t, map[string]string{"notes.txt": "first line\nsaved on disk\n"})
		h := start(t, writeScript(t, reviewEditScript), "", reviewTweak)
		h.initialize(true, true)
		notes := filepath.Join(dir, "notes.txt")
		writesAtPermission := -1
		h.client.permit = func(_ context.Context, p acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
			h.client.mu.Lock()
			writesAtPermission = len(h.client.writes)
			h.client.mu.Unlock()
			option := optionReject
			if accept {
				option = optionAccept
			}
			return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{
				Selected: &acpsdk.RequestPermissionOutcomeSelected{OptionId: acpsdk.PermissionOptionId(option)}}}, nil
		}
		id := h.newSession(dir)
		h.mustPrompt(id, "please tidy notes.txt", acpsdk.StopReasonEndTurn)
		if len(h.client.permissions) != 1 {
			t.Fatalf("%d permission requests, want 1", len(h.client.permissions))
		}
		p := h.client.permissions[0]
		var diff *acpsdk.ToolCallContentDiff
		for _, c := range p.ToolCall.Content {
			if c.Diff != nil {
				diff = c.Diff
			}
		}
		if p.ToolCall.ToolCallId != "edit1" || diff == nil || diff.Path != notes || diff.OldText == nil ||
			*diff.OldText != "first line\nsaved on disk\n" || diff.NewText != "first line\ntidied by loom\n" {
			t.Fatalf("permission tool call %+v diff %+v", p.ToolCall, diff)
		}
		if writesAtPermission != 0 {
			t.Fatalf("%d writes before the permission was answered", writesAtPermission)
		}
		got, wrote := h.client.writes[notes]
		if accept && got != "first line\ntidied by loom\n" {
			t.Fatalf("accepted: wrote %q", got)
		}
		if !accept && wrote {
			t.Fatalf("rejected, but wrote %q", got)
		}
	}
}

// TestSlashCommandsRewind: the session advertises /checkpoints, /rewind
// and /redo; /checkpoints lists the turns and /rewind 1 conversation cuts
// the conversation back and gives the prompt back, without a model turn.
func TestSlashCommandsRewind(t *testing.T) {
	dir := repo(t, map[string]string{"notes.txt": "first line\nsaved on disk\n"})
	h := start(t, writeScript(t, reviewEditScript), "", nil)
	h.initialize(true, true)
	id := h.newSession(dir)
	h.client.await(t, "available commands", func(ns []acpsdk.SessionNotification) bool {
		return strings.Contains(describe(ns), "commands /checkpoints /rewind /redo /trust")
	})
	h.mustPrompt(id, "please tidy notes.txt", acpsdk.StopReasonEndTurn)
	h.mustPrompt(id, "/checkpoints", acpsdk.StopReasonEndTurn)
	if text := agentText(h.client.snapshot()); !strings.Contains(text, "turn 1: please tidy notes.txt — changed notes.txt") {
		t.Fatalf("/checkpoints answered %q", text)
	}
	h.mustPrompt(id, "/rewind 1 both", acpsdk.StopReasonEndTurn)
	text := agentText(h.client.snapshot())
	if !strings.Contains(text, "Rewound (both) to before turn 1. Restored: notes.txt.") || !strings.Contains(text, "That turn's prompt was:\n\nplease tidy notes.txt") {
		t.Fatalf("/rewind answered %q", text)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(got) != "first line\nsaved on disk\n" {
		t.Fatalf("after /rewind the file is %q", got)
	}
	h.mustPrompt(id, "/rewind x", acpsdk.StopReasonEndTurn)
	if text := agentText(h.client.snapshot()); !strings.Contains(text, `/rewind: "x" is not a turn number`) {
		t.Fatalf("bad /rewind answered %q", text)
	}
}

// reviewCommandScript runs a command that rewrites a line of notes.txt.
const reviewCommandScript = `
[[step]]
match.last_user_contains = "regenerate"
match.last_role = "user"
  [[step.tool_call]]
  id = "cmd1"
  name = "bash"
  arguments = '{"command":"sed -i s/saved/generated/ notes.txt"}'

[[step]]
match.last_role = "tool"
text = ["ok"]
`

// TestReviewCommandChangesKeepOrDiscard: under review a command's
// changes are a session/request_permission with each file's diff (before
// and after the command) and Keep / Discard; Discard puts the file back
// as it was before the command, Keep leaves it and commits it.
func TestReviewCommandChangesKeepOrDiscard(t *testing.T) {
	for _, keep := range []bool{true, false} {
		dir := repo(t, map[string]string{"notes.txt": "first line\nsaved on disk\n"})
		h := start(t, writeScript(t, reviewCommandScript), "", func(c *config.Config) {
			c.Tools.Edits = config.EditsReview
			c.Tools.Bash = config.PolicyAllow
		})
		h.initialize(true, true)
		notes := filepath.Join(dir, "notes.txt")
		h.client.permit = func(_ context.Context, p acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
			option := optionReject
			if keep {
				option = optionAccept
			}
			return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{
				Selected: &acpsdk.RequestPermissionOutcomeSelected{OptionId: acpsdk.PermissionOptionId(option)}}}, nil
		}
		id := h.newSession(dir)
		h.mustPrompt(id, "please regenerate notes", acpsdk.StopReasonEndTurn)
		var perms []acpsdk.RequestPermissionRequest
		for _, p := range h.client.permissions {
			if p.ToolCall.ToolCallId == "cmd1" && p.ToolCall.Kind != nil && *p.ToolCall.Kind == acpsdk.ToolKindExecute && len(p.ToolCall.Content) > 0 {
				perms = append(perms, p)
			}
		}
		if len(perms) != 1 {
			t.Fatalf("%d keep/discard permission requests, want 1: %+v", len(perms), h.client.permissions)
		}
		p := perms[0]
		diff := p.ToolCall.Content[0].Diff
		if diff == nil || diff.Path != notes || diff.OldText == nil || *diff.OldText != "first line\nsaved on disk\n" || diff.NewText != "first line\ngenerated on disk\n" {
			t.Fatalf("diff %+v", diff)
		}
		if p.Options[0].Name != "Keep" || p.Options[1].Name != "Discard" || !strings.Contains(*p.ToolCall.Title, "changed notes.txt") {
			t.Fatalf("options %+v title %q", p.Options, *p.ToolCall.Title)
		}
		got, _ := os.ReadFile(notes)
		if keep && string(got) != "first line\ngenerated on disk\n" {
			t.Fatalf("kept: notes.txt is %q", got)
		}
		if !keep && string(got) != "first line\nsaved on disk\n" {
			t.Fatalf("discarded: notes.txt is %q", got)
		}
	}
}

// TestSlashRewindNamesALeftFile: the user changes the agent's own line
// after the turn; /rewind 1 files leaves the file as it is and says so.
func TestSlashRewindNamesALeftFile(t *testing.T) {
	dir := repo(t, map[string]string{"notes.txt": "first line\nsaved on disk\n"})
	h := start(t, writeScript(t, reviewEditScript), "", nil)
	h.initialize(true, true)
	id := h.newSession(dir)
	h.mustPrompt(id, "please tidy notes.txt", acpsdk.StopReasonEndTurn)
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("first line\ntidied by loom, and by me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.mustPrompt(id, "/rewind 1 files", acpsdk.StopReasonEndTurn)
	if text := agentText(h.client.snapshot()); !strings.Contains(text, "Some files were left as they are: notes.txt (") {
		t.Fatalf("/rewind answered %q", text)
	}
	if got, _ := os.ReadFile(notes); string(got) != "first line\ntidied by loom, and by me\n" {
		t.Fatalf("notes.txt was touched: %q", got)
	}
}
