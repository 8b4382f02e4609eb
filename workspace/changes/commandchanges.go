package changes

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/workspace/gitcommit"
	"github.com/loom-lsp/loom-lsp/workspace/worktree"
)

// Commands' changes are never auto-committed: only the bytes loom's edit
// tools wrote are (that is the exact-attribution promise). The files a
// command changed (cmdwindow.go tells which) are reported, each with its
// diff against the file just before the command (preimage.go), and kept
// in the session's list until the user decides: keep (KeepCommandChanges,
// loom.commit {paths}: commit them) or discard (DiscardCommandChanges,
// loom.discard {paths}: the file as it was before the command, with the
// user's edits since merged in).

// CommandChange is a file a command the agent ran changed: reported,
// not committed, until the user keeps or discards it.
type CommandChange struct {
	// Path is the file's absolute path; Rel is relative to the
	// repository's root, slash-separated.
	Path string `json:"path"`
	Rel  string `json:"rel"`
	// Command is the command line that changed it, Turn its turn.
	Command string `json:"command"`
	Turn    uint64 `json:"turn"`
	// Created and Deleted tell a file absent from HEAD, or from the disk.
	Created bool `json:"created,omitempty"`
	Deleted bool `json:"deleted,omitempty"`
	// Size is the file's size on disk.
	Size int64 `json:"size"`
	// Diff is the unified diff from the file just before the command
	// (HEAD's version when not known) to the disk's; "" with
	// Binary or when the file is too large to show (Size says).
	Diff   string `json:"diff,omitempty"`
	Binary bool   `json:"binary,omitempty"`
	// Hash is the content's hash when reported ("-" when absent):
	// discard refuses a file that changed since. Before is the file just
	// before the command ran, nil when not known (too large); After its
	// content when reported, nil when not kept (binary or too large).
	// Neither is sent.
	Hash   string            `json:"-"`
	Before *worktree.Version `json:"-"`
	After  *worktree.Version `json:"-"`
	// Held tells a protected name the command created (a .git, a
	// .loom.toml), which loom moved out of the folder: it has no effect
	// until kept (moved back), and discarding deletes it. Stash is where
	// it is held ("" once deleted); not sent.
	Held  bool   `json:"held,omitempty"`
	Stash string `json:"-"`
}

// ContentHash names a file's content, for discard's guard.
func ContentHash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// currentHash is the hash a change would have now.
func currentHash(c CommandChange, limit int64) string {
	st, err := os.Lstat(c.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return "-"
	}
	if err != nil || !st.Mode().IsRegular() {
		return "?"
	}
	if st.Size() > limit {
		return "size:" + fmt.Sprint(st.Size()) + ":" + st.ModTime().String()
	}
	b, err := os.ReadFile(c.Path)
	if err != nil {
		return "?"
	}
	return ContentHash(b)
}

// diskHash is currentHash's hash of disk (read through the writer); ""
// for a file over limit, whose hash is its size and time.
func diskHash(disk worktree.Version, limit int64) string {
	switch {
	case !disk.Present:
		return "-"
	case int64(len(disk.Text)) > limit:
		return ""
	}
	return ContentHash([]byte(disk.Text))
}

// commandNotes says the command changes and the user's files, for
// people, with how to keep and discard them in this front end ("": the
// LSP commands). (The model read them in the command's result.)
func commandNotes(changes []CommandChange, yours []string, keep, discard string) (notes []string) {
	if keep == "" {
		keep = "loom.commit with their paths"
	}
	if discard == "" {
		discard = "loom.discard with their paths"
	}
	byCmd := map[string][]string{}
	var cmds []string
	for _, c := range changes {
		if _, ok := byCmd[c.Command]; !ok {
			cmds = append(cmds, c.Command)
		}
		byCmd[c.Command] = append(byCmd[c.Command], c.Rel)
	}
	for _, cmd := range cmds {
		files := strings.Join(byCmd[cmd], ", ")
		notes = append(notes, fmt.Sprintf("changed by `%s` — not committed: %s; keep them (commit: %s) or discard them (the files as they were before the command, your edits kept: %s)", CutRunes(cmd, 80), files, keep, discard))
	}
	if len(yours) > 0 {
		notes = append(notes, "changed while the commands ran but also changed in your editor meanwhile, so left to you, not reported as the commands': "+strings.Join(yours, ", "))
	}
	return notes
}

