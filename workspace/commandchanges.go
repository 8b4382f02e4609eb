package workspace

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/loom-lsp/loom-lsp/config"
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

// maxCommandDiff bounds the diff shown for one command change.
const maxCommandDiff = 256 << 10

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
	// hash is the content's hash when reported ("-" when absent):
	// discard refuses a file that changed since.
	hash string
	// before is the file just before the command ran, nil when not known
	// (too large); after its text when reported, nil when not kept
	// (binary or too large).
	before *preImage
	after  *preImage
}

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

// closeCommand closes a command's window and sorts its paths into the
// command's and the user's (those the editor reported meanwhile).
func (s *Conversation) closeCommand(win *commandWindow, mark uint64, command string, before map[string]preImage) *commandRun {
	paths, scanned := s.folder.cmds.closeWindow(win, s.folder.dir)
	run := &commandRun{command: command, scanned: scanned, before: map[string]preImage{}}
	for _, p := range paths {
		if s.folder.host.overlay.EditorChangedSince(p, mark) {
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

// commandResultNote is what the model reads at the end of a command's
// result: the files it changed (git-ignored ones left out), which loom
// does not commit; "" when it changed none.
func (s *Conversation) commandResultNote(ctx context.Context, run *commandRun) string {
	var rels []string
	for _, p := range run.paths {
		rel, err := filepath.Rel(s.folder.dir, p)
		if err != nil || strings.HasPrefix(rel, "..") || rel == ".git" || strings.HasPrefix(rel, ".git"+string(filepath.Separator)) {
			continue
		}
		rels = append(rels, filepath.ToSlash(rel))
	}
	if len(rels) == 0 {
		return ""
	}
	ignored := gitcommit.IgnoredIn(ctx, s.folder.dir, rels)
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
func (s *Conversation) reportCommands(ctx context.Context, repo *gitcommit.Repo, job hookJob, turn uint64) (changes []CommandChange, yours []string) {
	seen := map[string]bool{}
	for p := range job.batch {
		seen[p] = true
	}
	var cands []CommandChange
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
				c.before = &pre
			}
			cands = append(cands, c)
		}
	}
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
	limit := job.cfg.Hooks.FileLimit()
	for _, c := range cands {
		if ignored[c.Rel] || repo.Nested(c.Rel) != "" {
			continue
		}
		head, inHead := heads[c.Rel]
		if c.before == nil {
			// Not seen changed before the command (or too large to keep):
			// as HEAD has it.
			c.before = &preImage{text: head, present: inHead}
		}
		from := *c.before
		st, err := os.Lstat(c.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if !from.present {
				continue // made and removed again
			}
			c.Deleted, c.hash = true, "-"
			c.after = &preImage{}
		case err != nil || !st.Mode().IsRegular():
			continue // a directory, a link: left to git status
		default:
			c.Size, c.Created = st.Size(), !inHead
			if c.Size > limit {
				c.hash = "size:" + fmt.Sprint(c.Size) + ":" + st.ModTime().String()
				c.Binary = true
				break
			}
			b, err := os.ReadFile(c.Path)
			if err != nil {
				continue
			}
			if from.present && string(b) == from.text {
				continue // as it was before the command
			}
			c.hash = contentHash(b)
			if len(b) <= maxPreImage {
				c.after = &preImage{text: string(b), present: true}
			}
			if bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 || isBinary(from.text) {
				c.Binary = true
				break
			}
			c.Diff = unifiedDiff(c.Rel, from.text, string(b), from.present)
		}
		if c.Deleted {
			c.Diff = unifiedDiff(c.Rel, from.text, "", true)
		}
		if len(c.Diff) > maxCommandDiff {
			c.Diff = c.Diff[:maxCommandDiff] + "\n… (diff cut at " + gitcommit.Size(maxCommandDiff) + ")\n"
		}
		changes = append(changes, c)
	}
	return changes, yours
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

// dirtyFiles lists the folder's files git reports changed or untracked,
// absolute; none when it is no git repository.
func (s *Conversation) dirtyFiles(ctx context.Context, scrub []string) []string {
	repo, err := gitcommit.Open(ctx, s.folder.dir, scrub...)
	if err != nil {
		return nil
	}
	rels, err := repo.Dirty(ctx)
	if err != nil {
		return nil
	}
	return absPaths(repo.Top, rels)
}

// contentHash names a file's content, for discard's guard.
func contentHash(b []byte) string {
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
	return contentHash(b)
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
	return contentHash([]byte(disk.Text))
}

// commandNotes says the command changes and the user's files, for
// people. (The model read them in the command's result.)
func commandNotes(changes []CommandChange, yours []string, opts HostOptions) (notes []string) {
	keep, discard := opts.KeepHow, opts.DiscardHow
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
		notes = append(notes, fmt.Sprintf("changed by `%s` — not committed: %s; keep them (commit: %s) or discard them (the files as they were before the command, your edits kept: %s)", cutRunes(cmd, 80), files, keep, discard))
	}
	if len(yours) > 0 {
		notes = append(notes, "changed while the commands ran but also changed in your editor meanwhile, so left to you, not reported as the commands': "+strings.Join(yours, ", "))
	}
	return notes
}

// CommandChanges returns the commands' changes reported and not yet kept
// or discarded, oldest first. The review list builds on it.
func (s *Conversation) CommandChanges(ctx context.Context) ([]CommandChange, error) {
	var out []CommandChange
	err := s.call(ctx, func() { out = append(out, s.git.changes...) })
	return out, err
}

// takeChanges returns the reported changes of paths (absolute, or
// relative to the folder), or an error naming a path that is not one.
func (s *Conversation) takeChanges(ctx context.Context, paths []string) ([]CommandChange, error) {
	if len(paths) == 0 {
		return nil, errors.New("name the files (paths) of the commands' changes to keep or discard")
	}
	all, err := s.CommandChanges(ctx)
	if err != nil {
		return nil, err
	}
	var out []CommandChange
	for _, p := range paths {
		abs := p
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(s.folder.dir, filepath.FromSlash(p))
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
func (g *gitState) settle(paths []string) {
	gone := map[string]bool{}
	for _, p := range paths {
		gone[p] = true
	}
	kept := g.changes[:0]
	for _, c := range g.changes {
		if !gone[c.Path] {
			kept = append(kept, c)
		}
	}
	g.changes = kept
}

// addChanges adds newly reported changes, replacing older reports of the
// same files; on the owner goroutine.
func (g *gitState) addChanges(changes []CommandChange) {
	paths := make([]string, len(changes))
	for i, c := range changes {
		paths[i] = c.Path
	}
	g.settle(paths)
	g.changes = append(g.changes, changes...)
}

// KeepCommandChanges commits the commands' changes to paths (loom.commit
// {paths}): the command's own bytes, as reported, on top of HEAD (a
// binary, deleted or too large file: as it is on disk), as an auto-commit
// loom.undo can take back, and returns what it did.
func (s *Conversation) KeepCommandChanges(ctx context.Context, paths []string) (string, error) {
	changes, err := s.takeChanges(ctx, paths)
	if err != nil {
		return "", err
	}
	s.git.lock.Lock()
	defer s.git.lock.Unlock()
	var job hookJob
	if err := s.call(ctx, func() {
		job = hookJob{cfg: s.cfg, prompt: s.turnPrompt, sandbox: s.env.Sandbox}
		for p := range s.git.agentFiles {
			job.agentFiles = append(job.agentFiles, p)
		}
	}); err != nil {
		return "", err
	}
	repo, err := gitcommit.Open(ctx, s.folder.dir, job.cfg.Model.APIKeyEnv)
	if err != nil {
		return "", err
	}
	if err := s.folder.checkRepo(repo); err != nil {
		return "", err
	}
	var gc []gitcommit.Change
	var cmds []string
	for _, c := range changes {
		if c.before != nil && c.after != nil && c.after.present && !c.Binary {
			// The command's bytes only: the user's edits to the file
			// from before the command (and since) stay uncommitted.
			mode := fs.FileMode(0o644)
			if st, err := os.Lstat(c.Path); err == nil {
				mode = st.Mode().Perm()
			}
			gc = append(gc, gitcommit.Change{Path: c.Path, Steps: []gitcommit.Step{{Old: c.before.text, New: c.after.text}}, Created: !c.before.present, Mode: mode})
		} else {
			gc = append(gc, gitcommit.Change{Path: c.Path, FromDisk: true})
		}
		job.agentFiles = append(job.agentFiles, c.Path)
		if !slices.Contains(cmds, c.Command) {
			cmds = append(cmds, c.Command)
		}
	}
	trailer := job.cfg.Hooks.TrailerFor(job.cfg.Model.Name)
	message := func(files []string) string {
		return commitMessage(files, s.folder.host.redactor.String("kept the changes of `"+strings.Join(cmds, "`, `")+"`"), trailer)
	}
	plan, err := repo.Prepare(ctx, gc, message)
	if err != nil {
		return "", err
	}
	var notes []string
	for _, sk := range plan.Skipped {
		notes = append(notes, fmt.Sprintf("not committed: %s, because %s", sk.Path, sk.Reason))
	}
	if len(plan.Entries) == 0 {
		plan.Discard()
		return "", fmt.Errorf("nothing to commit: %s", strings.Join(notes, "; "))
	}
	hd := s.approveHooks(ctx, repo, job)
	if hd.note != "" {
		notes = append(notes, hd.note)
	}
	if hd.notice != "" {
		notes = append(notes, hd.notice)
	}
	res, err := s.changes.CommitJournaled(ctx, repo, plan, hd.run, job.sandbox)
	if err != nil {
		return "", err
	}
	notes = append(notes, indexNotes(res.Index)...)
	subject, _, _ := strings.Cut(res.Message, "\n")
	msg := joinNotes(fmt.Sprintf("committed %s: %s", gitcommit.Short(res.SHA), subject), notes)
	err = s.call(ctx, func() {
		var done []string
		for _, c := range changes {
			done = append(done, c.Path)
		}
		s.git.settle(done)
		s.recordCommit(hookResult{commit: res, indexLeft: res.Index.Locked})
		note := commitNote(res)
		note.Notes = notes
		s.notify(Notification{Kind: NoteCommit, Commit: note, Text: msg})
	})
	return msg, err
}

// DiscardCommandChanges takes the commands' changes to paths back: each
// file becomes what it was just before the command ran (a file the
// command created is removed, one it deleted comes back), and edits the
// user made since the report stay, by a three-way merge. It refuses,
// before touching anything, a file where the user's later edits overlap
// the command's, or that cannot be merged (binary, too large) and changed
// since. The discarded content is kept as a git object, and the message
// says how to get it back.
func (s *Conversation) DiscardCommandChanges(ctx context.Context, paths []string) (string, error) {
	changes, err := s.takeChanges(ctx, paths)
	if err != nil {
		return "", err
	}
	s.git.lock.Lock()
	defer s.git.lock.Unlock()
	cfg := s.cfgSnapshot(ctx)
	repo, err := gitcommit.Open(ctx, s.folder.dir, cfg.Model.APIKeyEnv)
	if err != nil {
		return "", err
	}
	limit := cfg.Hooks.FileLimit()
	// The writer of the repository: the watcher's echo of its writes is
	// no news for the user.
	w := s.changes.RestoreWriter(repo.Top)
	targets := make([]preImage, len(changes))
	disks := make([]worktree.Version, len(changes))
	var kept []string
	for i, c := range changes {
		if s.folder.host.overlay.Dirty(c.Path) {
			return "", fmt.Errorf("%s has unsaved changes in the editor; save or revert them first", c.Rel)
		}
		// Read without following a link anywhere on the path: a
		// directory a command replaced with a link is refused here.
		disk, _, err := w.Read(c.Rel)
		if err != nil {
			return "", fmt.Errorf("discarding %s: %w", c.Rel, err)
		}
		target, mergedYours, err := discardTarget(ctx, repo, c, disk, limit)
		if err != nil {
			return "", err
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
			return joinDone(done), fmt.Errorf("discarding %s: %w", c.Rel, err)
		}
		if backup != "" {
			backups = append(backups, fmt.Sprintf("git cat-file -p %s > %s", gitcommit.Short(backup), c.Rel))
		}
		if err := w.Write(worktree.Change{Rel: c.Rel, Expect: disks[i], New: targets[i].version()}); err != nil {
			return joinDone(done), fmt.Errorf("discarding %s: %w", c.Rel, err)
		}
		done = append(done, c.Path)
	}
	rels := relPaths(repo.Top, done)
	msg := "discarded the commands' changes to " + strings.Join(rels, ", ") + ": they are as they were before the command"
	if len(kept) > 0 {
		msg += "; your edits made since were kept in " + strings.Join(kept, ", ")
	}
	if len(backups) > 0 {
		msg += "; to get a discarded version back: " + strings.Join(backups, "; ")
	}
	err = s.call(ctx, func() {
		s.git.settle(done)
		s.notify(Notification{Kind: NoteInfo, Text: msg, Visible: true})
	})
	return msg, err
}

// discardTarget works out what discarding c leaves in its file: the file
// before the command, with the user's edits since the report merged in
// (mergedYours). A file that cannot be merged must be as reported.
func discardTarget(ctx context.Context, repo *gitcommit.Repo, c CommandChange, disk worktree.Version, limit int64) (target preImage, mergedYours bool, err error) {
	before := preImage{}
	if c.before != nil {
		before = *c.before
	}
	if diskHash(disk, limit) == c.hash || int64(len(disk.Text)) > limit && currentHash(c, limit) == c.hash {
		return before, false, nil
	}
	refuse := fmt.Errorf("%s changed since the command's change was reported, in a way loom cannot keep apart from the command's, so it is left as it is; restore it yourself (git restore %s) if you mean to", c.Rel, c.Rel)
	if c.after == nil || !c.after.present || !before.present || c.Binary {
		return preImage{}, false, refuse
	}
	if !disk.Present || int64(len(disk.Text)) > limit || isBinary(disk.Text) {
		return preImage{}, false, refuse
	}
	merged, clean, err := repo.Merge3(ctx, disk.Text, c.after.text, before.text)
	if err != nil {
		return preImage{}, false, err
	}
	if !clean {
		return preImage{}, false, fmt.Errorf("%s changed since the command's change was reported, on the lines the command changed, so it is left as it is; take the command's lines out yourself", c.Rel)
	}
	return preImage{text: merged, present: true}, true, nil
}

func joinDone(done []string) string {
	if len(done) == 0 {
		return ""
	}
	return "discarded " + strings.Join(done, ", ")
}

// cfgSnapshot returns the session's configuration (the zero one when the
// session is gone).
func (s *Conversation) cfgSnapshot(ctx context.Context) (cfg config.Config) {
	s.call(ctx, func() { cfg = s.cfg })
	return cfg
}
