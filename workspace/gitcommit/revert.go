package gitcommit

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/loom-lsp/loom-lsp/workspace/worktree"
)

// ErrUndoRefused is wrapped by Revert's error when it refuses; the error
// says why. Nothing was changed then.
var ErrUndoRefused = errors.New("cannot undo")

// RevertOptions say how Revert records its work.
type RevertOptions struct {
	// Message is the revert commit's message, when one is made; "" gives
	// "loom: undo <commits>".
	Message string
	// KeepHistory always makes a revert commit, even when the commits
	// could leave the branch, so that git log tells what happened and the
	// revert commit can itself be reverted (a rewind and its redo).
	KeepHistory bool
	// Paths, when not empty, restricts the revert to these files
	// (slash-separated, relative to the repository's top): the commits'
	// changes to other files stay, so the commits never leave the branch
	// (a revert commit is made, as with KeepHistory).
	Paths []string
	// LeaveConflicts takes back every file it can and leaves a file whose
	// later changes cannot be kept apart from the agent's (or that is
	// staged, or a symbolic link) exactly as it is, naming it in
	// Reverted.Conflicts, instead of refusing the whole revert. It
	// implies KeepHistory: a partial revert is always a revert commit.
	LeaveConflicts bool
	// Leave names files (relative, slash-separated) to leave as they are
	// with LeaveConflicts, and why (unsaved in the editor, say).
	Leave map[string]string
	// Planned, when set, is called once the revert is worked out and
	// just before the branch moves, with what the move will be and the
	// restores that will follow, so that the caller can record them
	// durably first: a revert cut short after the move can then be
	// completed. An error refuses the revert, the branch unmoved.
	Planned func(PlannedRevert) error
}

// PlannedRevert is a revert about to move the branch.
type PlannedRevert struct {
	// Head is what HEAD will be; Dropped are the commits that leave the
	// branch (when they do), so that whether the move happened can be
	// told later: HEAD is Head or has it as an ancestor, and has none of
	// Dropped.
	Head    string
	Dropped []string
	// Restores are the worktree changes that will follow (Reverted.Restores).
	Restores []worktree.Change
}

// Conflict is a file Revert left as it was, and why.
type Conflict struct {
	Path   string
	Reason string
}

// Reverted is what Revert did.
type Reverted struct {
	// Dropped is set when the commits left the branch: they were its
	// newest commits, one on top of the other, none pushed, so HEAD moved
	// back to the oldest one's parent. Otherwise a revert commit was made
	// on top of HEAD.
	Dropped bool
	// Head is HEAD afterwards.
	Head string
	// Reverted are the commits taken back, newest first.
	Reverted []string
	// Files are the files changed back; Kept those in which later
	// changes (the user's, or later commits') were kept.
	Files, Kept []string
	// Conflicts are the files left as they were (only with
	// RevertOptions.LeaveConflicts).
	Conflicts []Conflict
	// Commit is the revert commit, when one was made, as a Result that
	// Revert can take back in turn.
	Commit *Result
	// Restores are the worktree changes that take the agent's hunks out
	// of the files on disk (paths relative to the repository's top), each
	// expecting the content it was planned from. Revert writes none of
	// them: the caller applies them through the worktree's writer.
	Restores []worktree.Change
}

// Message says what r did, for people.
func (rv *Reverted) Message() string {
	shorts := make([]string, len(rv.Reverted))
	for i, s := range rv.Reverted {
		shorts[i] = Short(s)
	}
	what := "the auto-commit " + shorts[0]
	if len(shorts) > 1 {
		what = "the auto-commits " + strings.Join(shorts, ", ")
	}
	var msg string
	if rv.Dropped {
		msg = fmt.Sprintf("undid %s (%s); HEAD is %s", what, strings.Join(rv.Files, ", "), Short(rv.Head))
	} else {
		msg = fmt.Sprintf("undid %s (%s) with a new commit %s that takes the agent's changes back, as later commits are built on it", what, strings.Join(rv.Files, ", "), Short(rv.Head))
	}
	if len(rv.Kept) > 0 {
		msg += "; your later edits are kept in " + strings.Join(rv.Kept, ", ")
	}
	if rv.Dropped {
		picks := make([]string, len(rv.Reverted))
		for i := range rv.Reverted {
			picks[len(picks)-1-i] = rv.Reverted[i]
		}
		return msg + "; to get it back: git cherry-pick " + strings.Join(picks, " ")
	}
	return msg + "; to get it back: git revert " + rv.Head
}

