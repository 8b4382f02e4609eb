package acp

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

// rewindScript: "alpha" writes x.txt; "beta" reads and edits y.txt's
// first line; the next prompt ("gamma", followed by loom's note that
// y.txt changed on disk) writes z.txt.
const rewindScript = `
[[step]]
match.last_user_contains = "alpha"
match.last_role = "user"
  [[step.tool_call]]
  id = "w1"
  name = "write_file"
  arguments = '{"path":"x.txt","content":"agent x\n"}'

[[step]]
match.last_user_contains = "beta"
match.last_role = "user"
  [[step.tool_call]]
  id = "r2"
  name = "read_file"
  arguments = '{"path":"y.txt"}'

[[step]]
match.last_tool_result_contains = "eight"
  [[step.tool_call]]
  id = "e2"
  name = "edit_file"
  arguments = '{"path":"y.txt","old_string":"one","new_string":"ONE by the agent"}'

[[step]]
match.last_role = "user"
  [[step.tool_call]]
  id = "w3"
  name = "write_file"
  arguments = '{"path":"z.txt","content":"agent z\n"}'

[[step]]
repeat = true
text = ["Done."]
`

// withDraftMethods renames the client's "_draft/..." requests to the
// draft's method names (the SDK's client only calls extension methods).
func withDraftMethods(r io.Reader) io.Reader {
	return lineRewriter(r, func(line []byte) []byte {
		return bytes.Replace(line, []byte(`"method":"_draft/`), []byte(`"method":"`), 1)
	})
}

// TestRewindOverACP: the initialize response offers the draft's
// rewindSession; a prompt's messageId comes back as userMessageId;
// session/edit_prompt on the second prompt takes back that turn (the
// conversation, and the agent's edit of y.txt, keeping the user's own
// later edit of the same file) and runs the new prompt in its place;
// session/rewind to the first turn's agent message takes back the edited
// turn too. A prompt's id is refused by session/rewind.
func TestRewindOverACP(t *testing.T) {
	y := "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\n"
	dir := repo(t, map[string]string{"y.txt": y})
	h := startWithInput(t, "", agentConfig(writeScript(t, rewindScript), nil), withDraftMethods)
	ctx := testCtx(t)
	h.initialize(false, false)
	id := h.newSession(dir)
	if _, err := h.prompt(id, "alpha"); err != nil {
		t.Fatal(err)
	}
	mine := "user-beta"
	resp, err := h.conn.Prompt(ctx, acpsdk.PromptRequest{SessionId: id, MessageId: &mine, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("beta")}})
	if err != nil || resp.UserMessageId == nil || *resp.UserMessageId != mine {
		t.Fatalf("prompt beta: %+v %v, want userMessageId %q", resp, err, mine)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "y.txt")); !strings.HasPrefix(string(b), "ONE by the agent\n") {
		t.Fatalf("y.txt after beta = %q", b)
	}
	// The user's own edit, after the agent's.
	userY := strings.Replace("ONE by the agent\n"+strings.TrimPrefix(y, "one\n"), "eight", "EIGHT by the user", 1)
	if err := os.WriteFile(filepath.Join(dir, "y.txt"), []byte(userY), 0o644); err != nil {
		t.Fatal(err)
	}
	raw, err := h.conn.CallExtension(ctx, "_draft/session/edit_prompt", map[string]any{
		"sessionId": id, "messageId": mine, "newContent": []acpsdk.ContentBlock{acpsdk.TextBlock("gamma")}})
	if err != nil {
		t.Fatalf("session/edit_prompt: %v\n%s", err, describe(h.client.snapshot()))
	}
	var edited acpsdk.PromptResponse
	if err := json.Unmarshal(raw, &edited); err != nil || edited.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("session/edit_prompt answered %s (%v)", raw, err)
	}
	want := strings.Replace(y, "eight", "EIGHT by the user", 1)
	if b, _ := os.ReadFile(filepath.Join(dir, "y.txt")); string(b) != want {
		t.Errorf("y.txt after edit_prompt = %q, want the agent's edit taken back and the user's kept: %q", b, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "z.txt")); err != nil {
		t.Errorf("the edited prompt did not run: %v", err)
	}
	if _, err := h.conn.CallExtension(ctx, "_draft/session/rewind", map[string]any{"sessionId": id, "toMessageId": mine}); err == nil {
		t.Errorf("session/rewind to a prompt's id succeeded")
	}
	// The first turn's agent message.
	var first string
	for _, n := range h.client.snapshot() {
		if c := n.Update.AgentMessageChunk; c != nil && c.MessageId != nil && strings.HasPrefix(*c.MessageId, string(id)+"-1-") {
			first = *c.MessageId
		}
	}
	if first == "" {
		t.Fatalf("no agent message of turn 1:\n%s", describe(h.client.snapshot()))
	}
	raw, err = h.conn.CallExtension(ctx, "_draft/session/rewind", map[string]any{"sessionId": id, "toMessageId": first})
	if err != nil {
		t.Fatalf("session/rewind: %v", err)
	}
	var rw struct {
		RemainingMessageCount int    `json:"remainingMessageCount"`
		LastMessageID         string `json:"lastMessageId"`
	}
	if err := json.Unmarshal(raw, &rw); err != nil || rw.LastMessageID != first || rw.RemainingMessageCount == 0 {
		t.Errorf("session/rewind answered %s", raw)
	}
	if _, err := os.Stat(filepath.Join(dir, "z.txt")); err == nil {
		t.Errorf("z.txt is still there after the rewind to turn 1")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "x.txt")); string(b) != "agent x\n" {
		t.Errorf("x.txt (turn 1, kept) = %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "y.txt")); string(b) != want {
		t.Errorf("y.txt after the rewind = %q, want the user's edit still: %q", b, want)
	}
}
