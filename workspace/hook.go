package workspace

import (
	"context"
	"errors"
	"io/fs"
	"sort"
	"strings"
	"sync"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/tools/cmdrules"
	"github.com/loom-lsp/loom-lsp/workspace/changes"
	"github.com/loom-lsp/loom-lsp/workspace/gitcommit"
)

// gitState is what a session keeps for the auto-commit. It is owned by
// the session's goroutine.
type gitState struct {
	// batch holds the current tool batch's edits, by absolute path.
	batch map[string]*changes.BatchFile
	// cmds are the batch's commands and the files they changed.
	cmds []commandRun
	// agentFiles are the files the agent's tools changed in this session.
	agentFiles map[string]bool
	// lock serialises what writes the worktree for the session (used
	// from any goroutine): a batch's mutating calls and its hook, and an
	// undo, so that an undo never races the agent's next edit.
	lock *sync.Mutex // the folder's: its conversations write one worktree
	// idle are undos waiting for the turn in flight to end.
	idle []chan bool
}

// hookJob is what the hook's worker needs, copied on the owner
// goroutine: the commit's job, and the batch's commands, whose changes
// are reported (reportCommands).
type hookJob struct {
	changes.Job
	cmds []commandRun
}

// newBatch forgets the previous batch's edits.
func (g *gitState) newBatch() {
	g.batch = nil
	g.cmds = nil
}

// recordEdit records one applied edit of an edit tool.
func (g *gitState) recordEdit(path, before, after string, created bool, mode fs.FileMode) {
	if g.batch == nil {
		g.batch = map[string]*changes.BatchFile{}
	}
	if g.agentFiles == nil {
		g.agentFiles = map[string]bool{}
	}
	g.agentFiles[path] = true
	b := g.batch[path]
	if b == nil {
		b = &changes.BatchFile{Created: created, Mode: mode}
		g.batch[path] = b
	}
	b.Steps = append(b.Steps, gitcommit.Step{Old: before, New: after})
}

// takeBatch hands the batch to the hook and starts a new one.
func (g *gitState) takeBatch(prompt string, cfg config.Config) hookJob {
	job := hookJob{Job: changes.Job{Batch: g.batch, Prompt: prompt, Cfg: cfg, Commands: len(g.cmds) > 0}, cmds: g.cmds}
	for p := range g.agentFiles {
		job.AgentFiles = append(job.AgentFiles, p)
	}
	g.newBatch()
	return job
}

// runHook runs the post-tool hook on a worker goroutine and reports
// PostToolsHookCompleted.
func (s *Conversation) runHook(ctx context.Context, a fsm.RunPostToolsHook, job hookJob) {
	// A cancelled turn does not cut a commit short (that could leave the
	// repository locked); only the session's shutdown does. The user is
	// asked about their git hooks, if at all, before the worktree lock is
	// taken: the folder's other conversations go on meanwhile.
	job.Hooks = s.changes.DecideHooksEarly(s.folder.life, job.Job)
	s.git.lock.Lock()
	res := s.verbs.commitBatch(s.folder.life, job.Job, func(repo *gitcommit.Repo) ([]CommandChange, []string) {
		return reportCommands(s.folder.life, repo, job, job.Turn)
	})
	s.git.lock.Unlock()
	s.loop.post(func() {
		s.changes.Recorded(res, s.m.State().Turn)
		s.leaveIndex(res.IndexLeft)
		if len(res.Changes) > 0 {
			s.changes.AddChanges(res.Changes)
			s.out.notify(Notification{Kind: NoteCommandChanges, Turn: a.Turn, Changes: res.Changes})
		}
		if res.Commit != nil {
			// Even for a cancelled turn: the commit exists, the user must
			// know (and loom.undo can take it back).
			note := commitNote(res.Commit)
			note.Notes = res.Notes
			s.out.notify(Notification{Kind: NoteCommit, Turn: a.Turn, Commit: note, Text: res.Action})
		}
		if res.Notice != "" {
			s.out.notify(Notification{Kind: NoteInfo, Turn: a.Turn, Text: res.Notice, Visible: true})
		}
		if ctx.Err() != nil {
			return
		}
		switch {
		case res.Commit != nil:
		case res.Failed, res.Warn:
			s.out.notify(Notification{Kind: NoteError, Turn: a.Turn, Text: res.Action})
		case res.Quiet:
		default:
			s.out.notify(Notification{Kind: NoteInfo, Turn: a.Turn, Text: res.Action, Visible: len(res.Notes) > 0})
		}
		s.step(fsm.PostToolsHookCompleted{Turn: a.Turn, ActionTaken: res.Action, Failed: res.Failed, Note: res.ModelNote})
	})
}

func commitNote(c *gitcommit.Result) *CommitNote {
	return &CommitNote{SHA: c.SHA, Files: c.Files, Message: c.Message}
}

// AskHooks asks the user, under tools.bash = "ask", whether their git
// hooks run (in the sandbox) for the agent's commit, unless a rule
// allows `git commit`. reason says why not.
func (p treePort) AskHooks(ctx context.Context, repo *gitcommit.Repo, job changes.Job) (ok bool, reason string) {
	s := p.s
	dir := s.folder.dir
	cmd := cmdrules.Parse(changes.HooksCommand, dir)
	rules, err := s.folder.host.Rules().Commands(dir)
	if err != nil {
		s.folder.log.Warn("approval rules unreadable; asking", "err", err)
	}
	if ok, _ := cmdrules.Match(rules, cmd, dir); ok {
		return true, ""
	}
	where := "in the sandbox"
	if job.Sandbox == nil {
		where = `with your full permissions (tools.sandbox = "off")`
	}
	var touched []string
	for _, p := range job.AgentFiles {
		if rel, ok := repo.Rel(p); ok {
			touched = append(touched, rel)
		}
	}
	detail := "run your git hooks (" + repo.HooksDir + ") " + where + " for loom's commit of the agent's change"
	if hf := dedupe(repo.HookFiles(touched)); len(hf) > 0 {
		detail += "; the agent changed " + strings.Join(hf, ", ") + ", which they execute"
	}
	a := Approval{Folder: dir, Turn: job.Turn, Tool: "git hooks", Detail: detail}
	a.Exact, a.Prefix = cmdrules.Suggest(rules, cmd, dir)
	if a.Exact != nil {
		a.Remember = func(r cmdrules.Rule) error { return callRun{s: s}.rememberRule(job.Turn, r) }
	}
	ok, err = s.out.approve(ctx, a, job.Cfg.Tools.ApprovalTimeout.Duration)
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
