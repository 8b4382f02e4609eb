package gitcommit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrMoved is wrapped by Commit's error when the branch moved under the
// plan in a way that touches the plan's files.
var ErrMoved = errors.New("the branch moved")

// CommitOptions say how Commit runs.
type CommitOptions struct {
	// RunHooks runs the user's git hooks, as `git commit` does. Off, no
	// hook runs (as with --no-verify, and prepare-commit-msg and
	// post-commit skipped as well).
	RunHooks bool
}

// Result is a commit made by Commit.
type Result struct {
	SHA string
	// Parent is the commit's parent, "" for a root commit.
	Parent  string
	Files   []string
	Message string
	// Entries are the commit's files, with their parent's versions.
	Entries []Entry
	// IndexKept lists the files whose index entry the user had changed
	// (staged something): it was left as it was.
	IndexKept []string
}

// Commit makes the commit plan describes and moves HEAD to it, only if
// HEAD has not moved since (else, when the moves did not touch the plan's
// files, on top of the new HEAD). The user's index and worktree are left
// as they were, but for index entries still equal to the parent's, moved
// to the commit's. A failing pre-commit or commit-msg hook commits
// nothing; its output is in the error.
func (r *Repo) Commit(ctx context.Context, plan *Plan, opts CommitOptions) (*Result, error) {
	if err := r.checkState(); err != nil {
		return nil, err
	}
	if len(plan.Entries) == 0 {
		return nil, errors.New("nothing to commit")
	}
	defer plan.Discard()
	parent := plan.Parent
	if r.Head != parent {
		if err := r.rebase(ctx, plan); err != nil {
			return nil, err
		}
		parent = r.Head
		plan.Discard() // built on the old parent
	}
	var tg runner
	if plan.index != "" {
		tg = r.git.withEnv("GIT_INDEX_FILE=" + plan.index)
	} else {
		ix, err := r.newIndex(ctx, parent)
		if err != nil {
			return nil, err
		}
		plan.index, tg = ix.path, ix.git
		if _, err := tg.run(ctx, indexInfo(plan.Entries, false, r.oidLen), "update-index", "--add", "--remove", "-z", "--index-info"); err != nil {
			return nil, err
		}
	}
	hooks := hookRunner{dir: r.HooksDir, git: tg, enabled: opts.RunHooks}
	if err := hooks.run(ctx, "pre-commit"); err != nil {
		return nil, err
	}
	tree, err := tg.run(ctx, "", "write-tree")
	if err != nil {
		return nil, err
	}
	msg, err := hooks.message(ctx, plan.Message)
	if err != nil {
		return nil, err
	}
	args := []string{"commit-tree", strings.TrimSpace(tree)}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	sha, err := r.git.run(ctx, msg, append(args, "-F", "-")...)
	if err != nil {
		return nil, err
	}
	sha = strings.TrimSpace(sha)
	old := parent
	if old == "" {
		old = strings.Repeat("0", r.oidLen)
	}
	subject, _, _ := strings.Cut(msg, "\n")
	if _, err := r.git.run(ctx, "", "update-ref", "-m", "commit (loom): "+subject, "HEAD", sha, old); err != nil {
		return nil, fmt.Errorf("%w: HEAD is no longer %s, nothing was committed: %v", ErrMoved, Short(parent), err)
	}
	r.Head = sha
	res := &Result{SHA: sha, Parent: parent, Files: plan.Files(), Message: msg, Entries: plan.Entries}
	_ = hooks.run(ctx, "post-commit") // as with git commit, its failure changes nothing
	kept, err := r.syncIndex(ctx, plan.Entries)
	res.IndexKept = kept
	if err != nil {
		return res, fmt.Errorf("committed %s, but updating the index failed: %w", Short(sha), err)
	}
	return res, nil
}

// rebase moves plan onto the current HEAD when none of its files changed
// between the plan's parent and HEAD.
func (r *Repo) rebase(ctx context.Context, plan *Plan) error {
	now, err := r.treeEntries(ctx, r.Head, plan.Files())
	if err != nil {
		return err
	}
	for _, e := range plan.Entries {
		if n := now[e.Path]; n.oid != e.Base || n.mode != e.BaseMode {
			return fmt.Errorf("%w: HEAD is now %s, where %s changed since the agent's edit; nothing was committed", ErrMoved, Short(r.Head), e.Path)
		}
	}
	plan.Parent = r.Head
	return nil
}

// indexInfo is update-index --index-info input setting each entry to its
// new content (or, with base, back to its base); a path absent there is
// removed (mode 0).
func indexInfo(entries []Entry, base bool, oidLen int) string {
	var b strings.Builder
	for _, e := range entries {
		mode, oid := e.Mode, e.Blob
		if base {
			mode, oid = e.BaseMode, e.Base
		}
		if oid == "" {
			mode, oid = "0", strings.Repeat("0", oidLen)
		}
		fmt.Fprintf(&b, "%s %s\t%s\x00", mode, oid, e.Path)
	}
	return b.String()
}

