package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/tools/cmdrules"
	"github.com/loom-lsp/loom-lsp/tools/sandbox"
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
//   - the user's git hooks are commands: they run programs of the
//     worktree (a Makefile, package.json's scripts, scripts/lint.sh,
//     .githooks/) that the agent may have changed, so they run only when
//     the user allows commands (tools.bash = "allow", a rule that allows
//     `git commit`, or the user's yes when asked under "ask"), and then
//     inside the sandbox commands run in; otherwise the commit is made
//     without them (as git commit --no-verify) and the user is told once
//     per conversation;
//   - the journal records the plan before the commit starts and its end,
//     so that a commit the daemon's death cut short is reported on resume
//     and can be made with loom.commit.

// gitState is what a session keeps for the auto-commit. It is owned by
// the session's goroutine.
type gitState struct {
	// batch holds the current tool batch's edits, by absolute path.
	batch map[string]*batchFile
	// cmds are the batch's commands and the files they changed.
	cmds []commandRun
	// changes are the commands' changes reported and not yet kept or
	// discarded (commandchanges.go).
	changes []CommandChange
	// agentFiles are the files the agent's tools changed in this session.
	agentFiles map[string]bool
	// lock serialises what writes the worktree for the session (used
	// from any goroutine): a batch's mutating calls and its hook, and an
	// undo, so that an undo never races the agent's next edit.
	lock *sync.Mutex // the folder's: its conversations write one worktree
	// idle are undos waiting for the turn in flight to end.
	idle []chan bool
	// indexLeft is the index update a held index.lock stopped, retried
	// once at the next turn.
	indexLeft *indexRetry
	// hooksTold is set once the user was told that their git hooks did
	// not run for an agent's commit (used from the hook's worker).
	hooksTold atomic.Bool
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

// hookJob is what the hook's worker needs, copied on the owner goroutine.
type hookJob struct {
	turn       uint64
	batch      map[string]*batchFile
	cmds       []commandRun
	agentFiles []string
	prompt     string
	cfg        config.Config
	// sandbox is the sandbox the conversation's commands run in (nil:
	// tools.sandbox = "off"): the user's git hooks run in it.
	sandbox *sandbox.Sandbox
	// hooks is whether the user's git hooks run for the commit, decided
	// (the user asked) before the worktree lock is taken; nil: decided
	// under it.
	hooks *hooksDecision
}

// hooksDecision is approveHooks' answer: whether the hooks run, and what
// to tell about it.
type hooksDecision struct {
	run  bool
	note string
	// notice is what the user must see once: their hooks were skipped.
	notice string
}

// newBatch forgets the previous batch's edits.
func (g *gitState) newBatch() {
	g.batch = nil
	g.cmds = nil
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
	job := hookJob{batch: g.batch, cmds: g.cmds, prompt: prompt, cfg: cfg}
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
	// changes are the commands' changes, reported and not committed.
	changes []CommandChange
	// quiet marks a hook that found nothing to do and nothing to tell.
	quiet bool
	// notes are what the user must know besides the action (also joined
	// into action); modelNote what the model should know to act on it.
	notes     []string
	modelNote string
	// indexLeft are the commit's index entries another git process kept
	// locked, retried once at the next turn.
	indexLeft []gitcommit.Entry
	// notice is shown to the user on its own (Visible), once: the git
	// hooks were skipped, and how to have them run.
	notice string
}

// runHook runs the post-tool hook on a worker goroutine and reports
// PostToolsHookCompleted.
func (s *Conversation) runHook(ctx context.Context, a fsm.RunPostToolsHook, job hookJob) {
	// A cancelled turn does not cut a commit short (that could leave the
	// repository locked); only the session's shutdown does. The user is
	// asked about their git hooks, if at all, before the worktree lock is
	// taken: the folder's other conversations go on meanwhile.
	job.hooks = s.decideHooksEarly(s.folder.life, job)
	s.git.lock.Lock()
	res := s.commitBatch(s.folder.life, job)
	s.git.lock.Unlock()
	s.post(func() {
		s.recordCommit(res)
		if len(res.changes) > 0 {
			s.git.addChanges(res.changes)
			s.notify(Notification{Kind: NoteCommandChanges, Turn: a.Turn, Changes: res.changes})
		}
		if res.commit != nil {
			// Even for a cancelled turn: the commit exists, the user must
			// know (and loom.undo can take it back).
			note := commitNote(res.commit)
			note.Notes = res.notes
			s.notify(Notification{Kind: NoteCommit, Turn: a.Turn, Commit: note, Text: res.action})
		}
		if res.notice != "" {
			s.notify(Notification{Kind: NoteInfo, Turn: a.Turn, Text: res.notice, Visible: true})
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
func (s *Conversation) recordCommit(res hookResult) {
	if res.commit == nil {
		return
	}
	s.changes.Log.Add(res.commit, s.m.State().Turn)
	if len(res.indexLeft) > 0 {
		s.git.indexLeft = &indexRetry{top: s.folder.dir, entries: res.indexLeft}
	}
}

func commitNote(c *gitcommit.Result) *CommitNote {
	return &CommitNote{SHA: c.SHA, Files: c.Files, Message: c.Message}
}

// commitBatch is the hook's work: commit the edit tools' texts, report
// the commands' changes.
func (s *Conversation) commitBatch(ctx context.Context, job hookJob) hookResult {
	cfg := job.cfg
	repo, err := gitcommit.Open(ctx, s.folder.dir, cfg.Model.APIKeyEnv)
	if err != nil {
		return hookResult{action: "not a git repository: changes left uncommitted"}
	}
	reported, yours := s.reportCommands(ctx, repo, job, job.turn)
	notes := commandNotes(reported, yours, s.folder.host.opts)
	notes = append(notes, s.editedAgain(repo, job)...)
	base := hookResult{changes: reported, notes: notes}
	// done finishes a result that commits nothing.
	done := func(action string, r hookResult) hookResult {
		r.changes = base.changes
		r.notes = append(append([]string(nil), notes...), r.notes...)
		r.action = joinNotes(action, r.notes)
		r.quiet = r.quiet && len(r.notes) == 0
		return r
	}
	if !cfg.Hooks.AutoCommit {
		return done("auto-commit is off (hooks.auto_commit = false): changes left uncommitted", hookResult{})
	}
	var changes []gitcommit.Change
	for _, p := range sortedKeys(job.batch) {
		b := job.batch[p]
		changes = append(changes, gitcommit.Change{Path: p, Steps: b.steps, Created: b.created, Mode: b.mode})
	}
	if len(changes) == 0 {
		// A batch whose commands changed nothing is not worth a word.
		return done("no file to commit", hookResult{quiet: true})
	}
	if err := s.folder.checkRepo(repo); err != nil {
		return done("the agent's change was not committed, it stays in the worktree: "+err.Error(), hookResult{warn: true})
	}
	trailer := cfg.Hooks.TrailerFor(cfg.Model.Name)
	repo.MaxFileBytes = cfg.Hooks.FileLimit()
	// The prompt is masked as everything shown is: a key the user pasted
	// into it never reaches the history.
	prompt := s.folder.host.redactor.String(job.prompt)
	plan, err := repo.Prepare(ctx, changes, func(files []string) string { return commitMessage(files, prompt, trailer) })
	if errors.Is(err, gitcommit.ErrInProgress) {
		return done("the agent's change was not committed, it stays in the worktree: "+strings.TrimPrefix(err.Error(), gitcommit.ErrInProgress.Error()+": "), hookResult{warn: true})
	}
	if err != nil {
		return done("the auto-commit failed, the changes stay in the worktree uncommitted: "+err.Error(), hookResult{failed: true})
	}
	var skipped []string
	for _, sk := range plan.Skipped {
		skipped = append(skipped, fmt.Sprintf("not committed: %s, because %s; the agent's change stays in the worktree", sk.Path, sk.Reason))
	}
	if len(plan.Entries) == 0 {
		return done("nothing committed", hookResult{warn: len(skipped) > 0, quiet: true, notes: skipped, modelNote: strings.Join(skipped, "; ")})
	}
	notes = append(notes, skipped...)
	hd := job.hooks
	if hd == nil {
		hd = s.approveHooks(ctx, repo, job)
	}
	if hd.note != "" {
		notes = append(notes, hd.note)
	}
	res, err := s.changes.CommitJournaled(ctx, repo, plan, hd.run, job.sandbox)
	if err != nil {
		return done("the auto-commit failed, the changes stay in the worktree uncommitted: "+err.Error(), hookResult{failed: true, notes: notes[len(base.notes):]})
	}
	notes = append(notes, indexNotes(res.Index)...)
	notes = append(notes, s.saveCommittedBuffers(ctx, job)...)
	subject, _, _ := strings.Cut(res.Message, "\n")
	// The model should know an edit it made is not in the commit.
	modelNote := strings.Join(skipped, "; ")
	return hookResult{
		action:    joinNotes(fmt.Sprintf("committed %s: %s", gitcommit.Short(res.SHA), subject), notes),
		commit:    res,
		changes:   reported,
		warn:      len(plan.Skipped) > 0,
		notes:     notes,
		modelNote: modelNote,
		indexLeft: res.Index.Locked,
		notice:    hd.notice,
	}
}

// editedAgain says which files an edit tool wrote and a command then
// changed again (a formatter): the commit holds the edit tool's text, the
// command's later change is left in the worktree.
func (s *Conversation) editedAgain(repo *gitcommit.Repo, job hookJob) []string {
	if len(job.cmds) == 0 {
		return nil
	}
	var again []string
	for _, p := range sortedKeys(job.batch) {
		steps := job.batch[p].steps
		if _, _, open := s.folder.host.overlay.Document(p); open {
			continue
		}
		if disk, err := os.ReadFile(p); err == nil && string(disk) != steps[len(steps)-1].New {
			rel, _ := repo.Rel(p)
			again = append(again, rel)
		}
	}
	if len(again) == 0 {
		return nil
	}
	return []string{"changed again by a command after the agent's edit; that later change is left uncommitted: " + strings.Join(again, ", ")}
}

// decideHooksEarly asks approveHooks' question before the commit is
// prepared (and the worktree locked). nil when there is nothing to
// commit or no repository: commitBatch decides.
func (s *Conversation) decideHooksEarly(ctx context.Context, job hookJob) *hooksDecision {
	if !job.cfg.Hooks.AutoCommit || len(job.batch) == 0 {
		return nil
	}
	repo, err := gitcommit.Open(ctx, s.folder.dir, job.cfg.Model.APIKeyEnv)
	if err != nil || s.folder.checkRepo(repo) != nil {
		return nil
	}
	return s.approveHooks(ctx, repo, job)
}

// hooksCommand is the command the user's git hooks belong to: an
// approval rule that allows it lets them run under tools.bash = "ask".
const hooksCommand = "git commit"

// approveHooks decides whether the user's git hooks run for a commit of
// the agent's change. They are commands that run programs of the
// worktree the agent may have shaped (a pre-commit hook's `make lint`
// runs the Makefile), so they run as the agent's commands would: under
// tools.bash = "allow", or "ask" with a rule allowing `git commit` or the
// user's yes, and then in the sandbox (job.sandbox); under "deny", or
// without a yes, the commit is made without them and the user is told,
// once per conversation, how to have them run.
func (s *Conversation) approveHooks(ctx context.Context, repo *gitcommit.Repo, job hookJob) *hooksDecision {
	if !repo.HasCommitHooks() {
		return &hooksDecision{}
	}
	var why string
	switch job.cfg.Tools.Bash {
	case config.PolicyAllow:
		return &hooksDecision{run: true}
	case config.PolicyAsk:
		ok, reason := s.askHooks(ctx, repo, job)
		if ok {
			return &hooksDecision{run: true}
		}
		why = reason
	default:
		why = `commands are off here (tools.bash = "deny")`
	}
	d := &hooksDecision{note: "your git hooks were not run for this commit (" + why + ")"}
	if s.git.hooksTold.CompareAndSwap(false, true) {
		d.notice = fmt.Sprintf("Your git hooks (in %s) did not run for loom's commit of the agent's change: %s. "+
			"Hooks run programs of the worktree the agent can change (a Makefile, package.json scripts, scripts/, %s), "+
			"so loom runs them only as it runs the agent's commands: with tools.bash = \"allow\", or under \"ask\" when you approve them "+
			"(or allow `%s` with a rule), and then inside the sandbox. The commit was made without them (as git commit --no-verify). "+
			"To run them on it now yourself, outside the sandbox: git hook run pre-commit. This is said once per conversation.",
			repo.HooksDir, why, strings.Join(hookFileNames, ", "), hooksCommand)
	}
	return d
}

// hookFileNames are the hook managers' files named in the notice.
var hookFileNames = []string{".husky/", ".pre-commit-config.yaml", "lefthook.yml"}

// askHooks asks the user, under tools.bash = "ask", whether their git
// hooks run (in the sandbox) for the agent's commit, unless a rule
// allows `git commit`. reason says why not.
func (s *Conversation) askHooks(ctx context.Context, repo *gitcommit.Repo, job hookJob) (ok bool, reason string) {
	dir := s.folder.dir
	cmd := cmdrules.Parse(hooksCommand, dir)
	rules, err := s.folder.host.ApprovalRules(dir)
	if err != nil {
		s.folder.log.Warn("approval rules unreadable; asking", "err", err)
	}
	if ok, _ := cmdrules.Match(rules, cmd, dir); ok {
		return true, ""
	}
	where := "in the sandbox"
	if job.sandbox == nil {
		where = `with your full permissions (tools.sandbox = "off")`
	}
	var touched []string
	for _, p := range job.agentFiles {
		if rel, ok := repo.Rel(p); ok {
			touched = append(touched, rel)
		}
	}
	detail := "run your git hooks (" + repo.HooksDir + ") " + where + " for loom's commit of the agent's change"
	if hf := dedupe(repo.HookFiles(touched)); len(hf) > 0 {
		detail += "; the agent changed " + strings.Join(hf, ", ") + ", which they execute"
	}
	a := Approval{Folder: dir, Turn: job.turn, Tool: "git hooks", Detail: detail}
	a.Exact, a.Prefix = cmdrules.Suggest(rules, cmd, dir)
	if a.Exact != nil {
		a.Remember = func(r cmdrules.Rule) error { return s.rememberRule(job.turn, r) }
	}
	ok, err = s.approve(ctx, a, job.cfg.Tools.ApprovalTimeout.Duration)
	switch {
	case err == nil && ok:
		return true, ""
	case err == nil:
		return false, "you did not approve them"
	case errors.Is(err, ErrUnsupported):
		return false, noAskWords
	}
	return false, `tools.bash = "ask" and nobody approved them: ` + err.Error()
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

// saveCommittedBuffers asks the editor to save the open documents
// whose text is exactly what the agent wrote (nobody typed since), so
// that the disk matches the commit. A document with the user's typing is
// left unsaved. With a client that cannot save, it returns the note the
// user must see: the commit holds the agent's text, the disk does not
// yet.
func (s *Conversation) saveCommittedBuffers(ctx context.Context, job hookJob) []string {
	var save []string
	for p, b := range job.batch {
		text, _, open := s.folder.host.overlay.Document(p)
		if open && text == b.steps[len(b.steps)-1].New && s.folder.host.overlay.Dirty(p) {
			save = append(save, p)
		}
	}
	if len(save) == 0 {
		return nil
	}
	sort.Strings(save)
	saved, err := s.folder.host.opts.Editor.SaveDocuments(ctx, save)
	if err != nil && !errors.Is(err, ErrUnsupported) {
		s.folder.log.Warn("saving documents failed", "err", err)
	}
	var unsaved []string
	for _, p := range save {
		if !slices.Contains(saved, p) && s.folder.host.overlay.Dirty(p) {
			unsaved = append(unsaved, p)
		}
	}
	if len(unsaved) == 0 {
		return nil
	}
	return []string{"saved in git, not yet on disk: save the file (" + strings.Join(relPaths(s.folder.dir, unsaved), ", ") + "); until then git diff shows the agent's change reversed"}
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
func (s *Conversation) retryIndex(turn uint64) {
	left := s.git.indexLeft
	if left == nil {
		return
	}
	s.git.indexLeft = nil
	scrub := s.cfg.Model.APIKeyEnv
	s.goWorker(func() {
		var text string
		kind := NoteInfo
		repo, err := gitcommit.Open(s.folder.life, left.top, scrub)
		if err != nil {
			return
		}
		rep := repo.SyncIndex(s.folder.life, left.entries, 500*time.Millisecond)
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
