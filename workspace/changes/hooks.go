package changes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/loom-lsp/loom-lsp/config"
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

// BatchFile is what the agent's edit tools did to one file in a batch.
type BatchFile struct {
	Steps   []gitcommit.Step
	Created bool
	Mode    fs.FileMode
}

// Job is what the hook's worker needs, copied on the owner goroutine.
type Job struct {
	Turn       uint64
	Batch      map[string]*BatchFile
	AgentFiles []string
	Prompt     string
	Cfg        config.Config
	// Commands says that commands ran in the batch.
	Commands bool
	// Sandbox is the sandbox the conversation's commands run in (nil:
	// tools.sandbox = "off"): the user's git hooks run in it.
	Sandbox *sandbox.Sandbox
	// Hooks is whether the user's git hooks run for the commit, decided
	// (the user asked) before the worktree lock is taken; nil: decided
	// under it.
	Hooks *HooksDecision
}

// HooksDecision is approveHooks' answer: whether the hooks run, and what
// to tell about it.
type HooksDecision struct {
	run  bool
	note string
	// notice is what the user must see once: their hooks were skipped.
	notice string
}

// Result is what the post-tool hook did.
type Result struct {
	Action string
	Failed bool
	// Warn shows Action as an error to the user without failing the
	// batch for the model (a merge in progress, a file left out).
	Warn   bool
	Commit *gitcommit.Result
	// Changes are the commands' changes, reported and not committed.
	Changes []CommandChange
	// Quiet marks a hook that found nothing to do and nothing to tell.
	Quiet bool
	// Notes are what the user must know besides the action (also joined
	// into Action); ModelNote what the model should know to act on it.
	Notes     []string
	ModelNote string
	// IndexLeft are the commit's index entries another git process kept
	// locked, for the index to follow once the lock is released.
	IndexLeft []gitcommit.Entry
	// Notice is shown to the user on its own (Visible), once: the git
	// hooks were skipped, and how to have them run.
	Notice string
}

// CommitBatch is the hook's work: commit the edit tools' texts, report
// the commands' changes. It returns what to do: the commit, when there is
// one to make, and the hook's result (Outcome.Hook, once applied).
func (t *Tree) CommitBatch(ctx context.Context, job Job, report func(*gitcommit.Repo) ([]CommandChange, []string)) Outcome {
	res, commit, after := t.commitBatch(ctx, job, report)
	if commit == nil {
		return Outcome{Hook: &res}
	}
	return Outcome{Commit: commit, After: func(d Done) (Outcome, error) {
		r := after(d.Committed, d.Err)
		return Outcome{Hook: &r}, nil
	}}
}

