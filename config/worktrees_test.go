package config

import (
	"path/filepath"
	"testing"
)

// TestWorktreeCheckoutsAreNotLoomsState: inside loom's state directory,
// a worktree's checkout is the user's code (a worktree conversation
// writes it); the manifests beside it and everything else stay
// protected.
func TestWorktreeCheckoutsAreNotLoomsState(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state", "loom")
	ProtectStateDir(state)
	for path, want := range map[string]bool{
		filepath.Join(state, "worktrees", "repo-0a1b2c", "a.txt"):       false,
		filepath.Join(state, "worktrees", "repo-0a1b2c", "src", "b.go"): false,
		filepath.Join(state, "worktrees", "repo-0a1b2c.json"):           true,
		filepath.Join(state, "worktrees", "repo-0a1b2c.json.tmp"):       true,
		filepath.Join(state, "worktrees"):                               true,
		filepath.Join(state, "journals", "x.jsonl"):                     true,
		filepath.Join(state, "approvals.toml"):                          true,
		filepath.Join(state, "worktrees", "repo-0a1b2c", ".loom.toml"):  true,
	} {
		if got := IsProtected(path); got != want {
			t.Errorf("IsProtected(%s) = %v, want %v", path, got, want)
		}
	}
	if err := (Config{Worktrees: Worktrees{MaxSizeMB: -1}}).Validate(); err == nil {
		t.Error("worktrees.max_size_mb = -1 accepted")
	}
}
