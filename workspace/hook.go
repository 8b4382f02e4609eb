package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/workspace/gitcommit"
)

// The post-tool hook commits, after each tool batch, exactly what the
// agent's tools wrote (package gitcommit does the git side):
//
//   - for the edit tools, the texts they computed (each edit's old and new
//     text), never what the buffer or the disk holds at hook time: typing
//     after the agent's edit stays out, unsaved, and no save is needed;
//   - for bash, the files that were clean before the batch and that no
//     editor saved or holds unsaved during it; the others are the user's,
//     left alone and reported;
//   - the user's git hooks run, unless the agent changed a file they
//     execute and tools.bash is not "allow": then the user is asked
//     ("ask"), or the commit is made without them and that is said
//     ("deny");
//   - the journal records the plan before the commit starts and its end,
//     so that a commit the daemon's death cut short is reported on resume
//     and can be made with loom.commit.

// gitState is what a session keeps for the auto-commit. It is owned by
// the session's goroutine.
type gitState struct {
	// batch holds the current tool batch's edits, by absolute path.
	batch map[string]*batchFile
	// bash is the baseline taken before the batch's first command, nil
	// when the batch ran none.
	bash *bashBaseline
	// commits are the auto-commits this session made, oldest first.
	commits []*gitcommit.Result
	// last is the last commit's name, for loom.status.
	last string
	// turnOf is the turn of each of commits, by SHA (rewind.go).
	turnOf map[string]uint64
	// agentFiles are the files the agent's tools changed in this session.
	agentFiles map[string]bool
	// pending is a commit the daemon's death interrupted, found in the
	// journal on resume; loom.commit makes it.
	pending *commitRecord
	// lock serialises what writes the worktree for the session (used
	// from any goroutine): a batch's mutating calls and its hook, and an
	// undo, so that an undo never races the agent's next edit.
	lock sync.Mutex
	// idle are undos waiting for the turn in flight to end.
	idle []chan bool
	// indexLeft is the index update a held index.lock stopped, retried
	// once at the next turn.
	indexLeft *indexRetry
}

// indexRetry is an index update to retry: the commit's entries in the
// repository that holds dir.
type indexRetry struct {
	top     string
	entries []gitcommit.Entry
}

// batchFile is what the agent's edit tools did to one file in a batch.
type batchFile struct {
	steps   []gitcommit.Step
	created bool
	mode    fs.FileMode
}

// bashBaseline is the state before a batch's first command: the
// worktree's dirty files, the editor's save count and its unsaved
// documents.
type bashBaseline struct {
	snap  *gitcommit.Snapshot
	saves uint64
	dirty map[string]bool
}

// hookJob is what the hook's worker needs, copied on the owner goroutine.
type hookJob struct {
	batch      map[string]*batchFile
	bash       *bashBaseline
	agentFiles []string
	prompt     string
	cfg        config.Config
}

// newBatch forgets the previous batch's edits.
func (g *gitState) newBatch() {
	g.batch = nil
	g.bash = nil
}

// recordEdit records one applied edit of an edit tool.
func (g *gitState) recordEdit(path, before, after string, created bool, mode fs.FileMode) {
	if g.batch == nil {
		g.batch = map[string]*batchFile{}
	}
	if g.agentFiles == nil {
		g.agentFiles = map[string]bool{}
	}
	g.agentFiles[path] = true
	b := g.batch[path]
	if b == nil {
		b = &batchFile{created: created, mode: mode}
		g.batch[path] = b
	}
	b.steps = append(b.steps, gitcommit.Step{Old: before, New: after})
}

// takeBatch hands the batch to the hook and starts a new one.
func (g *gitState) takeBatch(prompt string, cfg config.Config) hookJob {
	job := hookJob{batch: g.batch, bash: g.bash, prompt: prompt, cfg: cfg}
	for p := range g.agentFiles {
		job.agentFiles = append(job.agentFiles, p)
	}
	g.newBatch()
	return job
}

