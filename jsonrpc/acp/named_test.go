package acp

import (
	"context"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/workspace"
)

// TestNothingBeforeTheSessionIsNamed (issue 47, item 6): what a new
// session's conversation says while session/new is still being answered
// — its context's use (a usage_update), a notice of its folder — reaches
// the client after the response that names the session, once each,
// never before (Zed drops an update for a session id it was not given).
// The test makes the race certain instead of likely: the updates are
// raised and the outbox drained between the session's registration and
// its response.
func TestNothingBeforeTheSessionIsNamed(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	h := start(t, writeScript(t, "[[step]]\ntext = [\"Hello.\"]\n"), "", nil)
	h.initialize(true, true)
	registeredForTest = func(a *agent, s *session) {
		a.Notify(workspace.Notification{Kind: workspace.NoteState, Folder: s.folder, Conversation: s.ws.ID(),
			State: "WaitingForUserInput", Context: &workspace.ContextUse{Tokens: 7, Window: 4096}})
		a.Notify(workspace.Notification{Kind: workspace.NoteInfo, Folder: s.folder, Text: "a notice of the folder"})
		// Whatever was queued for the client is on the wire now, before
		// the response.
		_ = a.out.flush(context.Background())
	}
	t.Cleanup(func() { registeredForTest = nil })
	id := h.newSession(dir)
	registeredForTest = nil
	h.client.await(t, "the usage and the notice", func(ns []acpsdk.SessionNotification) bool {
		d := describe(ns)
		return strings.Contains(d, "usage 7/4096") && strings.Contains(d, "a notice of the folder")
	})
	h.client.mu.Lock()
	defer h.client.mu.Unlock()
	before := -1
	for _, ev := range h.client.events {
		if ev.Kind == "response" && ev.Session == id {
			before = ev.Before
		}
	}
	if before < 0 {
		t.Fatalf("no session/new response naming %s on the wire", id)
	}
	for _, n := range h.client.wire[:before] {
		if n.SessionId == id {
			t.Errorf("an update for %s before the response that names it:\n%s", id, describe([]acpsdk.SessionNotification{n}))
		}
	}
	d := describe(h.client.wire)
	if c := strings.Count(d, "usage 7/4096"); c != 1 {
		t.Errorf("the usage_update came %d times, want once:\n%s", c, d)
	}
	if c := strings.Count(d, "a notice of the folder"); c != 1 {
		t.Errorf("the notice came %d times, want once:\n%s", c, d)
	}
}
