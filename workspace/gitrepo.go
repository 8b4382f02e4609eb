package workspace

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/loom-lsp/loom-lsp/workspace/gitcommit"
)

// The folder's repository.
//
// loom commits into the git repository it found when it opened the
// folder, or when the user last trusted it (loom.trust), and no other: a
// repository a command creates during the session (a sandboxed `git init`
// can write .git/config with core.fsmonitor, and .git/hooks, since no
// .git existed to protect) is reported and left alone, no commit and no
// hook, until the user confirms it with loom.trust. A new session (a new
// `loom-lsp exec`, a restarted editor) opens the folder anew and takes
// the repository it finds then.

// ErrNewRepository is wrapped by folderRepo.check's error: the folder's
// repository is not the one found when it was opened or trusted.
var ErrNewRepository = errors.New("a git repository appeared")

// repoSeen is the repository found for a folder: its root and git
// directory, both "" when there was none.
type repoSeen struct{ top, gitDir string }

// folderRepo is the repository recorded for the folder at dir (any
// goroutine).
type folderRepo struct {
	dir  string
	seen atomic.Pointer[repoSeen]
}

// record records the repository the folder is in now, as the one loom
// commits into.
func (fr *folderRepo) record(ctx context.Context) {
	seen := repoSeen{}
	if r, err := gitcommit.Open(ctx, fr.dir); err == nil {
		seen = repoSeen{top: r.Top, gitDir: r.GitDir}
	}
	fr.seen.Store(&seen)
}

// check returns an error wrapping ErrNewRepository when r is not the
// repository recorded for the folder.
func (fr *folderRepo) check(r *gitcommit.Repo) error {
	seen := fr.seen.Load()
	if seen == nil || (seen.top == r.Top && seen.gitDir == r.GitDir) {
		return nil
	}
	was := "the folder was in no git repository"
	if seen.top != "" {
		was = "the folder was in the repository " + seen.top
	}
	return fmt.Errorf("%w at %s since loom opened the folder (%s; a command may have run git init): loom neither commits into it nor runs its hooks until you confirm it with loom.trust", ErrNewRepository, r.GitDir, was)
}