// hookResult is what the post-tool hook did.
type hookResult struct {
	action string
	failed bool
	// warn shows action as an error to the user without failing the
	// batch for the model (a merge in progress, a file left out).
	warn   bool
	commit *gitcommit.Result
	// bashFiles are the files committed as a command's changes.
	bashFiles []string
	// quiet marks a hook that found nothing to do and nothing to tell.
	quiet bool
	// notes are what the user must know besides the action (also joined
	// into action); modelNote what the model should know to act on it.
	notes     []string
	modelNote string
	// indexLeft are the commit's index entries another git process kept
	// locked, retried once at the next turn.
	indexLeft []gitcommit.Entry
}

// runHook runs the post-tool hook on a worker goroutine and reports
// PostToolsHookCompleted.
func (s *Session) runHook(ctx context.Context, a fsm.RunPostToolsHook, job hookJob) {
	// A cancelled turn does not cut a commit short (that could leave the
	// repository locked); only the session's shutdown does.
	s.git.lock.Lock()
	res := s.commitBatch(s.life, job)
	s.git.lock.Unlock()
	s.post(func() {
		s.recordCommit(res)
		if res.commit != nil {
			// Even for a cancelled turn: the commit exists, the user must
			// know (and loom.undo can take it back).
			note := commitNote(res.commit)
			note.Notes = res.notes
			s.notify(Notification{Kind: NoteCommit, Turn: a.Turn, Commit: note, Text: res.action})
		}
		if ctx.Err() != nil {
			return
		}
		switch {
		case res.commit != nil:
		case res.failed, res.warn:
			s.notify(Notification{Kind: NoteError, Turn: a.Turn, Text: res.action})
		case res.quiet:
		default:
			s.notify(Notification{Kind: NoteInfo, Turn: a.Turn, Text: res.action, Visible: len(res.notes) > 0})
		}
		s.step(fsm.PostToolsHookCompleted{Turn: a.Turn, ActionTaken: res.action, Failed: res.failed, Note: res.modelNote})
	})
}

// recordCommit keeps a commit for loom.undo; on the owner goroutine.
func (s *Session) recordCommit(res hookResult) {
	if res.commit == nil {
		return
	}
	s.git.commits = append(s.git.commits, res.commit)
	s.git.last = res.commit.SHA
	if s.git.turnOf == nil {
		s.git.turnOf = map[string]uint64{}
	}
	s.git.turnOf[res.commit.SHA] = s.m.State().Turn
	if len(res.indexLeft) > 0 {
		s.git.indexLeft = &indexRetry{top: s.folder, entries: res.indexLeft}
	}
	if s.git.agentFiles == nil {
		s.git.agentFiles = map[string]bool{}
	}
	for _, f := range res.bashFiles {
		s.git.agentFiles[f] = true
	}
}

func commitNote(c *gitcommit.Result) *CommitNote {
	return &CommitNote{SHA: c.SHA, Files: c.Files, Message: c.Message}
}

