package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// sessionCommit is a commit the session's post-tool hook made.
type sessionCommit struct {
	sha string
	// parent is HEAD before the commit, "" for a repository's first commit.
	parent string
	// files are the committed paths, relative to the worktree root.
	files []string
	// user marks the commit of the user's own earlier changes, made before
	// the agent's commit of the same batch.
	user bool
}

// ErrUndoRefused is wrapped by Undo's error when a guard refuses to undo;
// the error says why.
var ErrUndoRefused = errors.New("cannot undo")

// Undo reverts the session's last auto-commit (loom.undo) and returns what
// it did. The commit is removed from the branch (it must be HEAD, not
// pushed) and its files go back, in the index and the worktree, to their
// content before it; a file the commit created is deleted. Nothing else in
// the index or the worktree is touched, and the undone commit stays
// reachable by its hash (reported) and in the reflog. Undo refuses, with
// an error wrapping ErrUndoRefused that says why, when the commit is not
// this session's, is not HEAD, was pushed, or when its files have changes
// now. Undoing again undoes the session's previous commit, such as the
// commit of the user's own changes made before the agent's.
func (s *Session) Undo(ctx context.Context) (string, error) {
	var last *sessionCommit
	var cfgKey string
	if err := s.call(ctx, func() {
		if n := len(s.commits); n > 0 {
			c := s.commits[n-1]
			last = &c
		}
		cfgKey = s.cfg.Model.APIKeyEnv
	}); err != nil {
		return "", err
	}
	if last == nil {
		return "", fmt.Errorf("%w: this session has made no commit", ErrUndoRefused)
	}
	git := gitRunner{dir: s.folder, scrub: []string{cfgKey}}
	msg, err := undoCommit(ctx, git, *last)
	if err != nil {
		return "", err
	}
	s.call(ctx, func() {
		if n := len(s.commits); n > 0 && s.commits[n-1].sha == last.sha {
			s.commits = s.commits[:n-1]
		}
		s.lastCommit = ""
		if n := len(s.commits); n > 0 {
			s.lastCommit = s.commits[n-1].sha
		}
		s.notify(Notification{Kind: NoteInfo, Text: msg})
	})
	return msg, nil
}

// undoCommit checks the guards, then removes c from HEAD's branch and
// restores its files to c's parent.
func undoCommit(ctx context.Context, git gitRunner, c sessionCommit) (string, error) {
	top, err := git.toplevel(ctx)
	if err != nil {
		return "", fmt.Errorf("%w: not a git repository", ErrUndoRefused)
	}
	git.dir = top
	head := git.revParse(ctx, "HEAD")
	if head != c.sha {
		return "", fmt.Errorf("%w: the last auto-commit %s is no longer HEAD (HEAD is %s); undo it with git", ErrUndoRefused, short(c.sha), short(head))
	}
	if out, err := git.run(ctx, "", "branch", "-r", "--contains", c.sha); err != nil {
		return "", fmt.Errorf("%w: cannot tell whether %s was pushed: %v", ErrUndoRefused, short(c.sha), err)
	} else if remotes := strings.Fields(out); len(remotes) > 0 {
		return "", fmt.Errorf("%w: %s is already pushed (%s); revert it with git revert instead", ErrUndoRefused, short(c.sha), strings.Join(remotes, " "))
	}
	if c.parent == "" {
		return "", fmt.Errorf("%w: %s is the repository's first commit; remove it with git", ErrUndoRefused, short(c.sha))
	}
	out, err := git.run(ctx, "", append([]string{"status", "--porcelain", "-z", "--untracked-files=all", "--"}, literal(c.files)...)...)
	if err != nil {
		return "", err
	}
	if dirty := nulFields(out); len(dirty) > 0 {
		var names []string
		for _, d := range dirty {
			if len(d) > 3 {
				names = append(names, d[3:])
			}
		}
		return "", fmt.Errorf("%w: its files have changes since the commit (%s); commit or stash them first", ErrUndoRefused, strings.Join(names, ", "))
	}
	// Move the branch (or a detached HEAD) back, only if HEAD is still c.
	if _, err := git.run(ctx, "", "update-ref", "-m", "loom: undo "+short(c.sha), "HEAD", c.parent, c.sha); err != nil {
		return "", fmt.Errorf("undo %s: %w", short(c.sha), err)
	}
	if c.user {
		// The user's own changes: only the index goes back; the worktree
		// keeps them, uncommitted again, as before the agent's edit.
		if _, err := git.run(ctx, "", append([]string{"reset", "--quiet", "--"}, literal(c.files)...)...); err != nil {
			return "", fmt.Errorf("undid %s, but resetting the index of its files failed: %w", short(c.sha), err)
		}
	} else if err := restoreFiles(ctx, git, c); err != nil {
		return "", err
	}
	what := "the auto-commit"
	if c.user {
		what = "the commit of your earlier changes (they are uncommitted again)"
	}
	return fmt.Sprintf("undid %s %s (%s); HEAD is %s; to get it back: git cherry-pick %s", what, short(c.sha), strings.Join(c.files, ", "), short(c.parent), c.sha), nil
}

// restoreFiles brings the index entries and the worktree content of c's
// files back to c's parent; a file absent there is removed.
func restoreFiles(ctx context.Context, git gitRunner, c sessionCommit) error {
	var inParent, created []string
	for _, f := range c.files {
		if git.revParse(ctx, c.parent+":"+f) != "" {
			inParent = append(inParent, f)
		} else {
			created = append(created, f)
		}
	}
	if len(inParent) > 0 {
		if _, err := git.run(ctx, "", append([]string{"checkout", "--quiet", c.parent, "--"}, literal(inParent)...)...); err != nil {
			return fmt.Errorf("undid %s, but restoring its files failed: %w", short(c.sha), err)
		}
	}
	if len(created) > 0 {
		if _, err := git.run(ctx, "", append([]string{"rm", "--quiet", "--cached", "--"}, literal(created)...)...); err != nil {
			return fmt.Errorf("undid %s, but unstaging its new files failed: %w", short(c.sha), err)
		}
		for _, f := range created {
			if err := os.Remove(filepath.Join(git.dir, filepath.FromSlash(f))); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("undid %s, but removing %s failed: %w", short(c.sha), f, err)
			}
		}
	}
	return nil
}