// commitBatch is CommitBatch's result when it commits nothing, else the
// commit to make and what gives the result once it is made.
func (t *Tree) commitBatch(ctx context.Context, job Job, report func(*gitcommit.Repo) ([]CommandChange, []string)) (Result, *CommitPlan, func(*gitcommit.Result, error) Result) {
	cfg := job.Cfg
	repo, err := gitcommit.Open(ctx, t.dir, cfg.Model.APIKeyEnv)
	if err != nil {
		return Result{Action: "not a git repository: changes left uncommitted"}, nil, nil
	}
	reported, yours := report(repo)
	keep, discard := t.deps.KeepHow, t.deps.DiscardHow
	notes := commandNotes(reported, yours, keep, discard)
	notes = append(notes, t.editedAgain(repo, job)...)
	base := Result{Changes: reported, Notes: notes}
	// done finishes a result that commits nothing.
	done := func(action string, r Result) Result {
		r.Changes = base.Changes
		r.Notes = append(append([]string(nil), notes...), r.Notes...)
		r.Action = joinNotes(action, r.Notes)
		r.Quiet = r.Quiet && len(r.Notes) == 0
		return r
	}
	if !cfg.Hooks.AutoCommit {
		return done("auto-commit is off (hooks.auto_commit = false): changes left uncommitted", Result{}), nil, nil
	}
	var changes []gitcommit.Change
	for _, p := range slices.Sorted(maps.Keys(job.Batch)) {
		b := job.Batch[p]
		changes = append(changes, gitcommit.Change{Path: p, Steps: b.Steps, Created: b.Created, Mode: b.Mode})
	}
	if len(changes) == 0 {
		// A batch whose commands changed nothing is not worth a word.
		return done("no file to commit", Result{Quiet: true}), nil, nil
	}
	if err := t.checkRepo(repo); err != nil {
		return done("the agent's change was not committed, it stays in the worktree: "+err.Error(), Result{Warn: true}), nil, nil
	}
	trailer := cfg.Hooks.TrailerFor(cfg.Model.Name)
	repo.MaxFileBytes = cfg.Hooks.FileLimit()
	// The prompt is masked as everything shown is: a key the user pasted
	// into it never reaches the history.
	prompt := t.redact(job.Prompt)
	plan, err := repo.Prepare(ctx, changes, func(files []string) string { return commitMessage(files, prompt, trailer) })
	if errors.Is(err, gitcommit.ErrInProgress) {
		return done("the agent's change was not committed, it stays in the worktree: "+strings.TrimPrefix(err.Error(), gitcommit.ErrInProgress.Error()+": "), Result{Warn: true}), nil, nil
	}
	if err != nil {
		return done("the auto-commit failed, the changes stay in the worktree uncommitted: "+err.Error(), Result{Failed: true}), nil, nil
	}
	var skipped []string
	for _, sk := range plan.Skipped {
		skipped = append(skipped, fmt.Sprintf("not committed: %s, because %s; the agent's change stays in the worktree", sk.Path, sk.Reason))
	}
	if len(plan.Entries) == 0 {
		return done("nothing committed", Result{Warn: len(skipped) > 0, Quiet: true, Notes: skipped, ModelNote: strings.Join(skipped, "; ")}), nil, nil
	}
	notes = append(notes, skipped...)
	hd := job.Hooks
	if hd == nil {
		hd = t.approveHooks(ctx, repo, job)
	}
	if hd.note != "" {
		notes = append(notes, hd.note)
	}
	commit := &CommitPlan{Repo: repo, Plan: plan, RunHooks: hd.run, Sandbox: job.Sandbox}
	return Result{}, commit, func(res *gitcommit.Result, err error) Result {
		if err != nil {
			return done("the auto-commit failed, the changes stay in the worktree uncommitted: "+err.Error(), Result{Failed: true, Notes: notes[len(base.Notes):]})
		}
		notes = append(notes, IndexNotes(res.Index)...)
		notes = append(notes, t.saveCommittedBuffers(ctx, job)...)
		subject, _, _ := strings.Cut(res.Message, "\n")
		// The model should know an edit it made is not in the commit.
		modelNote := strings.Join(skipped, "; ")
		return Result{
			Action:    joinNotes(fmt.Sprintf("committed %s: %s", gitcommit.Short(res.SHA), subject), notes),
			Commit:    res,
			Changes:   reported,
			Warn:      len(plan.Skipped) > 0,
			Notes:     notes,
			ModelNote: modelNote,
			IndexLeft: res.Index.Locked,
			Notice:    hd.notice,
		}
	}
}

