package gitcommit

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrUndoRefused is wrapped by Undo's error when a guard refuses to undo;
// the error says why. Nothing was changed then.
var ErrUndoRefused = errors.New("cannot undo")

// restore is what Undo writes back to one file.
type restore struct {
	entry  Entry
	abs    string
	remove bool
	text   string
	kept   bool // the user's later edits are kept in it
}

// Undo takes back c, an agent commit made by Commit in r: HEAD moves back
// to c's parent (only if it is still c), and each file loses the agent's
// change and nothing else: a file still exactly as committed goes back to
// the parent's version (a file the commit created is removed); a file the
// user edited since gets the agent's hunks taken out by a reverse
// three-way merge, keeping the user's edits. The index entries still at
// the commit's version go back to the parent's. Undo refuses, with an
// error wrapping ErrUndoRefused that says why and having changed nothing,
// when c is not HEAD, was pushed, is a root commit, when an operation is
// in progress, or when a file's later changes cannot be kept apart from
// the agent's.
func Undo(ctx context.Context, r *Repo, c *Result) (string, error) {
	refuse := func(format string, args ...any) (string, error) {
		return "", fmt.Errorf("%w: "+format, append([]any{ErrUndoRefused}, args...)...)
	}
	if op, advice := r.InProgress(); op != "" {
		return refuse("%s is in progress; %s first", op, advice)
	}
	if r.Head != c.SHA {
		return refuse("the last auto-commit %s is no longer HEAD (HEAD is %s); undo it with git", Short(c.SHA), Short(r.Head))
	}
	if out, err := r.git.run(ctx, "", "branch", "-r", "--contains", c.SHA); err != nil {
		return refuse("cannot tell whether %s was pushed: %v", Short(c.SHA), err)
	} else if remotes := strings.Fields(out); len(remotes) > 0 {
		return refuse("%s is already pushed (%s); revert it with git revert instead", Short(c.SHA), strings.Join(remotes, " "))
	}
	if c.Parent == "" {
		return refuse("%s is the repository's first commit; remove it with git", Short(c.SHA))
	}
	idx, err := r.realIndex(ctx, c.Files)
	if err != nil {
		return "", err
	}
	var plan []restore
	for _, e := range c.Entries {
		if cur, has := idx[e.Path]; (has || e.Blob != "") && !(cur.oid == e.Blob && cur.mode == e.Mode) && !(cur.oid == e.Base && cur.mode == e.BaseMode) {
			return refuse("%s has changes staged since the commit; unstage them (git restore --staged %s) first", e.Path, e.Path)
		}
		rs, reason, err := r.restoreOf(ctx, e)
		if err != nil {
			return "", err
		}
		if reason != "" {
			return refuse("%s", reason)
		}
		plan = append(plan, rs)
	}
	if _, err := r.git.run(ctx, "", "update-ref", "-m", "loom: undo "+Short(c.SHA), "HEAD", c.Parent, c.SHA); err != nil {
		return refuse("HEAD moved: %v", err)
	}
	r.Head = c.Parent
	var kept []string
	for _, rs := range plan {
		if err := rs.write(); err != nil {
			return "", fmt.Errorf("undid %s, but restoring %s failed: %w", Short(c.SHA), rs.entry.Path, err)
		}
		if rs.kept {
			kept = append(kept, rs.entry.Path)
		}
	}
	if _, err := r.moveIndex(ctx, c.Entries, true); err != nil {
		return "", fmt.Errorf("undid %s, but resetting the index of its files failed: %w", Short(c.SHA), err)
	}
	msg := fmt.Sprintf("undid the auto-commit %s (%s); HEAD is %s", Short(c.SHA), strings.Join(c.Files, ", "), Short(c.Parent))
	if len(kept) > 0 {
		msg += "; your later edits are kept in " + strings.Join(kept, ", ")
	}
	return msg + "; to get it back: git cherry-pick " + c.SHA, nil
}

// restoreOf works out what undoing e writes to its file, or why it
// cannot.
func (r *Repo) restoreOf(ctx context.Context, e Entry) (restore, string, error) {
	rs := restore{entry: e, abs: filepath.Join(r.Top, filepath.FromSlash(e.Path))}
	var disk string
	st, err := os.Lstat(rs.abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if e.Blob != "" {
			return rs, e.Path + " was deleted since the commit", nil
		}
	case err != nil:
		return rs, "", err
	case st.Mode()&fs.ModeSymlink != 0 || e.Mode == "120000" || e.BaseMode == "120000":
		return rs, e.Path + " is a symbolic link; undo it with git", nil
	case !st.Mode().IsRegular():
		return rs, e.Path + " is no longer a regular file", nil
	case e.Blob == "":
		return rs, e.Path + " was created again since the commit deleted it", nil
	default:
		b, err := os.ReadFile(rs.abs)
		if err != nil {
			return rs, "", err
		}
		disk = string(b)
	}
	text := func(oid string) (string, error) {
		if oid == "" {
			return "", nil
		}
		return r.git.run(ctx, "", "cat-file", "--filters", "--path="+e.Path, oid)
	}
	base, err := text(e.Base)
	if err != nil {
		return rs, "", err
	}
	rs.remove = e.Base == ""
	rs.text = base
	if e.Blob == "" || blobName(disk, len(e.Blob)) == e.Blob {
		return rs, "", nil
	}
	committed, err := text(e.Blob)
	if err != nil {
		return rs, "", err
	}
	if disk == committed {
		return rs, "", nil
	}
	if e.Base == "" {
		return rs, e.Path + " was created by the agent and changed since; remove it yourself if you want it gone", nil
	}
	merged, clean, err := r.merge3(ctx, disk, committed, base)
	if err != nil {
		return rs, "", err
	}
	if !clean {
		return rs, "your changes to " + e.Path + " since the commit overlap the agent's, so they cannot be kept apart", nil
	}
	rs.text, rs.kept = merged, true
	return rs, "", nil
}

// write applies the restore to the worktree.
func (rs restore) write() error {
	if rs.remove {
		if err := os.Remove(rs.abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	perm := fs.FileMode(0o644)
	if rs.entry.BaseMode == "100755" {
		perm = 0o755
	}
	if st, err := os.Stat(rs.abs); err == nil {
		perm = st.Mode().Perm()
	}
	if err := os.WriteFile(rs.abs, []byte(rs.text), perm); err != nil {
		return err
	}
	return os.Chmod(rs.abs, perm)
}
