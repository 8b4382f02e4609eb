package workspace

import (
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/config"
)

// TestRepoHooksOff: a repository's hooks never run under "deny", nor
// unsandboxed under "ask" (they may run what the agent edited, and no one
// approves their runs); under "allow" they run, sandboxed or not.
func TestRepoHooksOff(t *testing.T) {
	for _, tc := range []struct {
		bash      config.Policy
		sandboxed bool
		held      string
	}{
		{config.PolicyDeny, true, "deny"},
		{config.PolicyDeny, false, "deny"},
		{config.PolicyAsk, false, "sandbox is off"},
		{config.PolicyAsk, true, ""},
		{config.PolicyAllow, false, ""},
		{config.PolicyAllow, true, ""},
	} {
		got := repoHooksOff(tc.bash, tc.sandboxed)
		if (got == "") != (tc.held == "") || !strings.Contains(got, tc.held) {
			t.Errorf("bash=%s sandboxed=%v: %q, want one saying %q", tc.bash, tc.sandboxed, got, tc.held)
		}
	}
}