// CommandChanges returns the commands' changes reported and not yet kept
// or discarded, oldest first. The review list builds on it.
func (t *Tree) CommandChanges(ctx context.Context) ([]CommandChange, error) {
	var out []CommandChange
	err := t.conv.Read(ctx, func(View) { out = append(out, t.commandChanges...) })
	return out, err
}

// takeChanges returns the reported changes of paths (absolute, or
// relative to the folder), or an error naming a path that is not one.
func (t *Tree) takeChanges(ctx context.Context, paths []string) ([]CommandChange, error) {
	if len(paths) == 0 {
		return nil, errors.New("name the files (paths) of the commands' changes to keep or discard")
	}
	all, err := t.CommandChanges(ctx)
	if err != nil {
		return nil, err
	}
	var out []CommandChange
	for _, p := range paths {
		abs := p
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(t.dir, filepath.FromSlash(p))
		}
		abs = filepath.Clean(abs)
		found := false
		for _, c := range all {
			if c.Path == abs {
				out = append(out, c)
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("%s is not a command change loom reported (see loom.commandChanges)", p)
		}
	}
	return out, nil
}

// settle drops kept or discarded changes from the list; on the owner
// goroutine.
func (t *Tree) settle(paths []string) {
	gone := map[string]bool{}
	for _, p := range paths {
		gone[p] = true
	}
	kept := t.commandChanges[:0]
	for _, c := range t.commandChanges {
		if !gone[c.Path] {
			kept = append(kept, c)
		}
	}
	t.commandChanges = kept
}

// addChanges adds newly reported changes, replacing older reports of the
// same files; on the owner goroutine.
func (t *Tree) AddChanges(changes []CommandChange) {
	paths := make([]string, len(changes))
	for i, c := range changes {
		paths[i] = c.Path
	}
	t.settle(paths)
	t.commandChanges = append(t.commandChanges, changes...)
}

// KeepCommandChanges commits the commands' changes to paths (loom.commit
// {paths}): the command's own bytes, as reported, on top of HEAD (a
// binary, deleted or too large file: as it is on disk), as an auto-commit
// loom.undo can take back: it returns what to do (the commit, the
// changes settled, the user told). Its caller holds the worktree lock
// while it applies it.
func (t *Tree) KeepCommandChanges(ctx context.Context, paths []string) (Outcome, error) {
	changes, err := t.takeChanges(ctx, paths)
	if err != nil {
		return Outcome{}, err
	}
	held, changes := splitHeld(changes)
	if len(held) == 0 {
		return t.keepChanges(ctx, changes)
	}
	if len(changes) == 0 {
		return t.keepHeld(held)
	}
	// The others first: when they are refused, the held ones stay held.
	o, err := t.keepChanges(ctx, changes)
	if err != nil {
		return o, err
	}
	h, err := t.keepHeld(held)
	if err != nil {
		return o, fmt.Errorf("%s; but %w", o.Message, err)
	}
	return withHeld(h, o), nil
}