// realIndex returns the user's index entries of paths.
func (r *Repo) realIndex(ctx context.Context, paths []string) (map[string]treeEntry, error) {
	return indexEntries(ctx, r.git, filepath.Join(r.GitDir, "index"), paths, r.oidLen)
}

// syncIndex moves the real index entries of entries from their base to
// their new content where the user has not staged anything else, and
// returns the paths left alone.
func (r *Repo) syncIndex(ctx context.Context, entries []Entry) ([]string, error) {
	return r.moveIndex(ctx, entries, false)
}

// moveIndex sets the index entries still at one side of entries (base,
// or with back the new content) to the other side, and returns the paths
// whose entry was elsewhere (left alone).
func (r *Repo) moveIndex(ctx context.Context, entries []Entry, back bool) ([]string, error) {
	paths := make([]string, len(entries))
	for i, e := range entries {
		paths[i] = e.Path
	}
	idx, err := r.realIndex(ctx, paths)
	if err != nil {
		return nil, err
	}
	var move []Entry
	var kept []string
	for _, e := range entries {
		fromMode, from := e.BaseMode, e.Base
		if back {
			fromMode, from = e.Mode, e.Blob
		}
		cur, has := idx[e.Path]
		if (!has && from == "") || (has && cur.oid == from && cur.mode == fromMode) {
			move = append(move, e)
		} else {
			kept = append(kept, e.Path)
		}
	}
	if len(move) == 0 {
		return kept, nil
	}
	_, err = r.git.run(ctx, indexInfo(move, back, r.oidLen), "update-index", "--add", "--remove", "-z", "--index-info")
	return kept, err
}

// hookRunner runs the user's git hooks the way `git commit` does.
type hookRunner struct {
	dir     string
	git     runner // in the worktree's root, with GIT_INDEX_FILE set
	enabled bool
}

// path returns the hook's executable, "" when it does not exist or is not
// executable (git skips it then).
func (h hookRunner) path(name string) string {
	if !h.enabled {
		return ""
	}
	p := filepath.Join(h.dir, name)
	st, err := os.Stat(p)
	if err != nil || !st.Mode().IsRegular() || st.Mode()&0o111 == 0 {
		return ""
	}
	return p
}

// run runs a hook, if there is one; its failure's error carries its
// output.
func (h hookRunner) run(ctx context.Context, name string, args ...string) error {
	p := h.path(name)
	if p == "" {
		return nil
	}
	if _, err := h.git.command(ctx, "", p, args...); err != nil {
		return fmt.Errorf("the %s hook failed: %w", name, err)
	}
	return nil
}

// message runs prepare-commit-msg and commit-msg on msg, as git does
// with a message given by -m, and returns the message they leave. The
// hooks get the path of a private temporary file as $1.
func (h hookRunner) message(ctx context.Context, msg string) (string, error) {
	if h.path("prepare-commit-msg") == "" && h.path("commit-msg") == "" {
		return msg, nil
	}
	// A private file of our own, never .git/COMMIT_EDITMSG: that one may
	// be the message of a `git commit` the user has open in an editor.
	f, err := os.CreateTemp("", "loom-commit-msg-")
	if err != nil {
		return "", err
	}
	file := f.Name()
	defer os.Remove(file)
	_, err = f.WriteString(msg)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	if err := h.run(ctx, "prepare-commit-msg", file, "message"); err != nil {
		return "", err
	}
	if err := h.run(ctx, "commit-msg", file); err != nil {
		return "", err
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	// git's whitespace cleanup of a message that is not edited.
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	out := strings.Trim(strings.Join(lines, "\n"), "\n")
	if out == "" {
		return "", errors.New("the commit message hooks left an empty message")
	}
	return out + "\n", nil
}

// Committed returns HEAD when it already holds plan's commit (a daemon
// that died after moving the branch, before it could say so), else "".
func (r *Repo) Committed(ctx context.Context, plan *Plan) string {
	if r.Head == "" || r.Head == plan.Parent {
		return ""
	}
	now, err := r.treeEntries(ctx, r.Head, plan.Files())
	if err != nil {
		return ""
	}
	for _, e := range plan.Entries {
		if n := now[e.Path]; n.oid != e.Blob || n.mode != e.Mode {
			return ""
		}
	}
	msg, err := r.git.run(ctx, "", "log", "-1", "--format=%P%n%B", r.Head)
	if err != nil {
		return ""
	}
	parents, body, _ := strings.Cut(msg, "\n")
	subject, _, _ := strings.Cut(plan.Message, "\n")
	if parents != plan.Parent || !strings.HasPrefix(body, subject) {
		return ""
	}
	return r.Head
}