// version is one side of a file: its text, or absent.
type version struct {
	text    string
	present bool
}

// revertFile is what Revert writes back to one file.
type revertFile struct {
	path string
	// head is the file in HEAD; tree what the new HEAD holds.
	head, tree treeEntry
	treeText   version
	disk       version
	// diskErr is why the file on disk could not be read (a link on its
	// way, not a regular file).
	diskErr          error
	kept, writeDisk  bool
	indexAtHead      bool
	entries          []Entry // the commits' entries of the file, newest first
	newDisk          version
	newTreeWasMerged bool
	// left is set when the file is left as it was (LeaveConflicts).
	left bool
}

// Revert takes the agent's changes of commits (agent commits made by
// Commit in r, one or several, in any order) back, and keeps everything
// else: the user's edits in the worktree and in later commits.
//
// When the commits are the branch's newest, one on top of the other and
// none pushed, HEAD moves back to the oldest one's parent
// (compare-and-swap); otherwise a revert commit is made on top of HEAD,
// whose tree takes the agent's hunks out of each file with a three-way
// merge. The user's index entries still at HEAD's version follow HEAD.
//
// Revert writes no file of the worktree: it plans. Reverted.Restores are
// the changes that take the agent's hunks out of each file on disk by the
// same three-way merge, keeping the user's later edits, each with the
// content the plan was made from; the caller applies them through the
// worktree's writer once Revert returned (the branch has then moved), so
// that a file changed meanwhile is left alone and named.
//
// It refuses, with an error wrapping ErrUndoRefused that says why (naming
// the file) and having changed nothing, when an operation is in progress,
// when a commit is not on the branch, when a file's later changes overlap
// the agent's, when the user staged something else in a file, or when a
// file (or a directory above it) is a symbolic link; with
// opts.LeaveConflicts such a file is left as it was and named in
// Reverted.Conflicts instead, and the other files are taken back (when
// none is left, no commit is made).
func Revert(ctx context.Context, r *Repo, commits []*Result, opts RevertOptions) (*Reverted, error) {
	return reverter{r}.revert(ctx, commits, opts)
}

// reverter is one Revert in its repository: the steps that choose, vet,
// plan and record the commits' taking back, over the repository's own
// verbs (git, trees, blobs, the index).
type reverter struct{ *Repo }

func (r reverter) revert(ctx context.Context, commits []*Result, opts RevertOptions) (*Reverted, error) {
	ordered, drop, err := r.revertable(ctx, commits, opts)
	if err != nil {
		return nil, err
	}
	files, err := r.revertPlan(ctx, ordered, opts.Paths)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 && len(opts.Paths) > 0 {
		return nil, refusal("the commits did not change %s", strings.Join(opts.Paths, ", "))
	}
	rv := &Reverted{Head: r.Head}
	for _, c := range ordered {
		rv.Reverted = append(rv.Reverted, c.SHA)
	}
	leave := func(f *revertFile, reason string) error {
		if !opts.LeaveConflicts {
			return refusal("%s", reason)
		}
		rv.Conflicts = append(rv.Conflicts, Conflict{Path: f.path, Reason: reason})
		f.left = true
		return nil
	}
	if err := r.vetFiles(ctx, files, opts.Leave, leave); err != nil {
		return nil, err
	}
	files = slices.DeleteFunc(files, func(f *revertFile) bool { return f.left })
	if drop {
		err = r.dropCommits(ctx, ordered, files, opts.Planned)
	} else {
		files, err = r.revertFiles(ctx, ordered, files, opts, leave, rv)
	}
	if err != nil || len(files) == 0 && !drop {
		return nilIfErr(rv, err)
	}
	rv.Dropped, rv.Head = drop, r.Head
	return rv, r.planRestores(ctx, rv, ordered, files)
}