// keepChanges commits changes (KeepCommandChanges).
func (t *Tree) keepChanges(ctx context.Context, changes []CommandChange) (Outcome, error) {
	var job Job
	if err := t.conv.Read(ctx, func(v View) {
		job = Job{Cfg: v.Config, Prompt: v.Prompt, Sandbox: v.Sandbox, AgentFiles: v.AgentFiles}
	}); err != nil {
		return Outcome{}, err
	}
	repo, err := gitcommit.Open(ctx, t.dir, job.Cfg.Model.APIKeyEnv)
	if err != nil {
		return Outcome{}, err
	}
	if err := t.checkRepo(repo); err != nil {
		return Outcome{}, err
	}
	var gc []gitcommit.Change
	var cmds []string
	for _, c := range changes {
		if c.Before != nil && c.After != nil && c.After.Present && !c.Binary {
			// The command's bytes only: the user's edits to the file
			// from before the command (and since) stay uncommitted.
			mode := fs.FileMode(0o644)
			if st, err := os.Lstat(c.Path); err == nil {
				mode = st.Mode().Perm()
			}
			gc = append(gc, gitcommit.Change{Path: c.Path, Steps: []gitcommit.Step{{Old: c.Before.Text, New: c.After.Text}}, Created: !c.Before.Present, Mode: mode})
		} else {
			gc = append(gc, gitcommit.Change{Path: c.Path, FromDisk: true})
		}
		job.AgentFiles = append(job.AgentFiles, c.Path)
		if !slices.Contains(cmds, c.Command) {
			cmds = append(cmds, c.Command)
		}
	}
	trailer := job.Cfg.Hooks.TrailerFor(job.Cfg.Model.Name)
	message := func(files []string) string {
		return commitMessage(files, t.redact("kept the changes of `"+strings.Join(cmds, "`, `")+"`"), trailer)
	}
	plan, err := repo.Prepare(ctx, gc, message)
	if err != nil {
		return Outcome{}, err
	}
	var notes []string
	for _, sk := range plan.Skipped {
		notes = append(notes, fmt.Sprintf("not committed: %s, because %s", sk.Path, sk.Reason))
	}
	if len(plan.Entries) == 0 {
		plan.Discard()
		return Outcome{}, fmt.Errorf("nothing to commit: %s", strings.Join(notes, "; "))
	}
	hd := t.approveHooks(ctx, repo, job)
	if hd.note != "" {
		notes = append(notes, hd.note)
	}
	if hd.notice != "" {
		notes = append(notes, hd.notice)
	}
	commit := &CommitPlan{Repo: repo, Plan: plan, RunHooks: hd.run, Sandbox: job.Sandbox}
	return Outcome{Commit: commit, After: func(d Done) (Outcome, error) {
		if d.Err != nil {
			return Outcome{}, d.Err
		}
		res := d.Committed
		notes = append(notes, IndexNotes(res.Index)...)
		subject, _, _ := strings.Cut(res.Message, "\n")
		msg := joinNotes(fmt.Sprintf("committed %s: %s", gitcommit.Short(res.SHA), subject), notes)
		return Outcome{
			Then: func(v View, _ []fsm.Action) {
				var done []string
				for _, c := range changes {
					done = append(done, c.Path)
				}
				t.settle(done)
				t.Log.Add(res, v.Machine.State().Turn)
			},
			IndexLeft: res.Index.Locked,
			Notes:     []Note{{Kind: Commit, Commit: res, Notes: notes, Text: msg}},
			Message:   msg,
		}, nil
	}}, nil
}

// DiscardCommandChanges takes the commands' changes to paths back: each
// file becomes what it was just before the command ran (a file the
// command created is removed, one it deleted comes back), and edits the
// user made since the report stay, by a three-way merge. It refuses,
// before touching anything, a file where the user's later edits overlap
// the command's, or that cannot be merged (binary, too large) and changed
// since. The discarded content is kept as a git object, and the message
// says how to get it back. It writes the files and returns the rest to
// do (the changes settled, the user told); its caller holds the worktree
// lock. A failure part way returns what was discarded (Message) with the
// error.
func (t *Tree) DiscardCommandChanges(ctx context.Context, paths []string) (Outcome, error) {
	changes, err := t.takeChanges(ctx, paths)
	if err != nil {
		return Outcome{}, err
	}
	held, changes := splitHeld(changes)
	if len(held) == 0 {
		return t.discardChanges(ctx, changes)
	}
	if len(changes) == 0 {
		return t.discardHeld(held)
	}
	// The others first: when they are refused, the held ones stay held.
	o, err := t.discardChanges(ctx, changes)
	if err != nil {
		return o, err
	}
	h, err := t.discardHeld(held)
	if err != nil {
		return o, fmt.Errorf("%s; but %w", o.Message, err)
	}
	return withHeld(h, o), nil
}

