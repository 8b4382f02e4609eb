package acp

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
)

// TestUpdateQueueHoldsBehindReplay: while a session is held (two holds
// at once), its updates, raw updates and markers wait, in order, behind
// what the replay queues on the outbox directly; another session's go at
// once; an item put first goes first; once the last hold ends the session
// is no longer held.
func TestUpdateQueueHoldsBehindReplay(t *testing.T) {
	var mu sync.Mutex
	var sent []string
	record := func(s string) {
		mu.Lock()
		sent = append(sent, s)
		mu.Unlock()
	}
	out := newOutbox(func(_ context.Context, n acpsdk.SessionNotification) error {
		record(string(n.SessionId) + ":" + n.Update.AgentThoughtChunk.Content.Text.Text)
		return nil
	}, func(_ context.Context, u rawUpdate) error {
		record(string(u.SessionID) + ":raw " + u.Update.(string))
		return nil
	})
	defer out.close()
	var agentMu sync.Mutex
	q := newUpdates(&agentMu, out)
	thought := acpsdk.UpdateAgentThoughtText

	q.send("a", thought("before"))
	release1, release2 := q.holdForReplay("a"), q.holdForReplay("a")
	q.send("a", thought("held"))
	q.sendRaw("a", "held")
	marked := make(chan struct{})
	q.markFor("a", func() { record("a:mark"); close(marked) })
	q.send("b", thought("other"))
	out.update("a", thought("replay"))
	release1()
	agentMu.Lock()
	q.firstLocked("a", heldItem{raw: "first"})
	agentMu.Unlock()
	release2()
	select {
	case <-marked:
	case <-time.After(60 * time.Second):
		t.Fatal("the held marker never ran")
	}
	agentMu.Lock()
	_, stillHeld := q.held["a"]
	agentMu.Unlock()
	if stillHeld {
		t.Error("session a is still held after its last hold ended")
	}
	mu.Lock()
	got := strings.Join(sent, " | ")
	mu.Unlock()
	want := "a:before | b:other | a:replay | a:raw first | a:held | a:raw held | a:mark"
	if got != want {
		t.Errorf("sent\n  %s\nwant\n  %s", got, want)
	}
}