// nilIfErr returns rv, or nil with err.
func nilIfErr(rv *Reverted, err error) (*Reverted, error) {
	if err != nil {
		return nil, err
	}
	return rv, nil
}

// refusal is an error wrapping ErrUndoRefused.
func refusal(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrUndoRefused}, args...)...)
}

// revertable orders commits newest first and says whether they can leave
// the branch (drop), or refuses.
func (r reverter) revertable(ctx context.Context, commits []*Result, opts RevertOptions) (ordered []*Result, drop bool, err error) {
	if len(commits) == 0 {
		return nil, false, refusal("no commit to undo")
	}
	if op, advice := r.InProgress(); op != "" {
		return nil, false, refusal("%s is in progress; %s first", op, advice)
	}
	if r.Head == "" {
		return nil, false, refusal("the branch has no commit")
	}
	ordered, err = r.newestFirst(ctx, commits)
	if err != nil {
		return nil, false, err
	}
	drop = !opts.KeepHistory && !opts.LeaveConflicts && len(opts.Paths) == 0 && ordered[0].SHA == r.Head
	for i := 0; drop && i+1 < len(ordered); i++ {
		drop = ordered[i].Parent == ordered[i+1].SHA
	}
	if drop {
		out, err := r.git.run(ctx, "", "branch", "-r", "--contains", ordered[len(ordered)-1].SHA)
		if err != nil {
			return nil, false, err
		}
		drop = strings.TrimSpace(out) == "" // a pushed commit stays: revert it
	}
	return ordered, drop, nil
}

// vetFiles leaves (or refuses) the files that cannot be taken back: named
// in leaveAlso, links, and files with other changes staged; it marks the
// others whose index entry is at HEAD's version.
func (r reverter) vetFiles(ctx context.Context, files []*revertFile, leaveAlso map[string]string, leave func(*revertFile, string) error) error {
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.path
	}
	idx, err := r.realIndex(ctx, paths)
	if err != nil {
		return err
	}
	for _, f := range files {
		reason, named := leaveAlso[f.path]
		switch {
		case named && leave(f, reason) == nil:
			continue
		case f.head.mode == "120000" || f.treeText.present && f.tree.mode == "120000" || errors.Is(f.diskErr, worktree.ErrSymlink):
			if err := leave(f, f.path+" is a symbolic link, or a directory above it is; undo it with git"); err != nil {
				return err
			}
			continue
		case f.diskErr != nil:
			if err := leave(f, f.diskErr.Error()); err != nil {
				return err
			}
			continue
		}
		cur, has := idx[f.path]
		switch {
		case (!has && f.head.oid == "") || (has && cur == f.head):
			f.indexAtHead = true
		case has && cur == f.tree:
		default:
			if err := leave(f, fmt.Sprintf("%s has changes staged since the commit; unstage them (git restore --staged %s) first", f.path, f.path)); err != nil {
				return err
			}
		}
	}
	return nil
}

// dropCommits works out files' worktree versions and moves the branch
// back to before ordered (compare-and-swap).
func (r reverter) dropCommits(ctx context.Context, ordered []*Result, files []*revertFile, planned func(PlannedRevert) error) error {
	for _, f := range files {
		if reason := r.revertDisk(ctx, f); reason != "" {
			return refusal("%s", reason)
		}
	}
	oldest := ordered[len(ordered)-1]
	if planned != nil {
		pr := PlannedRevert{Head: oldest.Parent, Restores: restoresOf(files)}
		for _, c := range ordered {
			pr.Dropped = append(pr.Dropped, c.SHA)
		}
		if err := planned(pr); err != nil {
			return refusal("%v", err)
		}
	}
	if _, err := r.git.run(ctx, "", "update-ref", "-m", "loom: undo "+Short(ordered[0].SHA), "HEAD", oldest.Parent, r.Head); err != nil {
		return refusal("HEAD moved: %v", err)
	}
	r.Head = oldest.Parent
	return nil
}

