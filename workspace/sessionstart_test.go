package workspace

import (
	"testing"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// TestSessionStartSource: the SessionStart hooks are told "startup" for a
// new conversation, "resume" for one restored with its messages, "clear"
// after a reset, and nothing once they fired.
func TestSessionStartSource(t *testing.T) {
	system := []fsm.Message{{Role: fsm.RoleSystem, Content: "be brief"}}
	restored := append(system, fsm.Message{Role: fsm.RoleUser, Content: "hi"})
	for _, tc := range []struct {
		st   sessionStart
		msgs []fsm.Message
		want string
	}{
		{sessionStart{}, system, "startup"},
		{sessionStart{}, restored, "resume"},
		{sessionStart{after: "clear"}, restored, "clear"},
		{sessionStart{done: true}, restored, ""},
		{sessionStart{after: "clear", done: true}, system, ""},
	} {
		if got := tc.st.source(tc.msgs); got != tc.want {
			t.Errorf("%+v.source(%d messages) = %q, want %q", tc.st, len(tc.msgs), got, tc.want)
		}
	}
}
