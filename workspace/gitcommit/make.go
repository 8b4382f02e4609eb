package gitcommit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
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
	// Wrap, when set, rewrites each hook's process before it starts: the
	// sandbox the agent's commands run in (a hook runs programs of the
	// worktree the agent may have changed). An error stops the commit.
	Wrap func(*exec.Cmd) error
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
	// Index says how the user's index followed the commit.
	Index IndexReport
}

// IndexReport says how the user's index followed a commit, file by file.
// A file in none of its lists had its entry moved from the parent's
// version to the commit's (or had the commit's already).
type IndexReport struct {
	// Merged are files where the user had staged something else: the
	// agent's hunks were merged into the staged version, so that the
	// user's next `git commit` keeps both.
	Merged []string
	// Conflicts are files where that merge did not go cleanly (or the
	// user staged the file's removal): the staged version was left as it
	// was, and committing it as staged would revert the agent's change.
	Conflicts []string
	// Locked are the entries left at the parent's version because another
	// git process held the index lock; SyncIndex can retry them.
	Locked []Entry
}

// Commit makes the commit plan describes and moves HEAD to it, only if
// HEAD has not moved since (else, when the moves did not touch the plan's
// files, on top of the new HEAD). The user's worktree is left as it
// was; the index follows the commit file by file (see SyncIndex and
// Result.Index). A failing pre-commit or commit-msg hook commits
// nothing; its output is in the error. Once HEAD has moved, Commit
// returns the result and no error: what did not work after is in it.
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
	hooks := hookRunner{dir: r.HooksDir, enabled: opts.RunHooks, wrap: opts.Wrap}
	tree, err := r.commitTree(ctx, plan, parent, &hooks)
	if err != nil {
		return nil, err
	}
	msg, err := hooks.message(ctx, plan.Message)
	if err != nil {
		return nil, err
	}
	args := []string{"commit-tree", tree}
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
	// From here on the commit is made: whatever fails is reported in the
	// result, never as an error that would hide the commit.
	_ = hooks.run(ctx, "post-commit") // as with git commit, its failure changes nothing
	res.Index = r.SyncIndex(ctx, plan.Entries, indexLockWait)
	return res, nil
}

// commitTree builds the tree of plan's commit on parent and sets
// hooks.git. When no hook of the commit runs, the tree is written from
// the parent's trees (`git mktree`): no index at all. Else it is built in
// a temporary index, which the hooks see (GIT_INDEX_FILE), and the
// pre-commit hook runs on it.
func (r *Repo) commitTree(ctx context.Context, plan *Plan, parent string, hooks *hookRunner) (string, error) {
	hooks.git = r.git
	if !hooks.any() {
		trees := plan.trees
		var err error
		if trees == nil || trees.commit != parent {
			trees, _, err = r.readTrees(ctx, parent, plan.Files())
		}
		if err == nil {
			var tree string
			if tree, err = r.buildTree(ctx, trees, plan.Entries); err == nil {
				return tree, nil
			}
		}
		if !errors.Is(err, errNoDirectTree) {
			return "", err
		}
	}
	ix, err := r.newIndex(ctx, parent)
	if err != nil {
		return "", err
	}
	plan.index, hooks.git = ix.path, ix.git
	if _, err := ix.git.run(ctx, indexInfo(plan.Entries, false, r.oidLen), "update-index", "--add", "--remove", "-z", "--index-info"); err != nil {
		return "", err
	}
	if err := hooks.run(ctx, "pre-commit"); err != nil {
		return "", err
	}
	tree, err := ix.git.run(ctx, "", "write-tree")
	return strings.TrimSpace(tree), err
}

// indexLockWait is how long SyncIndex waits for another git process to
// release the index lock before it gives up for now.
const indexLockWait = 500 * time.Millisecond