// revertFiles works out files' tree and worktree versions, leaving (or
// refusing) those where it cannot, and makes the revert commit of the
// others, recorded in rv.Commit; it returns the files taken back.
func (r reverter) revertFiles(ctx context.Context, ordered []*Result, files []*revertFile, opts RevertOptions, leave func(*revertFile, string) error, rv *Reverted) ([]*revertFile, error) {
	for _, f := range files {
		reason := r.revertTree(ctx, f)
		if reason == "" {
			reason = r.revertDisk(ctx, f)
		}
		if reason != "" {
			if err := leave(f, reason); err != nil {
				return nil, err
			}
		}
	}
	files = slices.DeleteFunc(files, func(f *revertFile) bool { return f.left })
	if len(files) == 0 {
		return nil, nil // every file was left as it was: nothing to commit
	}
	parent := r.Head
	head, err := r.revertCommit(ctx, ordered, files, opts.Message, opts.Planned)
	if err != nil {
		return nil, err
	}
	r.Head = head
	rv.Commit = &Result{SHA: head, Parent: parent, Message: opts.Message}
	for _, f := range files {
		rv.Commit.Files = append(rv.Commit.Files, f.path)
		rv.Commit.Entries = append(rv.Commit.Entries, Entry{Path: f.path, Mode: f.tree.mode, Blob: f.tree.oid, BaseMode: f.head.mode, Base: f.head.oid})
	}
	return files, nil
}

// planRestores fills rv's files and restores, and moves the user's index
// entries still at HEAD's old version to the new one.
func (r reverter) planRestores(ctx context.Context, rv *Reverted, ordered []*Result, files []*revertFile) error {
	rv.Restores = restoresOf(files)
	var move []Entry
	for _, f := range files {
		rv.Files = append(rv.Files, f.path)
		if f.kept {
			rv.Kept = append(rv.Kept, f.path)
		}
		if f.indexAtHead && f.tree != f.head {
			move = append(move, Entry{Path: f.path, Mode: f.tree.mode, Blob: f.tree.oid})
		}
	}
	if len(move) > 0 {
		if _, err := r.git.run(ctx, indexInfo(move, false, r.oidLen), "update-index", "--add", "--remove", "-z", "--index-info"); err != nil {
			return fmt.Errorf("undid %s, but updating the index of its files failed: %w", Short(ordered[0].SHA), err)
		}
	}
	return nil
}

// newestFirst orders commits from the newest to the oldest by ancestry,
// dropping duplicates. Each must be on the branch (an ancestor of HEAD).
func (r reverter) newestFirst(ctx context.Context, commits []*Result) ([]*Result, error) {
	seen := map[string]bool{}
	var out []*Result
	for _, c := range commits {
		if c != nil && !seen[c.SHA] {
			seen[c.SHA] = true
			out = append(out, c)
		}
	}
	for _, c := range out {
		if c.Parent == "" {
			return nil, fmt.Errorf("%w: %s is the repository's first commit; remove it with git", ErrUndoRefused, Short(c.SHA))
		}
		if !r.isAncestor(ctx, c.SHA, r.Head) {
			return nil, fmt.Errorf("%w: %s is not on the current branch (HEAD is %s)", ErrUndoRefused, Short(c.SHA), Short(r.Head))
		}
	}
	// On one branch, of two commits one is the other's ancestor.
	sort.SliceStable(out, func(i, j int) bool { return r.isAncestor(ctx, out[j].SHA, out[i].SHA) })
	return out, nil
}

// IsAncestor reports whether a is b or one of its ancestors.
func (r *Repo) IsAncestor(ctx context.Context, a, b string) bool { return r.isAncestor(ctx, a, b) }

// isAncestor reports whether a is b or one of its ancestors.
func (r *Repo) isAncestor(ctx context.Context, a, b string) bool {
	_, err := r.git.run(ctx, "", "merge-base", "--is-ancestor", a, b)
	return err == nil
}

