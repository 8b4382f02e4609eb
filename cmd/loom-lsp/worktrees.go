package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/workspace/gitworktree"
)

const worktreesUsage = `Usage: loom-lsp worktrees [flags]             list loom's worktrees
       loom-lsp worktrees clean [flags]       remove the merged and abandoned ones
       loom-lsp worktrees merge NAME [flags]  merge one's changes into your tree
       loom-lsp worktrees remove NAME         remove one, with its changes

loom's worktrees are the git worktrees conversations work in (exec
--worktree), under $XDG_STATE_HOME/loom/worktrees. Each is listed with
its owner (your folder, and whether its loom process still runs), its
state (active, kept, merged), its size on disk (build outputs included)
and the files it changed. Listing first cleans the orphans of a killed
loom that hold nothing unmerged, and names the others.

clean removes the merged worktrees and those whose owner is gone and
that hold nothing unmerged; a worktree holding changes is never removed
by clean: merge it, or remove it by name.

merge applies a kept worktree's changes three-way onto your current
tree: your edits made since stay; a hunk that overlaps one is left out
and named (the worktree is then kept). Nothing is committed.

The budget (worktrees.max_size_mb in loom.toml) bounds their total size:
past it, exec --worktree refuses to make another.

Flags:
`

func init() {
	commands["worktrees"] = subcommand{summary: "list, clean and merge the git worktrees conversations work in", run: func(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
		return interruptible(func(ctx context.Context) int { return runWorktrees(ctx, args, stdout, stderr) })
	}}
}

// runWorktrees implements `loom-lsp worktrees`.
func runWorktrees(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCommandLine("worktrees", worktreesUsage)
	jsonOut := c.fs.Bool("json", false, "list as one JSON object a line")
	rest, code, done := c.parse(args, stdout, stderr)
	if done {
		return code
	}
	verb := ""
	if len(rest) > 0 {
		verb, rest = rest[0], rest[1:]
	}
	wantName := verb == "merge" || verb == "remove"
	switch {
	case verb != "" && verb != "clean" && !wantName:
		return c.usageError(stderr, "unknown verb %q: clean, merge NAME or remove NAME", verb)
	case wantName && len(rest) != 1, !wantName && len(rest) != 0:
		return c.usageError(stderr, "unexpected arguments %q", rest)
	}
	budget := config.DefaultWorktrees().MaxSizeMB
	if folder, err := os.Getwd(); err == nil {
		if cfg, _, err := config.Load(config.LoadOptions{Folder: folder}); err == nil {
			budget = cfg.Worktrees.MaxSizeMB
		}
	}
	m, err := worktreeManager(budget)
	if err != nil {
		fmt.Fprintf(stderr, "loom-lsp worktrees: %v\n", err)
		return exitConfig
	}
	report := worktreeReport{stdout: io.Discard, stderr: stderr}
	switch verb {
	case "clean":
		return cleanWorktrees(ctx, m, stdout, stderr)
	case "remove":
		if err := m.Remove(ctx, rest[0]); err != nil {
			fmt.Fprintf(stderr, "loom-lsp worktrees remove: %v\n", err)
			return exitFailed
		}
		fmt.Fprintf(stdout, "removed %s\n", rest[0])
		return exitOK
	case "merge":
		return mergeWorktree(ctx, m, rest[0], report)
	}
	recoverWorktrees(ctx, m, report)
	return listWorktrees(ctx, m, stdout, stderr, *jsonOut)
}

// listWorktrees prints m's worktrees: a table, or JSON lines.
func listWorktrees(ctx context.Context, m *gitworktree.Manager, stdout, stderr io.Writer, jsonOut bool) int {
	all, err := m.List(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "loom-lsp worktrees: %v\n", err)
		return exitFailed
	}
	if jsonOut {
		for _, i := range all {
			b, _ := json.Marshal(map[string]any{"name": i.Name, "path": i.Path, "folder": i.Folder, "conversation": i.Conversation,
				"state": stateWord(i), "owner_running": i.OwnerAlive, "size": i.Size, "changed": i.Changed, "created": i.Created})
			stdout.Write(append(b, '\n'))
		}
		return exitOK
	}
	if len(all) == 0 {
		fmt.Fprintf(stderr, "no worktree in %s\n", m.Dir)
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATE\tOWNER\tSIZE\tCHANGED\tFOLDER")
	for _, i := range all {
		owner := "gone"
		if i.OwnerAlive {
			owner = fmt.Sprintf("running (pid %d)", i.PID)
		}
		changed := fmt.Sprintf("%d files", len(i.Changed))
		if i.Err != nil {
			changed = "? (" + i.Err.Error() + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", i.Name, stateWord(i), owner, humanSize(i.Size), changed, i.Folder)
	}
	tw.Flush()
	total, over := m.OverBudget(all)
	line := fmt.Sprintf("total %s", humanSize(total))
	if m.Budget > 0 {
		line += fmt.Sprintf(" of the %s budget (worktrees.max_size_mb)", humanSize(m.Budget))
	}
	if over {
		line += ": over it — 'loom-lsp worktrees clean' removes the merged and abandoned ones"
	}
	fmt.Fprintln(stdout, line)
	return exitOK
}

// stateWord is a worktree's state as listed.
func stateWord(i gitworktree.Info) string {
	switch {
	case i.Unknown:
		return "unknown (no manifest)"
	case i.Orphan():
		return "orphan"
	}
	return i.State
}

// humanSize is n bytes in KB, MB or GB.
func humanSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KB", (n+1023)/1024)
}

// cleanWorktrees removes what nobody needs and says what.
func cleanWorktrees(ctx context.Context, m *gitworktree.Manager, stdout, stderr io.Writer) int {
	removed, err := m.Clean(ctx)
	for _, i := range removed {
		fmt.Fprintf(stdout, "removed %s (%s, %s)\n", i.Name, stateWord(i), humanSize(i.Size))
	}
	if err != nil {
		fmt.Fprintf(stderr, "loom-lsp worktrees clean: %v\n", err)
		return exitFailed
	}
	if len(removed) == 0 {
		fmt.Fprintln(stderr, "nothing to clean")
	}
	return exitOK
}

// mergeWorktree merges a worktree's changes into its folder.
func mergeWorktree(ctx context.Context, m *gitworktree.Manager, name string, r worktreeReport) int {
	all, err := m.List(ctx)
	if err != nil {
		fmt.Fprintf(r.stderr, "loom-lsp worktrees merge: %v\n", err)
		return exitFailed
	}
	for _, i := range all {
		if i.Name != name || i.Unknown {
			continue
		}
		if i.OwnerAlive && i.State == gitworktree.StateActive {
			fmt.Fprintf(r.stderr, "loom-lsp worktrees merge: %s is in use by loom process %d\n", name, i.PID)
			return exitFailed
		}
		wt := &gitworktree.Worktree{Manifest: i.Manifest, Dir: i.Path}
		finishWorktree(ctx, m, wt, worktreeMergeApply, exitOK, r)
		return exitOK
	}
	fmt.Fprintf(r.stderr, "loom-lsp worktrees merge: no worktree %q (see loom-lsp worktrees)\n", name)
	return exitFailed
}
