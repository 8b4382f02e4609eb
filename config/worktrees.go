package config

// Worktrees is [worktrees]: the git worktrees conversations work in
// (loom-lsp exec --worktree; docs/worktrees.md).
type Worktrees struct {
	// MaxSizeMB is the disk space, in megabytes, all of loom's worktrees
	// may take together (build outputs included); 0 sets no budget.
	// Past it, loom removes the worktrees nobody needs (merged, or
	// orphans holding nothing unmerged) and refuses to make a new one
	// until `loom-lsp worktrees clean` or you make room.
	MaxSizeMB int `toml:"max_size_mb"`
}

// DefaultWorktrees is [worktrees] when no file sets it: 20 GB.
func DefaultWorktrees() Worktrees { return Worktrees{MaxSizeMB: 20 << 10} }

// validateWorktrees adds the errors of [worktrees].
func (c Config) validateWorktrees(add func(*Error)) {
	if c.Worktrees.MaxSizeMB < 0 {
		add(c.keyErr("worktrees.max_size_mb", "must be >= 0 (0: no budget), got %d", c.Worktrees.MaxSizeMB))
	}
}