// revertPlan gathers each file of the commits (only those in only, when
// it is not empty) with its entries (newest first), HEAD's version and
// the tree the drop would give (the oldest commit's parent's).
func (r reverter) revertPlan(ctx context.Context, ordered []*Result, only []string) ([]*revertFile, error) {
	keep := map[string]bool{}
	for _, p := range only {
		keep[p] = true
	}
	byPath := map[string]*revertFile{}
	var paths []string
	for _, c := range ordered {
		for _, e := range c.Entries {
			if len(keep) > 0 && !keep[e.Path] {
				continue
			}
			f := byPath[e.Path]
			if f == nil {
				f = &revertFile{path: e.Path}
				byPath[e.Path] = f
				paths = append(paths, e.Path)
			}
			f.entries = append(f.entries, e)
		}
	}
	sort.Strings(paths)
	head, err := r.treeEntries(ctx, r.Head, paths)
	if err != nil {
		return nil, err
	}
	files := make([]*revertFile, len(paths))
	wt := worktree.New(r.Top)
	for i, p := range paths {
		f := byPath[p]
		f.head = head[p]
		// Dropping: the file as the oldest commit touching it had it
		// before (the commits are consecutive, so nothing else changed it).
		last := f.entries[len(f.entries)-1]
		f.tree = treeEntry{mode: last.BaseMode, oid: last.Base}
		// Read without following a link anywhere on the path: a directory a
		// command replaced with a link is refused, not read through.
		disk, _, err := wt.Read(p)
		f.disk, f.diskErr = version{disk.Text, disk.Present}, err
		files[i] = f
	}
	return files, nil
}

// blobText returns a blob's text: in the worktree's form (filters
// applied) with worktree, else as stored; absent for "".
func (r reverter) blobText(ctx context.Context, path, oid string, worktree bool) (version, error) {
	if oid == "" {
		return version{}, nil
	}
	args := []string{"cat-file", "blob", oid}
	if worktree {
		args = []string{"cat-file", "--filters", "--path=" + path, oid}
	}
	out, err := r.git.run(ctx, "", args...)
	return version{out, true}, err
}

// unapply takes entries' changes (newest first) out of cur by three-way
// merges; reason says why it cannot, "" when it could. worktree selects
// the texts' form.
func (r reverter) unapply(ctx context.Context, path string, cur version, entries []Entry, worktree bool, whose string) (version, bool, string, error) {
	changed := false
	for _, e := range entries {
		blob, err := r.blobText(ctx, path, e.Blob, worktree)
		if err != nil {
			return cur, false, "", err
		}
		base, err := r.blobText(ctx, path, e.Base, worktree)
		if err != nil {
			return cur, false, "", err
		}
		switch {
		case !blob.present: // the agent deleted it
			if cur.present {
				return cur, false, path + " was deleted by the agent and created again since; remove it yourself if you want the agent's change gone", nil
			}
			cur = base
		case !base.present: // the agent created it
			if !cur.present || cur.text != blob.text {
				return cur, false, path + " was created by the agent and changed since; remove it yourself if you want it gone", nil
			}
			cur = version{}
		case !cur.present:
			return cur, false, path + " was deleted since the commit", nil
		default:
			if cur.text != blob.text {
				changed = true
			}
			merged, clean, err := r.merge3(ctx, cur.text, blob.text, base.text)
			if err != nil {
				return cur, false, "", err
			}
			if !clean {
				return cur, false, whose + path + " since the commit overlap the agent's, so they cannot be kept apart", nil
			}
			cur = version{merged, true}
		}
	}
	return cur, changed, "", nil
}

