package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/loom-lsp/loom-lsp/workspace/changes"
	"github.com/loom-lsp/loom-lsp/workspace/gitcommit"
	"github.com/loom-lsp/loom-lsp/workspace/worktree"
)

// maxCommandDiff bounds the diff shown for one command change.
const maxCommandDiff = 256 << 10

// CommandChange is a file a command the agent ran changed: reported,
// not committed, until the user keeps or discards it.
type CommandChange = changes.CommandChange

// commandRun is what one bash call changed, as its window saw it.
type commandRun struct {
	command string
	// paths changed in the window; claimed those of them the editor
	// reported changed meanwhile (the user's).
	paths, claimed []string
	scanned        bool
	// before are the paths' texts just before the command, where known
	// (preimage.go); a path not in it was as HEAD has it.
	before map[string]preImage
}

// commandLine returns a bash call's command, for people.
func commandLine(arguments string) string {
	var args struct {
		Command string `json:"command"`
	}
	_ = json.Unmarshal([]byte(arguments), &args)
	return args.Command
}

// commandAttribution is the folder's account of what the agent's
// commands change: the files a command changed (its window, cmdwindow.go,
// saw them while it ran), whose they are (the editor's, when the user
// changed them meanwhile), what the model reads of them and what the hook
// reports (reportCommands). Any goroutine.
type commandAttribution struct {
	dir     string
	windows *commandWindows
	overlay *Overlay
}

// commands is the folder's command attribution.
func (f *Folder) commands() commandAttribution {
	return commandAttribution{dir: f.dir, windows: f.cmds, overlay: f.host.overlay}
}

// close closes a command's window and sorts its paths into the
// command's and the user's (those the editor reported meanwhile).
func (a commandAttribution) close(win *commandWindow, mark uint64, command string, before map[string]preImage) *commandRun {
	paths, scanned := a.windows.closeWindow(win, a.dir)
	run := &commandRun{command: command, scanned: scanned, before: map[string]preImage{}}
	for _, p := range paths {
		if a.overlay.EditorChangedSince(p, mark) {
			run.claimed = append(run.claimed, p)
		} else {
			run.paths = append(run.paths, p)
			if pre, ok := before[p]; ok {
				run.before[p] = pre
			}
		}
	}
	sort.Strings(run.paths)
	sort.Strings(run.claimed)
	return run
}

// resultNote is what the model reads at the end of a command's result:
// the files it changed (git-ignored ones left out), which loom does not
// commit; "" when it changed none.
func (a commandAttribution) resultNote(ctx context.Context, run *commandRun) string {
	var rels []string
	for _, p := range run.paths {
		rel, err := filepath.Rel(a.dir, p)
		if err != nil || strings.HasPrefix(rel, "..") || rel == ".git" || strings.HasPrefix(rel, ".git"+string(filepath.Separator)) {
			continue
		}
		rels = append(rels, filepath.ToSlash(rel))
	}
	if len(rels) == 0 {
		return ""
	}
	ignored := gitcommit.IgnoredIn(ctx, a.dir, rels)
	kept := rels[:0]
	for _, rel := range rels {
		if !ignored[rel] {
			kept = append(kept, rel)
		}
	}
	rels = kept
	if len(rels) == 0 {
		return ""
	}
	if len(rels) > 20 {
		rels = append(rels[:20], fmt.Sprintf("and %d more", len(rels)-20))
	}
	return "\n[loom] this command changed " + strings.Join(rels, ", ") + "; loom does not commit what commands change: the user decides whether to keep or discard it."
}

// reportCommands works out the batch's command changes (on the hook's
// worker): each file once, with the first command that changed it, left
// out the edit tools' files, git-ignored ones, those inside .git or a
// nested repository, and those now as HEAD has them. yours are the files
// the editor claimed.
func reportCommands(ctx context.Context, repo *gitcommit.Repo, job hookJob, turn uint64) (reported []CommandChange, yours []string) {
	cands, yours := commandCandidates(repo, job, turn)
	if len(cands) == 0 {
		return nil, yours
	}
	rels := make([]string, len(cands))
	for i, c := range cands {
		rels[i] = c.Rel
	}
	ignored := repo.Ignored(ctx, rels)
	heads, err := repo.HeadTexts(ctx, rels)
	if err != nil {
		return nil, yours
	}
	limit := job.Cfg.Hooks.FileLimit()
	for _, c := range cands {
		if ignored[c.Rel] || repo.Nested(c.Rel) != "" {
			continue
		}
		head, inHead := heads[c.Rel]
		if c.Before == nil {
			// Not seen changed before the command (or too large to keep):
			// as HEAD has it.
			c.Before = &worktree.Version{Text: head, Present: inHead}
		}
		if c, ok := commandChangeNow(c, inHead, limit); ok {
			reported = append(reported, c)
		}
	}
	return reported, yours
}

