package gitworktree

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Info is one worktree as List sees it.
type Info struct {
	Manifest
	// OwnerAlive: the owner process still runs.
	OwnerAlive bool
	// Size is its size on disk in bytes, build outputs included.
	Size int64
	// Changed are the files it changed against Base (slash-separated),
	// nil when it holds nothing unmerged; Err says why they could not be
	// read (then it counts as holding work).
	Changed []string
	Err     error
	// Unknown: a directory under Dir with no manifest (not made by
	// loom, or its manifest lost): listed, never removed by Recover.
	Unknown bool
}

// Orphan reports whether nobody owns the worktree any more: its owner
// process is gone while it was being made or worked in.
func (i Info) Orphan() bool {
	return !i.OwnerAlive && (i.State == StateActive || i.State == StateCreating)
}

// Unmerged reports whether it holds work the user's tree does not have.
func (i Info) Unmerged() bool { return len(i.Changed) > 0 || i.Err != nil }

// List returns the worktrees under Dir, by name.
func (m *Manager) List(ctx context.Context) ([]Info, error) {
	entries, err := os.ReadDir(m.Dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Info
	seen := map[string]bool{}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || e.IsDir() {
			continue
		}
		mf, err := m.load(name)
		if err != nil {
			out = append(out, Info{Manifest: Manifest{Name: name, Path: filepath.Join(m.Dir, name)}, Err: err, Unknown: true})
			seen[name] = true
			continue
		}
		seen[name] = true
		out = append(out, m.info(ctx, mf))
	}
	for _, e := range entries {
		if e.IsDir() && !seen[e.Name()] {
			p := filepath.Join(m.Dir, e.Name())
			out = append(out, Info{Manifest: Manifest{Name: e.Name(), Path: p}, Unknown: true, Size: diskSize(p)})
		}
	}
	slices.SortFunc(out, func(a, b Info) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// info reads what List says of mf.
func (m *Manager) info(ctx context.Context, mf Manifest) Info {
	i := Info{Manifest: mf, OwnerAlive: ownerAlive(mf), Size: diskSize(mf.Path)}
	if !exists(mf.Path) {
		return i // never made, or already removed: nothing in it
	}
	if mf.State != StateMerged {
		i.Changed, i.Err = changedFiles(ctx, mf)
	}
	return i
}

// diskSize is the size of the files under p, links not followed.
func diskSize(p string) int64 {
	var n int64
	filepath.WalkDir(p, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if st, err := d.Info(); err == nil && st.Mode().IsRegular() {
			n += st.Size()
		}
		return nil
	})
	return n
}

// changedFiles are the files mf's worktree holds that differ from its
// base commit: changed, deleted or new (untracked and not ignored),
// committed in the worktree or not.
func changedFiles(ctx context.Context, mf Manifest) ([]string, error) {
	diff, err := git(ctx, mf.Path, "diff", "--no-ext-diff", "--no-textconv", "--no-renames", "--name-only", "-z", mf.Base, "--")
	if err != nil {
		return nil, err
	}
	untracked, err := git(ctx, mf.Path, "ls-files", "-z", "--others", "--exclude-standard")
	if err != nil {
		return nil, err
	}
	var files []string
	for _, f := range strings.Split(diff+untracked, "\x00") {
		if f != "" && !slices.Contains(files, f) {
			files = append(files, f)
		}
	}
	slices.Sort(files)
	return files, nil
}

// Recovered is what Recover did with one worktree.
type Recovered struct {
	Info
	// Removed: it held nothing unmerged and is gone; else it is kept
	// (its state is then StateKept) and Err, if any, says why.
	Removed bool
	Err     error
}

// Recover finds the orphans (owner gone) and the worktrees left
// "creating": those holding nothing unmerged are removed, the others
// kept (state kept) and returned too, so that the caller names them.
func (m *Manager) Recover(ctx context.Context) ([]Recovered, error) {
	all, err := m.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []Recovered
	for _, i := range all {
		if i.Unknown || !i.Orphan() {
			continue
		}
		r := Recovered{Info: i}
		if i.Unmerged() {
			r.Err = m.SetState(i.Name, StateKept, "")
			r.State = StateKept
		} else {
			r.Err = m.drop(ctx, i.Manifest)
			r.Removed = r.Err == nil
		}
		out = append(out, r)
	}
	return out, nil
}

// Clean removes the worktrees nobody needs: merged ones, and those
// whose owner is gone holding nothing unmerged. It returns the removed
// ones, and the errors of those it could not remove.
func (m *Manager) Clean(ctx context.Context) ([]Info, error) {
	all, err := m.List(ctx)
	if err != nil {
		return nil, err
	}
	var removed []Info
	var errs []error
	for _, i := range all {
		if i.Unknown || i.OwnerAlive && i.State != StateMerged || i.Unmerged() {
			continue
		}
		if err := m.drop(ctx, i.Manifest); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", i.Name, err))
			continue
		}
		removed = append(removed, i)
	}
	if len(errs) > 0 {
		return removed, fmt.Errorf("worktrees not removed: %v", errs)
	}
	return removed, nil
}

// OverBudget returns the worktrees' total size and whether it passes
// the budget.
func (m *Manager) OverBudget(all []Info) (int64, bool) {
	var n int64
	for _, i := range all {
		n += i.Size
	}
	return n, m.Budget > 0 && n > m.Budget
}