func (s *Session) commitBatch(ctx context.Context, job hookJob) hookResult {
	cfg := job.cfg
	if !cfg.Hooks.AutoCommit {
		return hookResult{action: "auto-commit is off (hooks.auto_commit = false): changes left uncommitted"}
	}
	repo, err := gitcommit.Open(ctx, s.folder, cfg.Model.APIKeyEnv)
	if err != nil {
		return hookResult{action: "not a git repository: changes left uncommitted"}
	}
	changes, notes, bashFiles := s.batchChanges(ctx, repo, job)
	if len(changes) == 0 {
		// A batch whose commands changed nothing is not worth a word.
		return hookResult{action: joinNotes("no file to commit", notes), quiet: len(notes) == 0, warn: len(notes) > 0, notes: notes}
	}
	trailer := cfg.Hooks.TrailerFor(cfg.Model.Name)
	repo.MaxFileBytes = cfg.Hooks.FileLimit()
	// The prompt is masked as everything shown is: a key the user pasted
	// into it never reaches the history.
	prompt := s.host.redactor.String(job.prompt)
	plan, err := repo.Prepare(ctx, changes, func(files []string) string { return commitMessage(files, prompt, trailer) })
	if errors.Is(err, gitcommit.ErrInProgress) {
		return hookResult{action: joinNotes("the agent's change was not committed, it stays in the worktree: "+strings.TrimPrefix(err.Error(), gitcommit.ErrInProgress.Error()+": "), notes), warn: true}
	}
	if err != nil {
		return hookResult{action: joinNotes("the auto-commit failed, the changes stay in the worktree uncommitted: "+err.Error(), notes), failed: true}
	}
	for _, sk := range plan.Skipped {
		notes = append(notes, fmt.Sprintf("not committed: %s, because %s; the agent's change stays in the worktree", sk.Path, sk.Reason))
	}
	if len(plan.Entries) == 0 {
		return hookResult{action: joinNotes("nothing committed", notes), warn: len(notes) > 0, quiet: len(notes) == 0, notes: notes}
	}
	runHooks, hookNote := s.approveHooks(ctx, repo, job, plan)
	if hookNote != "" {
		notes = append(notes, hookNote)
	}
	res, err := s.commitJournaled(ctx, repo, plan, runHooks)
	if err != nil {
		return hookResult{action: joinNotes("the auto-commit failed, the changes stay in the worktree uncommitted: "+err.Error(), notes), failed: true}
	}
	notes = append(notes, indexNotes(res.Index)...)
	s.saveCommittedBuffers(ctx, job, repo)
	subject, _, _ := strings.Cut(res.Message, "\n")
	return hookResult{
		action:    joinNotes(fmt.Sprintf("committed %s: %s", gitcommit.Short(res.SHA), subject), notes),
		commit:    res,
		bashFiles: bashFiles,
		warn:      len(plan.Skipped) > 0,
		notes:     notes,
		indexLeft: res.Index.Locked,
	}
}