// editedAgain says which files an edit tool wrote and a command then
// changed again (a formatter): the commit holds the edit tool's text, the
// command's later change is left in the worktree.
func (t *Tree) editedAgain(repo *gitcommit.Repo, job Job) []string {
	if !job.Commands {
		return nil
	}
	var again []string
	for _, p := range slices.Sorted(maps.Keys(job.Batch)) {
		steps := job.Batch[p].Steps
		if _, open := t.ed.Document(p); open {
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
func (t *Tree) DecideHooksEarly(ctx context.Context, job Job) *HooksDecision {
	if !job.Cfg.Hooks.AutoCommit || len(job.Batch) == 0 {
		return nil
	}
	repo, err := gitcommit.Open(ctx, t.dir, job.Cfg.Model.APIKeyEnv)
	if err != nil || t.checkRepo(repo) != nil {
		return nil
	}
	return t.approveHooks(ctx, repo, job)
}

// HooksCommand is the command the user's git hooks belong to: an
// approval rule that allows it lets them run under tools.bash = "ask".
const HooksCommand = "git commit"

// approveHooks decides whether the user's git hooks run for a commit of
// the agent's change. They are commands that run programs of the
// worktree the agent may have shaped (a pre-commit hook's `make lint`
// runs the Makefile), so they run as the agent's commands would: under
// tools.bash = "allow", or "ask" with a rule allowing `git commit` or the
// user's yes, and then in the sandbox (job.Sandbox); under "deny", or
// without a yes, the commit is made without them and the user is told,
// once per conversation, how to have them run.
func (t *Tree) approveHooks(ctx context.Context, repo *gitcommit.Repo, job Job) *HooksDecision {
	if !repo.HasCommitHooks() {
		return &HooksDecision{}
	}
	var why string
	switch job.Cfg.Tools.Bash {
	case config.PolicyAllow:
		return &HooksDecision{run: true}
	case config.PolicyAsk:
		ok, reason := t.conv.AskHooks(ctx, repo, job)
		if ok {
			return &HooksDecision{run: true}
		}
		why = reason
	default:
		why = `commands are off here (tools.bash = "deny")`
	}
	d := &HooksDecision{note: "your git hooks were not run for this commit (" + why + ")"}
	if t.hooksTold.CompareAndSwap(false, true) {
		d.notice = fmt.Sprintf("Your git hooks (in %s) did not run for loom's commit of the agent's change: %s. "+
			"Hooks run programs of the worktree the agent can change (a Makefile, package.json scripts, scripts/, %s), "+
			"so loom runs them only as it runs the agent's commands: with tools.bash = \"allow\", or under \"ask\" when you approve them "+
			"(or allow `%s` with a rule), and then inside the sandbox. The commit was made without them (as git commit --no-verify). "+
			"To run them on it now yourself, outside the sandbox: git hook run pre-commit. This is said once per conversation.",
			repo.HooksDir, why, strings.Join(hookFileNames, ", "), HooksCommand)
	}
	return d
}

// hookFileNames are the hook managers' files named in the notice.
var hookFileNames = []string{".husky/", ".pre-commit-config.yaml", "lefthook.yml"}

// saveCommittedBuffers asks the editor to save the open documents
// whose text is exactly what the agent wrote (nobody typed since), so
// that the disk matches the commit. A document with the user's typing is
// left unsaved. With a client that cannot save, it returns the note the
// user must see: the commit holds the agent's text, the disk does not
// yet.
func (t *Tree) saveCommittedBuffers(ctx context.Context, job Job) []string {
	var save []string
	for p, b := range job.Batch {
		text, open := t.ed.Document(p)
		if open && text == b.Steps[len(b.Steps)-1].New && t.ed.Dirty(p) {
			save = append(save, p)
		}
	}
	if len(save) == 0 {
		return nil
	}
	sort.Strings(save)
	saved := t.ed.SaveDocuments(ctx, save)
	var unsaved []string
	for _, p := range save {
		if !slices.Contains(saved, p) && t.ed.Dirty(p) {
			unsaved = append(unsaved, p)
		}
	}
	if len(unsaved) == 0 {
		return nil
	}
	return []string{"saved in git, not yet on disk: save the file (" + strings.Join(RelPaths(t.dir, unsaved), ", ") + "); until then git diff shows the agent's change reversed"}
}

// IndexNotes says how the user's index followed the commit, when it did
// not simply move to it.
func IndexNotes(rep gitcommit.IndexReport) []string {
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
		notes = append(notes, fmt.Sprintf("the commit is made, but another git process holds the index lock (.git/index.lock), so git's index still has the old %s: git status shows the agent's change there as staged-reverted, and a plain git commit now would revert it; loom updates it as soon as that lock is released (or run git reset -q -- %s once the other git command is done)", strings.Join(files, ", "), list))
	}
	return notes
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
		request = CutRunes(request, 200)
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

// CutRunes shortens s to at most n bytes of whole runes, marking a cut
// with "…".
func CutRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// isBinary reports whether text looks binary (a NUL in its first 8000
// bytes, as git decides).
func isBinary(text string) bool {
	return bytes.IndexByte([]byte(text[:min(len(text), 8000)]), 0) >= 0
}

// Recorded keeps the commit of the hook's res for loom.undo (of turn,
// the conversation's); on the conversation's goroutine.
func (t *Tree) Recorded(res Result, turn uint64) {
	if res.Commit != nil {
		t.Log.Add(res.Commit, turn)
	}
}
