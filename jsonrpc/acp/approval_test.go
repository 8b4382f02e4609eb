package acp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/config"
)

// TestPermissionRule: "Always allow `…` in this folder" saves an approval
// rule; the same command then runs without a request, in a new session
// too (the rule is the folder's, in the user's state directory).
func TestPermissionRule(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	marker := filepath.Join(dir, "marker.txt")
	state := t.TempDir()
	h := start(t, writeScript(t, bashScript), state, nil)
	h.initialize(true, true)
	id := h.newSession(dir)
	h.client.permit = permitWith(optionRuleExact)
	h.mustPrompt(id, "make marker", acpsdk.StopReasonEndTurn)
	asked := len(h.client.permissions)
	h.client.permit = permitWith(optionRejectOnce) // must not be asked
	id2 := h.newSession(dir)
	h.mustPrompt(id2, "make marker", acpsdk.StopReasonEndTurn)
	b, _ := os.ReadFile(marker)
	if n := strings.Count(string(b), "ran"); n != 2 || len(h.client.permissions) != asked {
		t.Fatalf("ran %d times (want 2), asked %d times (want %d)", n, len(h.client.permissions), asked)
	}
}

// TestPermissionTimeout: a permission request the client never answers
// is withdrawn after tools.approval_timeout; the command is denied, said
// plainly, and the prompt ends.
func TestPermissionTimeout(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	h := start(t, writeScript(t, bashScript), "", func(c *config.Config) {
		c.Tools.ApprovalTimeout = config.Duration{Duration: 300 * time.Millisecond}
	})
	h.initialize(true, true)
	h.client.permit = func(ctx context.Context, _ acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
		<-ctx.Done() // nobody at the keyboard; the agent withdraws the request
		return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{Cancelled: &acpsdk.RequestPermissionOutcomeCancelled{}}}, nil
	}
	id := h.newSession(dir)
	h.mustPrompt(id, "make marker", acpsdk.StopReasonEndTurn)
	if _, err := os.Stat(filepath.Join(dir, "marker.txt")); err == nil {
		t.Fatal("the command ran")
	}
	raw, _ := json.Marshal(h.client.snapshot())
	if !strings.Contains(string(raw), "no answer within 300ms (tools.approval_timeout)") {
		t.Errorf("the denial is not said:\n%s", describe(h.client.snapshot()))
	}
}