// batchChanges lists the agent's changes of the batch: the edit tools'
// texts, and the files its commands changed that are the agent's alone.
// notes tell the user about the files left to them.
func (s *Session) batchChanges(ctx context.Context, repo *gitcommit.Repo, job hookJob) (changes []gitcommit.Change, notes, bashFiles []string) {
	paths := make([]string, 0, len(job.batch))
	for p := range job.batch {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	skip := map[string]bool{}
	for _, p := range paths {
		b := job.batch[p]
		changes = append(changes, gitcommit.Change{Path: p, Steps: b.steps, Created: b.created, Mode: b.mode})
		if rel, ok := repo.Rel(p); ok {
			skip[rel] = true
		}
	}
	if job.bash == nil || job.bash.snap == nil {
		return changes, nil, nil
	}
	prefix := ""
	if p, ok := repo.Rel(s.folder); ok {
		prefix = p
	}
	changed, leftDirty := gitcommit.TakeSnapshot(ctx, repo.Top).ChangedSince(job.bash.snap, prefix, skip)
	overlay := s.host.overlay
	var yours []string
	for _, rel := range changed {
		abs := filepath.Join(repo.Top, filepath.FromSlash(rel))
		if overlay.SavedSince(abs, job.bash.saves) || job.bash.dirty[overlayKey(abs)] || overlay.Dirty(abs) {
			yours = append(yours, rel)
			continue
		}
		changes = append(changes, gitcommit.Change{Path: abs, FromDisk: true})
		bashFiles = append(bashFiles, abs)
	}
	if len(yours) > 0 {
		notes = append(notes, "changed during the commands but saved or edited in your editor meanwhile, so left to you, uncommitted: "+strings.Join(yours, ", "))
	}
	// An edited file a command changed again (a formatter): the commit
	// holds the edit tool's text; the command's change is left and said.
	var again []string
	for _, p := range paths {
		steps := job.batch[p].steps
		if _, _, open := overlay.Document(p); open {
			continue
		}
		if disk, err := os.ReadFile(p); err == nil && string(disk) != steps[len(steps)-1].New {
			rel, _ := repo.Rel(p)
			again = append(again, rel)
		}
	}
	if len(again) > 0 {
		notes = append(notes, "changed again by a command after the agent's edit; that later change is left uncommitted: "+strings.Join(again, ", "))
	}
	if len(leftDirty) > 0 {
		notes = append(notes, "changed by a command but already modified by you before, so not committed: "+strings.Join(leftDirty, ", "))
	}
	return changes, notes, bashFiles
}

// approveHooks decides whether the user's git hooks run for the commit:
// yes, unless the agent changed in this session a file they execute and
// tools.bash is not "allow" (running them would run the agent's code).
// Under "ask" the user decides. note says what was decided, if anything.
func (s *Session) approveHooks(ctx context.Context, repo *gitcommit.Repo, job hookJob, plan *gitcommit.Plan) (bool, string) {
	if job.cfg.Tools.Bash == config.PolicyAllow {
		return true, ""
	}
	var rels []string
	for _, p := range job.agentFiles {
		if rel, ok := repo.Rel(p); ok {
			rels = append(rels, rel)
		}
	}
	rels = append(rels, plan.Files()...)
	touched := dedupe(repo.HookFiles(rels))
	if len(touched) == 0 || !repo.HasCommitHooks() {
		return true, ""
	}
	files := strings.Join(touched, ", ")
	notRun := fmt.Sprintf("your git hooks were not run for this commit, because the agent changed %s, which they execute, and tools.bash = %q", files, job.cfg.Tools.Bash)
	if job.cfg.Tools.Bash == config.PolicyDeny {
		return false, notRun
	}
	ok, err := s.approve(ctx, Approval{Folder: s.folder, Tool: "git hooks",
		Detail: "commit the agent's change, running your git hooks, which execute " + files + " as the agent changed it"},
		job.cfg.Tools.ApprovalTimeout.Duration)
	if err != nil || !ok {
		return false, notRun
	}
	return true, ""
}

func dedupe(ss []string) []string {
	sort.Strings(ss)
	out := ss[:0]
	for i, s := range ss {
		if i == 0 || s != ss[i-1] {
			out = append(out, s)
		}
	}
	return out
}

// saveCommittedBuffers asks the editor to save the open documents whose
// text is exactly what the agent wrote (nobody typed since), so that the
// disk matches the commit. A document with the user's typing is left
// unsaved.
func (s *Session) saveCommittedBuffers(ctx context.Context, job hookJob, repo *gitcommit.Repo) {
	var save []string
	for p, b := range job.batch {
		text, _, open := s.host.overlay.Document(p)
		if open && text == b.steps[len(b.steps)-1].New && s.host.overlay.Dirty(p) {
			save = append(save, p)
		}
	}
	if len(save) == 0 {
		return
	}
	sort.Strings(save)
	if _, err := s.host.opts.Editor.SaveDocuments(ctx, save); err != nil && !errors.Is(err, ErrUnsupported) {
		s.log.Warn("saving documents failed", "err", err)
	}
}

// snapshotBeforeBash takes the baseline just before the batch's first
// approved command, for the hook to tell which files the commands
// changed. It runs on the batch's worker; the baseline reaches the owner
// goroutine before the command's result does.
func (s *Session) snapshotBeforeBash(ctx context.Context) {
	base := &bashBaseline{saves: s.host.overlay.SaveCount(), dirty: s.host.overlay.DirtyDocuments()}
	base.snap = gitcommit.TakeSnapshot(ctx, s.folder)
	s.postLive(ctx, func() {
		if s.git.bash == nil {
			s.git.bash = base
		}
	})
}

// indexNotes says how the user's index followed the commit, when it did
// not simply move to it.
func indexNotes(rep gitcommit.IndexReport) []string {
	var notes []string
	if len(rep.Merged) > 0 {
		notes = append(notes, fmt.Sprintf("you had staged changes to %s: the agent's change was merged into your staged version, so that your next git commit keeps both", strings.Join(rep.Merged, ", ")))
	}
	for _, p := range rep.Conflicts {
		notes = append(notes, fmt.Sprintf("your staged version of %[1]s overlaps the agent's change, so it was left as you staged it: committing it as staged would revert the agent's change to %[1]s; to keep both, unstage it (git restore --staged %[1]s) and stage your change again (git add -p %[1]s)", p))
	}
	if len(rep.Locked) > 0 {
		files := make([]string, len(rep.Locked))
		for i, e := range rep.Locked {
			files[i] = e.Path
		}
		list := strings.Join(files, " ")
		notes = append(notes, fmt.Sprintf("the commit is made, but another git process holds the index lock (.git/index.lock), so git's index still has the old %s: git status shows the agent's change there as staged-reverted, and a plain git commit now would revert it; loom retries at the next turn, or run git reset -q -- %s once the other git command is done", strings.Join(files, ", "), list))
	}
	return notes
}

// retryIndex retries, once, the index update a held index.lock stopped,
// and says how it went; on the owner goroutine, when a turn starts.
func (s *Session) retryIndex(turn uint64) {
	left := s.git.indexLeft
	if left == nil {
		return
	}
	s.git.indexLeft = nil
	scrub := s.cfg.Model.APIKeyEnv
	s.goWorker(func() {
		var text string
		kind := NoteInfo
		repo, err := gitcommit.Open(s.life, left.top, scrub)
		if err != nil {
			return
		}
		rep := repo.SyncIndex(s.life, left.entries, 500*time.Millisecond)
		files := make([]string, len(left.entries))
		for i, e := range left.entries {
			files[i] = e.Path
		}
		if len(rep.Locked) > 0 {
			kind = NoteError
			text = "retried: the index is still locked by another git process, so git's index still has the old " + strings.Join(files, ", ") + " (staged-reverted); once that git command is done, run git reset -q -- " + strings.Join(files, " ")
		} else {
			notes := indexNotes(rep)
			text = "the index lock is free now: git's index follows the agent's commit for " + strings.Join(files, ", ")
			if len(notes) > 0 {
				text += "; " + strings.Join(notes, "; ")
			}
		}
		s.post(func() { s.notify(Notification{Kind: kind, Turn: turn, Text: text, Visible: true}) })
	})
}

func joinNotes(action string, notes []string) string {
	if len(notes) == 0 {
		return action
	}
	return action + "; " + strings.Join(notes, "; ")
}

// commitMessage summarises a change: the files, and the first line of the
// user's request, with the attribution trailer.
func commitMessage(files []string, prompt, trailer string) string {
	subject := "loom: edit " + strings.Join(files, ", ")
	if len(subject) > 72 {
		subject = fmt.Sprintf("loom: edit %s and %d more", files[0], len(files)-1)
	}
	var b strings.Builder
	b.WriteString(subject)
	request, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
	if request != "" {
		request = cutRunes(request, 200)
		b.WriteString("\n\nRequested: " + request)
	}
	if len(files) > 1 {
		b.WriteString("\n\nFiles:\n")
		for _, f := range files {
			b.WriteString("- " + f + "\n")
		}
	}
	if trailer != "" {
		b.WriteString("\n\n" + trailer)
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// cutRunes shortens s to at most n bytes of whole runes, marking a cut
// with "…".
func cutRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func relPaths(top string, paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		if r, err := filepath.Rel(top, p); err == nil {
			out[i] = filepath.ToSlash(r)
		} else {
			out[i] = p
		}
	}
	return out
}