// revertTree works out the revert commit's version of f: HEAD's, less the
// agent's hunks. It sets f.tree (the blob is written).
func (r reverter) revertTree(ctx context.Context, f *revertFile) string {
	cur, err := r.blobText(ctx, f.path, f.head.oid, false)
	if err != nil {
		return err.Error()
	}
	out, _, reason, err := r.unapply(ctx, f.path, cur, f.entries, false, "the later commits' changes to ")
	if err != nil {
		return err.Error()
	}
	if reason != "" {
		return reason
	}
	f.treeText = out
	if !out.present {
		f.tree = treeEntry{}
		return ""
	}
	blob, err := r.git.run(ctx, out.text, "hash-object", "-w", "--no-filters", "--stdin")
	if err != nil {
		return err.Error()
	}
	mode := f.head.mode
	if mode == "" {
		mode = f.entries[len(f.entries)-1].BaseMode
	}
	f.tree = treeEntry{mode: mode, oid: strings.TrimSpace(blob)}
	return ""
}

// revertDisk works out the worktree's version of f: the disk's, less the
// agent's hunks.
func (r reverter) revertDisk(ctx context.Context, f *revertFile) string {
	out, kept, reason, err := r.unapply(ctx, f.path, f.disk, f.entries, true, "your changes to ")
	if err != nil {
		return err.Error()
	}
	if reason != "" {
		return reason
	}
	if kept {
		// kept: the disk differed from what the agent wrote.
		f.kept = true
	}
	f.newDisk = out
	f.writeDisk = out != f.disk
	return ""
}

// restoresOf are the worktree changes of files that change on disk.
func restoresOf(files []*revertFile) []worktree.Change {
	var out []worktree.Change
	for _, f := range files {
		if f.writeDisk {
			out = append(out, f.restore())
		}
	}
	return out
}

// restore is the change that gives f's file its worktree version, from
// the content it was planned from.
func (f *revertFile) restore() worktree.Change {
	mode := fs.FileMode(0o644)
	if f.tree.mode == "100755" {
		mode = 0o755
	}
	return worktree.Change{Rel: f.path, Expect: worktree.Version{Text: f.disk.text, Present: f.disk.present}, New: worktree.Version{Text: f.newDisk.text, Present: f.newDisk.present}, Mode: mode}
}

// revertCommit makes the revert commit of ordered on top of HEAD, with
// files' tree versions, and moves HEAD to it (compare-and-swap).
func (r reverter) revertCommit(ctx context.Context, ordered []*Result, files []*revertFile, message string, planned func(PlannedRevert) error) (string, error) {
	ix, err := r.newIndex(ctx, r.Head)
	if err != nil {
		return "", err
	}
	defer os.Remove(ix.path)
	var entries []Entry
	for _, f := range files {
		entries = append(entries, Entry{Path: f.path, Mode: f.tree.mode, Blob: f.tree.oid})
	}
	if _, err := ix.git.run(ctx, indexInfo(entries, false, r.oidLen), "update-index", "--add", "--remove", "-z", "--index-info"); err != nil {
		return "", err
	}
	tree, err := ix.git.run(ctx, "", "write-tree")
	if err != nil {
		return "", err
	}
	if message == "" {
		var subjects []string
		for _, c := range ordered {
			s, _, _ := strings.Cut(c.Message, "\n")
			subjects = append(subjects, Short(c.SHA)+" "+s)
		}
		message = "loom: undo " + strings.Join(subjects, ", ") + "\n\nTakes the agent's changes of "
		for i, c := range ordered {
			if i > 0 {
				message += ", "
			}
			message += c.SHA
		}
		message += " back, keeping the later changes.\n"
	}
	sha, err := r.git.run(ctx, message, "commit-tree", strings.TrimSpace(tree), "-p", r.Head, "-F", "-")
	if err != nil {
		return "", err
	}
	sha = strings.TrimSpace(sha)
	if planned != nil {
		if err := planned(PlannedRevert{Head: sha, Restores: restoresOf(files)}); err != nil {
			return "", refusal("%v", err)
		}
	}
	subject, _, _ := strings.Cut(message, "\n")
	if _, err := r.git.run(ctx, "", "update-ref", "-m", "commit (loom): "+subject, "HEAD", sha, r.Head); err != nil {
		return "", fmt.Errorf("%w: HEAD moved: %v", ErrUndoRefused, err)
	}
	return sha, nil
}
