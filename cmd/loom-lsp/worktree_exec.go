package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/jsonrpc/headless"
	"github.com/loom-lsp/loom-lsp/workspace/gitworktree"
	"github.com/loom-lsp/loom-lsp/workspace/journal"
	"github.com/loom-lsp/loom-lsp/workspace/worktree"
)

// Values of --worktree-merge.
const (
	worktreeMergeApply = "apply"
	worktreeMergeKeep  = "keep"
)

// worktreeManager is the manager of loom's worktrees, under the state
// directory, with a budget of budgetMB megabytes (0: none).
func worktreeManager(budgetMB int) (*gitworktree.Manager, error) {
	dir, err := journal.DefaultStateDir()
	if err != nil {
		return nil, err
	}
	return &gitworktree.Manager{Dir: filepath.Join(dir, config.WorktreesDir), Budget: int64(budgetMB) << 20}, nil
}

// worktreeReport writes what happened to worktrees: JSONL events on
// stdout, or lines on stderr.
type worktreeReport struct {
	stdout, stderr io.Writer
	jsonl          bool
}

// recovered reports the orphans Recover found.
func (r worktreeReport) recovered(all []gitworktree.Recovered) {
	for _, o := range all {
		w := headless.WorktreeInfo{Name: o.Name, Path: o.Path, Folder: o.Folder, Base: o.Base, State: o.State, Changed: o.Changed, Removed: o.Removed}
		if r.jsonl {
			r.stdout.Write(headless.WorktreeRecovered(w))
		}
		switch {
		case o.Err != nil:
			fmt.Fprintf(r.stderr, "loom-lsp: orphan worktree %s (of %s) not cleaned: %v\n", o.Path, o.Folder, o.Err)
		case o.Removed:
			fmt.Fprintf(r.stderr, "loom-lsp: removed orphan worktree %s (of %s; its loom process was gone, it held nothing unmerged)\n", o.Path, o.Folder)
		default:
			fmt.Fprintf(r.stderr, "loom-lsp: kept orphan worktree %s (of %s; its loom process is gone): it holds changes to %s — merge with 'loom-lsp worktrees merge %s', or remove with 'loom-lsp worktrees remove %s'\n",
				o.Path, o.Folder, strings.Join(o.Changed, ", "), o.Name, o.Name)
		}
	}
}

// recoverWorktrees finds and cleans the orphans of m, and says so.
func recoverWorktrees(ctx context.Context, m *gitworktree.Manager, r worktreeReport) {
	all, err := m.Recover(ctx)
	if err != nil {
		fmt.Fprintf(r.stderr, "loom-lsp: looking for orphan worktrees: %v\n", err)
	}
	r.recovered(all)
}

// startWorktree makes the worktree exec --worktree runs the
// conversation in, within m's budget (cleaning what nobody needs
// first), and reports it.
func startWorktree(ctx context.Context, m *gitworktree.Manager, folder string, r worktreeReport) (*gitworktree.Worktree, error) {
	all, err := m.List(ctx)
	if err != nil {
		return nil, err
	}
	if _, over := m.OverBudget(all); over {
		m.Clean(ctx)
		all, _ = m.List(ctx)
		if size, over := m.OverBudget(all); over {
			return nil, fmt.Errorf("loom's worktrees take %d MB, over worktrees.max_size_mb = %d: see 'loom-lsp worktrees', merge or remove what you need no more ('loom-lsp worktrees clean' removes the merged ones), or raise the budget",
				size>>20, m.Budget>>20)
		}
	}
	wt, err := m.Create(ctx, folder, "")
	if err != nil {
		return nil, err
	}
	w := headless.WorktreeInfo{Name: wt.Name, Path: wt.Path, Folder: wt.Folder, Base: wt.Base, State: wt.State, Included: wt.Included}
	if r.jsonl {
		r.stdout.Write(headless.WorktreeCreated(w))
	}
	fmt.Fprintf(r.stderr, "loom-lsp: working in worktree %s (from %.12s); your tree is written only by the merge at the end\n", wt.Path, wt.Base)
	return wt, nil
}

