package acp

import (
	"regexp"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/workspace"
)

const historyScript = `
[[step]]
match.last_user_contains = "what is in a.txt"
match.last_role = "user"
text = ["Reading it."]
  [[step.tool_call]]
  id = "r1"
  name = "read_file"
  arguments = '{"path":"a.txt"}'

[[step]]
match.last_tool_result_contains = "alpha"
text = ["It holds alpha."]

[[step]]
match.last_user_contains = "and now"
match.last_message_contains = "and now"
repeat = true
text = ["still here"]
`

// TestListAndLoadAfterRestart: a fresh process lists the conversation
// (id, cwd, title from the first prompt, updatedAt) and session/load
// replays it — prompt, answers, tool call and its final state, what the
// journal's opening said — before it answers; the conversation then goes
// on. Also when the conversation's goroutine has opened the journal (and
// said so) before the session is registered.
func TestListAndLoadAfterRestart(t *testing.T) {
	t.Run("as it comes", listAndLoadAfterRestart)
	t.Run("the conversation opens first", func(t *testing.T) {
		openedForTest = func(c *workspace.Conversation) {
			if _, err := c.History(testCtx(t)); err != nil { // answered once opened
				t.Error(err)
			}
		}
		t.Cleanup(func() { openedForTest = nil })
		listAndLoadAfterRestart(t)
	})
}

func listAndLoadAfterRestart(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": "alpha\n"})
	script := writeScript(t, historyScript)
	first := start(t, script, "", nil)
	first.initialize(true, true)
	id := first.newSession(dir)
	first.mustPrompt(id, "what is in a.txt?\nsecond line", acpsdk.StopReasonEndTurn)
	first.stop()

	h := start(t, script, first.stateDir, nil)
	h.initialize(true, true)
	ctx := testCtx(t)
	list, err := h.conn.ListSessions(ctx, acpsdk.ListSessionsRequest{Cwd: acpsdk.Ptr(dir)})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 1 {
		t.Fatalf("session/list: %+v", list)
	}
	info := list.Sessions[0]
	if info.SessionId != id || info.Title == nil || *info.Title != "what is in a.txt?" || info.UpdatedAt == nil || *info.UpdatedAt == "" {
		t.Errorf("session/list entry %+v (want id %s)", info, id)
	}
	if _, err := h.conn.LoadSession(ctx, acpsdk.LoadSessionRequest{SessionId: id, Cwd: dir, McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	// What was on the wire before the response: the SDK hands
	// notifications to the client on goroutines of their own, so a
	// snapshot taken when LoadSession returns may already hold what
	// followed the response.
	// The context's use depends on the length of the temporary folder's
	// path (the system prompt names it).
	got := regexp.MustCompile(`usage \d+/`).ReplaceAllString(describe(h.client.updatesBeforeLastResponse()), "usage N/")
	want := "  user \"what is in a.txt?\\nsecond line\"\n" +
		"  agent \"Reading it.\"\n" +
		"  tool_call r1 read \"Read a.txt\" pending\n" +
		"  tool_call_update r1 completed\n" +
		"  agent \"It holds alpha.\"\n" +
		// The journal's notice, raised while the history was replayed,
		// waits behind the replay.
		"  agent \"· resumed the conversation: 5 messages, 1 turn\\n\\n\"\n" +
		// The title (session_info_update) and the context meter
		// (usage_update: what the next request sends, of the window).
		"  title \"what is in a.txt?\"\n" +
		"  usage N/32768\n"
	if got != want {
		t.Errorf("replay before the response:\n%s\nwant:\n%s", got, want)
	}
	// The slash commands follow the response (TestCommandsAfterTheSessionResponse).
	h.client.await(t, "the slash commands", func(ns []acpsdk.SessionNotification) bool {
		return strings.Contains(describe(ns), "commands /checkpoints /rewind /redo /trust")
	})
	h.mustPrompt(id, "and now?", acpsdk.StopReasonEndTurn)
}

// TestSecondNewSessionOnAFolder: each session/new on a folder is a
// conversation of its own, even with no prompt between; the earlier
// session stays usable, and all are listed.
func TestSecondNewSessionOnAFolder(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": "alpha\n"})
	h := start(t, writeScript(t, historyScript), "", nil)
	h.initialize(false, false)
	first := h.newSession(dir)
	if again := h.newSession(dir); again == first {
		t.Fatalf("two session/new gave the same id %s", first)
	}
	h.mustPrompt(first, "what is in a.txt", acpsdk.StopReasonEndTurn)
	second := h.newSession(dir)
	if second == first {
		t.Fatal("session/new on a used conversation gave the same id")
	}
	h.mustPrompt(first, "and now", acpsdk.StopReasonEndTurn)
	h.mustPrompt(second, "and now", acpsdk.StopReasonEndTurn)
	ctx := testCtx(t)
	if _, err := h.conn.ResumeSession(ctx, acpsdk.ResumeSessionRequest{SessionId: first, Cwd: dir}); err != nil {
		t.Fatal(err)
	}
	h.mustPrompt(first, "and now", acpsdk.StopReasonEndTurn)
	list, err := h.conn.ListSessions(ctx, acpsdk.ListSessionsRequest{Cwd: acpsdk.Ptr(dir)})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[acpsdk.SessionId]bool{}
	for _, s := range list.Sessions {
		ids[s.SessionId] = true
	}
	if len(list.Sessions) != 2 || !ids[first] || !ids[second] {
		t.Errorf("session/list %+v, want %s and %s", list.Sessions, first, second)
	}
}
