package acp

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

// TestNoticesReachTheirSessionOnly: a file the agent read in session A
// changes on disk; A is told, in a notice (an agent message of its own,
// tagged in _meta), and B of the same folder is not. Each session is
// told the sandbox line once, at its first prompt.
func TestNoticesReachTheirSessionOnly(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": "alpha\n"})
	h := start(t, writeScript(t, historyScript), "", nil)
	h.initialize(true, true)
	a, b := h.newSession(dir), h.newSession(dir)
	h.mustPrompt(a, "what is in a.txt?", acpsdk.StopReasonEndTurn)
	h.mustPrompt(b, "and now?", acpsdk.StopReasonEndTurn)
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("changed behind the agent's back\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	changed := func(text string) bool {
		return strings.Contains(text, "changed on disk since the agent read them") && strings.Contains(text, "a.txt")
	}
	h.client.await(t, "A told that a.txt changed", func(ns []acpsdk.SessionNotification) bool {
		return slices.ContainsFunc(notices(ns, a), changed)
	})
	h.mustPrompt(a, "and now?", acpsdk.StopReasonEndTurn)
	h.mustPrompt(b, "and now?", acpsdk.StopReasonEndTurn)
	ups := h.client.snapshot()
	if slices.ContainsFunc(notices(ups, b), changed) {
		t.Errorf("B was told of A's file:\n%s", describe(ups))
	}
	for _, id := range []acpsdk.SessionId{a, b} {
		n := 0
		for _, text := range notices(ups, id) {
			if strings.HasPrefix(text, "· sandbox: ") && (strings.Contains(text, "network") || strings.Contains(text, "no sandbox")) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("session %s was told the sandbox line %d times, want once:\n%s", id, n, strings.Join(notices(ups, id), ""))
		}
	}
}
