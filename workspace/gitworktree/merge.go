package gitworktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"github.com/loom-lsp/loom-lsp/workspace/review"
	"github.com/loom-lsp/loom-lsp/workspace/worktree"
)

// FileMerge is what merging one file of a worktree into the user's tree
// gave.
type FileMerge struct {
	// Path is slash-separated, relative to the repository's top.
	Path string
	// Kind is "create", "edit" or "delete".
	Kind string
	// Added and Removed count the worktree's lines against the base.
	Added, Removed int
	// Diff is the worktree's change as a unified diff (base → worktree).
	Diff string
	// Applied: written into the user's tree (all of it, or the hunks
	// that did not conflict). Conflict says what was left out: hunks
	// overlapping the user's own edits, a file the user changed or
	// removed, a binary file, a refused name.
	Applied  bool
	Conflict string
}

// Merge is the result of bringing a worktree's work back.
type Merge struct {
	Files []FileMerge
	// Applied: the files were written (not a dry run).
	Applied bool
}

// Conflicts reports whether some of the work was left out.
func (m Merge) Conflicts() bool {
	for _, f := range m.Files {
		if f.Conflict != "" {
			return true
		}
	}
	return false
}

// Stat is the diff stat: files, lines added, lines removed.
func (m Merge) Stat() (files, added, removed int) {
	for _, f := range m.Files {
		added += f.Added
		removed += f.Removed
	}
	return len(m.Files), added, removed
}

// MergeBack computes the worktree name's changes against its base and,
// when apply is set, writes them three-way into the user's current tree
// (the repository's top) through w: each file's change is split into
// hunks and applied onto the file as it is now, so the user's edits
// made meanwhile stay; a hunk overlapping them is left out and named.
// Nothing is committed. A clean, complete merge marks the worktree
// merged; otherwise it is kept.
func (m *Manager) MergeBack(ctx context.Context, name string, w *worktree.Writer, apply bool) (Merge, error) {
	mf, err := m.load(name)
	if err != nil {
		return Merge{}, err
	}
	files, err := changedFiles(ctx, mf)
	if err != nil {
		return Merge{}, err
	}
	res := Merge{Applied: apply}
	for _, rel := range files {
		fm, err := m.mergeFile(ctx, mf, rel, w, apply)
		if err != nil {
			return res, err
		}
		res.Files = append(res.Files, fm)
	}
	state := StateKept
	if apply && !res.Conflicts() {
		state = StateMerged
	}
	return res, m.SetState(name, state, "")
}

// version reads a file of the worktree as a writer version.
func readVersion(path string) (worktree.Version, fs.FileMode, error) {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return worktree.Absent, 0, nil
	}
	if err != nil {
		return worktree.Absent, 0, err
	}
	if !st.Mode().IsRegular() {
		return worktree.Absent, 0, fmt.Errorf("%s is not a regular file", path)
	}
	b, err := os.ReadFile(path)
	return worktree.Text(string(b)), st.Mode().Perm(), err
}

// baseVersion reads rel at the worktree's base commit.
func baseVersion(ctx context.Context, mf Manifest, rel string) (worktree.Version, error) {
	ls, err := git(ctx, mf.Path, "ls-tree", "-z", "--full-tree", mf.Base, "--", rel)
	if err != nil || ls == "" {
		return worktree.Absent, err
	}
	text, err := git(ctx, mf.Path, "cat-file", "blob", mf.Base+":"+rel)
	return worktree.Text(text), err
}

// mergeFile merges one file.
func (m *Manager) mergeFile(ctx context.Context, mf Manifest, rel string, w *worktree.Writer, apply bool) (FileMerge, error) {
	fm := FileMerge{Path: rel, Kind: "edit"}
	base, err := baseVersion(ctx, mf, rel)
	if err != nil {
		return fm, err
	}
	theirs, mode, err := readVersion(filepath.Join(mf.Path, filepath.FromSlash(rel)))
	if err != nil {
		fm.Conflict = err.Error()
		return fm, nil
	}
	switch {
	case !base.Present:
		fm.Kind = "create"
	case !theirs.Present:
		fm.Kind = "delete"
	}
	ch := review.Split(rel, base.Text, theirs.Text, !base.Present, 1)
	fm.Diff = ch.File.Diff
	fm.Added, fm.Removed = lineStat(base.Text, theirs.Text)
	if !apply {
		return fm, nil
	}
	userRel, ok := relToFolder(mf, w, rel)
	if !ok {
		fm.Conflict = "outside your folder"
		return fm, nil
	}
	if err := w.Refused(userRel); err != nil {
		fm.Conflict = err.Error()
		return fm, nil
	}
	cur, _, err := w.Read(userRel)
	if err != nil {
		fm.Conflict = err.Error()
		return fm, nil
	}
	next, why := threeWay(ch, base, theirs, cur)
	fm.Conflict = why
	if next == nil {
		return fm, nil
	}
	if err := w.Write(worktree.Change{Rel: userRel, Expect: cur, New: *next, Mode: mode}); err != nil {
		fm.Conflict = err.Error()
		return fm, nil
	}
	fm.Applied = true
	return fm, nil
}

// relToFolder turns rel (from the repository's top) into a path
// relative to the writer's root (the user's folder).
func relToFolder(mf Manifest, w *worktree.Writer, rel string) (string, bool) {
	r, err := filepath.Rel(w.Root(), filepath.Join(mf.Repo, filepath.FromSlash(rel)))
	if err != nil || !filepath.IsLocal(r) {
		return "", false
	}
	return filepath.ToSlash(r), true
}

// threeWay is what the user's file becomes: nil when nothing is to be
// written, with why (a conflict) when something was left out.
func threeWay(ch *review.Change, base, theirs, cur worktree.Version) (*worktree.Version, string) {
	switch {
	case cur == theirs:
		return nil, "" // the user has it already
	case cur == base:
		return &theirs, "" // the user did not touch it: the worktree's version
	case !base.Present:
		return nil, "you created this file meanwhile"
	case !cur.Present:
		return nil, "you removed this file meanwhile"
	case !theirs.Present:
		return nil, "you changed this file meanwhile; the worktree removes it"
	case isBinary(base.Text) || isBinary(theirs.Text) || isBinary(cur.Text):
		return nil, "a binary file you changed meanwhile"
	}
	res, err := ch.Apply(cur.Text, ch.HunkIDs())
	if err != nil {
		return nil, err.Error()
	}
	var why string
	if len(res.Conflicts) > 0 {
		why = fmt.Sprintf("%d of %d hunks overlap your edits and were left out", len(res.Conflicts), len(ch.File.Hunks))
	}
	if len(res.Applied) == 0 {
		return nil, why
	}
	v := worktree.Text(res.Text)
	return &v, why
}

func isBinary(s string) bool { return strings.IndexByte(s, 0) >= 0 }

// lineStat counts the lines added and removed from old to new.
func lineStat(old, new string) (added, removed int) {
	for _, e := range udiff.Lines(old, new) {
		removed += strings.Count(old[e.Start:e.End], "\n")
		if e.End > e.Start && !strings.HasSuffix(old[e.Start:e.End], "\n") {
			removed++
		}
		added += strings.Count(e.New, "\n")
		if e.New != "" && !strings.HasSuffix(e.New, "\n") {
			added++
		}
	}
	return added, removed
}