// commandCandidates are the files the batch's commands changed, each
// once with the first command that changed it, and its text just before
// it when known; out of the edit tools' files and .git. yours are the
// files the editor claimed.
func commandCandidates(repo *gitcommit.Repo, job hookJob, turn uint64) (cands []CommandChange, yours []string) {
	seen := map[string]bool{}
	for p := range job.Batch {
		seen[p] = true
	}
	for _, run := range job.cmds {
		for _, p := range run.claimed {
			if rel, ok := repo.Rel(p); ok && !seen[p] {
				yours = append(yours, rel)
				seen[p] = true
			}
		}
		for _, p := range run.paths {
			if seen[p] {
				continue
			}
			seen[p] = true
			rel, ok := repo.Rel(p)
			if !ok || rel == ".git" || strings.HasPrefix(rel, ".git/") || strings.Contains(rel, "/.git/") {
				continue
			}
			c := CommandChange{Path: p, Rel: rel, Command: run.command, Turn: turn}
			if pre, ok := run.before[p]; ok {
				v := pre.version()
				c.Before = &v
			}
			cands = append(cands, c)
		}
	}
	return cands, yours
}

// commandChangeNow is c as its file is now (inHead: HEAD has the file;
// limit: the largest file read), ok false when there is nothing to
// report: the file is as it was before the command, made and removed
// again, or no regular file.
func commandChangeNow(c CommandChange, inHead bool, limit int64) (CommandChange, bool) {
	from := *c.Before
	st, err := os.Lstat(c.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if !from.Present {
			return c, false // made and removed again
		}
		c.Deleted, c.Hash = true, "-"
		c.After = &worktree.Version{}
		c.Diff = unifiedDiff(c.Rel, from.Text, "", true)
	case err != nil || !st.Mode().IsRegular():
		return c, false // a directory, a link: left to git status
	default:
		c.Size, c.Created = st.Size(), !inHead
		if c.Size > limit {
			c.Hash = "size:" + fmt.Sprint(c.Size) + ":" + st.ModTime().String()
			c.Binary = true
			break
		}
		b, err := os.ReadFile(c.Path)
		if err != nil {
			return c, false
		}
		if from.Present && string(b) == from.Text {
			return c, false // as it was before the command
		}
		c.Hash = changes.ContentHash(b)
		if len(b) <= maxPreImage {
			c.After = &worktree.Version{Text: string(b), Present: true}
		}
		if bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 || isBinary(from.Text) {
			c.Binary = true
			break
		}
		c.Diff = unifiedDiff(c.Rel, from.Text, string(b), from.Present)
	}
	if len(c.Diff) > maxCommandDiff {
		c.Diff = c.Diff[:maxCommandDiff] + "\n… (diff cut at " + gitcommit.Size(maxCommandDiff) + ")\n"
	}
	return c, true
}

// unifiedDiff is the diff of a file from its text before the command
// (absent when !inHead) to now.
func unifiedDiff(rel, head, now string, inHead bool) string {
	from := "a/" + rel
	if !inHead {
		from = "/dev/null"
	}
	return udiff.Unified(from, "b/"+rel, head, now)
}

// dirty lists the folder's files git reports changed or untracked,
// absolute; none when it is no git repository.
func (a commandAttribution) dirty(ctx context.Context, scrub []string) []string {
	repo, err := gitcommit.Open(ctx, a.dir, scrub...)
	if err != nil {
		return nil
	}
	rels, err := repo.Dirty(ctx)
	if err != nil {
		return nil
	}
	return absPaths(repo.Top, rels)
}