// SyncIndex makes the user's index follow a commit of entries (from
// their base to their blob), file by file: an entry still at the base
// moves to the commit's blob; an entry where the user staged something
// else gets the agent's hunks merged into it (`git merge-file`), or is
// left as it was when they overlap (Conflicts). When another git
// process holds the index lock, it waits up to wait, then leaves the
// entries (Locked) for a later call.
func (r *Repo) SyncIndex(ctx context.Context, entries []Entry, wait time.Duration) IndexReport {
	var rep IndexReport
	if !r.waitIndexLock(wait) {
		rep.Locked = entries
		return rep
	}
	paths := make([]string, len(entries))
	for i, e := range entries {
		paths[i] = e.Path
	}
	idx, err := r.realIndex(ctx, paths)
	if err != nil {
		rep.Locked = entries
		return rep
	}
	var update []Entry
	for _, e := range entries {
		cur, has := idx[e.Path]
		switch stagedAs(cur, has, e) {
		case stagedAtBase:
			update = append(update, e)
		case stagedAsCommitted:
		case stagedOverlapping:
			rep.Conflicts = append(rep.Conflicts, e.Path)
		case stagedElse:
			merged, ok := r.mergeStaged(ctx, cur.oid, e)
			if !ok {
				rep.Conflicts = append(rep.Conflicts, e.Path)
				continue
			}
			update = append(update, Entry{Path: e.Path, Mode: cur.mode, Blob: merged})
			rep.Merged = append(rep.Merged, e.Path)
		}
	}
	if len(update) == 0 {
		return rep
	}
	if _, err := r.git.run(ctx, indexInfo(update, false, r.oidLen), "update-index", "--add", "--remove", "-z", "--index-info"); err != nil {
		// The lock was taken meanwhile (or git failed): nothing changed.
		rep.Merged = nil
		for _, e := range entries {
			if !slices.Contains(rep.Conflicts, e.Path) {
				rep.Locked = append(rep.Locked, e)
			}
		}
	}
	return rep
}

// waitIndexLock waits up to wait for no other git process to hold the
// index lock; false when one still does.
func (r *Repo) waitIndexLock(wait time.Duration) bool {
	lock := filepath.Join(r.GitDir, "index.lock")
	for deadline := time.Now().Add(wait); ; {
		if _, err := os.Lstat(lock); err != nil {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// staged is where a file's index entry stands against the agent's
// committed change of it.
type staged int

const (
	stagedAtBase      staged = iota // still the change's base: it moves to the commit's blob
	stagedAsCommitted               // already the commit's
	stagedOverlapping               // the user staged something that cannot be merged (added, removed)
	stagedElse                      // the user staged other text: the agent's hunks are merged into it
)

// stagedAs says where the index entry cur (has: there is one) stands
// against e.
func stagedAs(cur treeEntry, has bool, e Entry) staged {
	switch {
	case (!has && e.Base == "") || (has && cur.oid == e.Base && cur.mode == e.BaseMode):
		return stagedAtBase
	case (!has && e.Blob == "") || (has && cur.oid == e.Blob && cur.mode == e.Mode):
		return stagedAsCommitted
	case !has || e.Blob == "" || e.Base == "":
		return stagedOverlapping
	}
	return stagedElse
}

// mergeStaged merges the agent's change of e (base to blob) into the
// user's staged blob and writes the result; ok is false when the hunks
// overlap.
func (r *Repo) mergeStaged(ctx context.Context, staged string, e Entry) (string, bool) {
	var texts [3]string
	for i, oid := range []string{staged, e.Base, e.Blob} {
		out, err := r.git.run(ctx, "", "cat-file", "blob", oid)
		if err != nil {
			return "", false
		}
		texts[i] = out
	}
	merged, clean, err := r.merge3(ctx, texts[0], texts[1], texts[2])
	if err != nil || !clean {
		return "", false
	}
	blob, err := r.git.run(ctx, merged, "hash-object", "-w", "--no-filters", "--stdin")
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(blob), true
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

// hookRunner runs the user's git hooks the way `git commit` does.
type hookRunner struct {
	dir     string
	git     runner // in the worktree's root, with GIT_INDEX_FILE set
	enabled bool
	// wrap rewrites a hook's process before it starts (the sandbox).
	wrap func(*exec.Cmd) error
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

// any says whether a hook of a commit runs.
func (h hookRunner) any() bool {
	for _, name := range []string{"pre-commit", "prepare-commit-msg", "commit-msg", "post-commit"} {
		if h.path(name) != "" {
			return true
		}
	}
	return false
}

// run runs a hook, if there is one; its failure's error carries its
// output.
func (h hookRunner) run(ctx context.Context, name string, args ...string) error {
	p := h.path(name)
	if p == "" {
		return nil
	}
	if _, err := h.git.commandWrapped(ctx, "", h.wrap, p, args...); err != nil {
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

// InHead keeps the entries HEAD still holds as they were committed: an
// index update left for later (a held index.lock) must not bring back a
// change that was undone or replaced since.
func (r *Repo) InHead(ctx context.Context, entries []Entry) []Entry {
	paths := make([]string, len(entries))
	for i, e := range entries {
		paths[i] = e.Path
	}
	head, err := r.treeEntries(ctx, r.Head, paths)
	if err != nil {
		return nil
	}
	var kept []Entry
	for _, e := range entries {
		if h, ok := head[e.Path]; (ok && h.oid == e.Blob && h.mode == e.Mode) || (!ok && e.Blob == "") {
			kept = append(kept, e)
		}
	}
	return kept
}