// discardChanges restores changes (DiscardCommandChanges).
func (t *Tree) discardChanges(ctx context.Context, changes []CommandChange) (Outcome, error) {
	cfg := t.Config(ctx)
	repo, err := gitcommit.Open(ctx, t.dir, cfg.Model.APIKeyEnv)
	if err != nil {
		return Outcome{}, err
	}
	limit := cfg.Hooks.FileLimit()
	// The writer of the repository: the watcher's echo of its writes is
	// no news for the user.
	w := t.RestoreWriter(repo.Top)
	targets := make([]worktree.Version, len(changes))
	disks := make([]worktree.Version, len(changes))
	var kept []string
	for i, c := range changes {
		if t.ed.Dirty(c.Path) {
			return Outcome{}, fmt.Errorf("%s has unsaved changes in the editor; save or revert them first", c.Rel)
		}
		// Read without following a link anywhere on the path: a
		// directory a command replaced with a link is refused here.
		disk, _, err := w.Read(c.Rel)
		if err != nil {
			return Outcome{}, fmt.Errorf("discarding %s: %w", c.Rel, err)
		}
		target, mergedYours, err := discardTarget(ctx, repo, c, disk, limit)
		if err != nil {
			return Outcome{}, err
		}
		targets[i], disks[i] = target, disk
		if mergedYours {
			kept = append(kept, c.Rel)
		}
	}
	var backups, done []string
	for i, c := range changes {
		backup, err := repo.Backup(ctx, c.Rel)
		if err != nil {
			return Outcome{Message: joinDone(done)}, fmt.Errorf("discarding %s: %w", c.Rel, err)
		}
		if backup != "" {
			backups = append(backups, fmt.Sprintf("git cat-file -p %s > %s", gitcommit.Short(backup), c.Rel))
		}
		if err := w.Write(worktree.Change{Rel: c.Rel, Expect: disks[i], New: targets[i]}); err != nil {
			return Outcome{Message: joinDone(done)}, fmt.Errorf("discarding %s: %w", c.Rel, err)
		}
		done = append(done, c.Path)
	}
	rels := RelPaths(repo.Top, done)
	msg := "discarded the commands' changes to " + strings.Join(rels, ", ") + ": they are as they were before the command"
	if len(kept) > 0 {
		msg += "; your edits made since were kept in " + strings.Join(kept, ", ")
	}
	if len(backups) > 0 {
		msg += "; to get a discarded version back: " + strings.Join(backups, "; ")
	}
	return Outcome{
		Then:    func(View, []fsm.Action) { t.settle(done) },
		Notes:   []Note{{Kind: Info, Text: msg, Visible: true}},
		Message: msg,
	}, nil
}

// discardTarget works out what discarding c leaves in its file: the file
// before the command, with the user's edits since the report merged in
// (mergedYours). A file that cannot be merged must be as reported.
func discardTarget(ctx context.Context, repo *gitcommit.Repo, c CommandChange, disk worktree.Version, limit int64) (target worktree.Version, mergedYours bool, err error) {
	before := worktree.Version{}
	if c.Before != nil {
		before = *c.Before
	}
	if diskHash(disk, limit) == c.Hash || int64(len(disk.Text)) > limit && currentHash(c, limit) == c.Hash {
		return before, false, nil
	}
	refuse := fmt.Errorf("%s changed since the command's change was reported, in a way loom cannot keep apart from the command's, so it is left as it is; restore it yourself (git restore %s) if you mean to", c.Rel, c.Rel)
	if c.After == nil || !c.After.Present || !before.Present || c.Binary {
		return worktree.Version{}, false, refuse
	}
	if !disk.Present || int64(len(disk.Text)) > limit || isBinary(disk.Text) {
		return worktree.Version{}, false, refuse
	}
	merged, clean, err := repo.Merge3(ctx, disk.Text, c.After.Text, before.Text)
	if err != nil {
		return worktree.Version{}, false, err
	}
	if !clean {
		return worktree.Version{}, false, fmt.Errorf("%s changed since the command's change was reported, on the lines the command changed, so it is left as it is; take the command's lines out yourself", c.Rel)
	}
	return worktree.Version{Text: merged, Present: true}, true, nil
}

func joinDone(done []string) string {
	if len(done) == 0 {
		return ""
	}
	return "discarded " + strings.Join(done, ", ")
}

// Config returns the conversation's configuration (the zero one when the
// session is gone).
func (t *Tree) Config(ctx context.Context) (cfg config.Config) {
	t.conv.Read(ctx, func(v View) { cfg = v.Config })
	return cfg
}