// finishWorktree brings the worktree's work back after the turn (code:
// the turn's exit code): merged three-way into the user's tree (apply),
// or only reported (keep, or an interrupted turn). A worktree with
// nothing left is removed; one with work left (kept, conflicts) stays.
func finishWorktree(ctx context.Context, m *gitworktree.Manager, wt *gitworktree.Worktree, merge string, code int, r worktreeReport) int {
	apply := merge == worktreeMergeApply && code != exitInterrupted
	if ctx.Err() != nil {
		ctx = context.WithoutCancel(ctx)
	}
	res, err := m.MergeBack(ctx, wt.Name, worktree.New(wt.Folder), apply)
	if err != nil {
		fmt.Fprintf(r.stderr, "loom-lsp: worktree %s kept: its changes could not be read: %v\n", wt.Path, err)
		m.SetState(wt.Name, gitworktree.StateKept, "")
		return code
	}
	w := headless.WorktreeInfo{Name: wt.Name, Path: wt.Path, Folder: wt.Folder, Base: wt.Base, State: gitworktree.StateKept, Applied: apply}
	for _, f := range res.Files {
		w.Files = append(w.Files, headless.WorktreeFile{Path: f.Path, Kind: f.Kind, LinesAdded: f.Added, LinesRemoved: f.Removed, Diff: f.Diff, Applied: f.Applied, Conflict: f.Conflict})
	}
	_, w.LinesAdded, w.LinesRemoved = res.Stat()
	if len(res.Files) == 0 || apply && !res.Conflicts() {
		w.State = gitworktree.StateMerged
		if err := m.Remove(ctx, wt.Name); err != nil {
			fmt.Fprintf(r.stderr, "loom-lsp: removing worktree %s: %v\n", wt.Path, err)
		} else {
			w.Removed = true
		}
	}
	if r.jsonl {
		r.stdout.Write(headless.WorktreeMerged(w))
	}
	r.mergeText(w)
	return code
}

// mergeText says on stderr what the merge did.
func (r worktreeReport) mergeText(w headless.WorktreeInfo) {
	if len(w.Files) == 0 {
		fmt.Fprintf(r.stderr, "loom-lsp: the worktree changed nothing; removed\n")
		return
	}
	verb := "merged into your tree (not committed)"
	if !w.Applied {
		verb = "not merged (--worktree-merge keep)"
	}
	fmt.Fprintf(r.stderr, "loom-lsp: worktree: %d files changed, +%d -%d, %s:\n", len(w.Files), w.LinesAdded, w.LinesRemoved, verb)
	for _, f := range w.Files {
		line := fmt.Sprintf("  %s %s (+%d -%d)", f.Kind, f.Path, f.LinesAdded, f.LinesRemoved)
		if f.Conflict != "" {
			line += ": " + f.Conflict
		}
		fmt.Fprintln(r.stderr, line)
	}
	if !w.Removed {
		fmt.Fprintf(r.stderr, "loom-lsp: worktree kept at %s: 'loom-lsp worktrees merge %s' merges it, 'loom-lsp worktrees remove %s' drops it\n", w.Path, w.Name, w.Name)
	}
}

// recoverWorktreesLogged cleans, on a daemon's start (serve, acp), the
// orphan worktrees a killed loom left in stateDir ("": the default),
// in the background, and logs each: removed, or kept with its changes
// (loom-lsp worktrees names them too).
func recoverWorktreesLogged(ctx context.Context, logger *slog.Logger, stateDir string) {
	if stateDir == "" {
		d, err := journal.DefaultStateDir()
		if err != nil {
			return
		}
		stateDir = d
	}
	m := &gitworktree.Manager{Dir: filepath.Join(stateDir, config.WorktreesDir)}
	if _, err := os.Stat(m.Dir); err != nil {
		return // no worktree was ever made: nothing to look at
	}
	go func() {
		all, err := m.Recover(ctx)
		if err != nil {
			logger.Warn("looking for orphan worktrees", "err", err)
		}
		for _, o := range all {
			switch {
			case o.Err != nil:
				logger.Warn("orphan worktree not cleaned", "path", o.Path, "folder", o.Folder, "err", o.Err)
			case o.Removed:
				logger.Info("removed orphan worktree (its loom process was gone, it held nothing unmerged)", "path", o.Path, "folder", o.Folder)
			default:
				logger.Warn("kept orphan worktree holding changes: loom-lsp worktrees merge or remove it", "name", o.Name, "path", o.Path, "folder", o.Folder, "changed", o.Changed)
			}
		}
	}()
}
