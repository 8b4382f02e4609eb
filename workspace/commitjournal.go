package workspace

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/loom-lsp/loom-lsp/tools/sandbox"
	"github.com/loom-lsp/loom-lsp/workspace/gitcommit"
	"github.com/loom-lsp/loom-lsp/workspace/journal"
)

// ErrNoPendingCommit is returned by CommitPending when no commit was
// interrupted.
var ErrNoPendingCommit = errors.New("no interrupted commit to complete")

// commitJournaled makes the commit, with its start (before anything is
// written to the branch) and its end journaled.
// The user's hooks, when they run, run in sb (nil: unsandboxed, as the
// user's commands are with tools.sandbox = "off").
func (s *Conversation) commitJournaled(ctx context.Context, repo *gitcommit.Repo, plan *gitcommit.Plan, runHooks bool, sb *sandbox.Sandbox) (*gitcommit.Result, error) {
	rec := &journal.CommitRecord{Plan: plan, RunHooks: runHooks}
	if err := s.call(ctx, func() {
		// One write(2): it survives the daemon's death (kill -9); the
		// journal is fsynced at the turn's end.
		s.writeJournal(func(j *journal.File) error { return j.AppendCommit("commit", rec) })
	}); err != nil {
		plan.Discard()
		return nil, err
	}
	opts := gitcommit.CommitOptions{RunHooks: runHooks}
	if sb != nil {
		opts.Wrap = sb.Wrap
	}
	res, err := repo.Commit(ctx, plan, opts)
	end := &journal.CommitRecord{}
	if res != nil {
		end.SHA = res.SHA
	}
	if err != nil {
		end.Error = err.Error()
	}
	s.post(func() { s.writeJournal(func(j *journal.File) error { return j.AppendCommit("commit-end", end) }) })
	return res, err
}

// reportPendingCommit tells the user about a commit the daemon's death
// interrupted (found on resume), and keeps it for CommitPending.
func (s *Conversation) reportPendingCommit(rec *journal.CommitRecord) {
	if rec == nil || rec.Plan == nil {
		return
	}
	s.git.pending = rec
	s.notify(Notification{Kind: NoteError, Text: fmt.Sprintf(
		"the agent's change to %s was not committed: the daemon stopped during the commit; run loom.commit to commit it now, or leave it uncommitted",
		strings.Join(rec.Plan.Files(), ", "))})
}

// CommitPending makes the commit the daemon's death interrupted
// (loom.commit), and returns what it did. When the commit was in fact
// made before the daemon died, it says so.
func (s *Conversation) CommitPending(ctx context.Context) (string, error) {
	var rec *journal.CommitRecord
	var scrub string
	var sb *sandbox.Sandbox
	if err := s.call(ctx, func() { rec, scrub, sb = s.git.pending, s.cfg.Model.APIKeyEnv, s.env.Sandbox }); err != nil {
		return "", err
	}
	if rec == nil {
		return "", ErrNoPendingCommit
	}
	repo, err := gitcommit.Open(ctx, rec.Plan.Top, scrub)
	if err != nil {
		return "", err
	}
	if err := s.folder.checkRepo(repo); err != nil {
		return "", err
	}
	files := strings.Join(rec.Plan.Files(), ", ")
	var res *gitcommit.Result
	var msg string
	if done := repo.Committed(ctx, rec.Plan); done != "" {
		msg = fmt.Sprintf("the agent's change to %s was committed as %s before the daemon stopped", files, gitcommit.Short(done))
	} else {
		res, err = s.commitJournaled(ctx, repo, rec.Plan, rec.RunHooks, sb)
		if err != nil {
			return "", fmt.Errorf("the agent's change to %s could not be committed: %w", files, err)
		}
		subject, _, _ := strings.Cut(res.Message, "\n")
		msg = fmt.Sprintf("committed %s: %s", gitcommit.Short(res.SHA), subject)
	}
	err = s.call(ctx, func() {
		s.git.pending = nil
		s.recordCommit(hookResult{commit: res})
		if res != nil {
			s.notify(Notification{Kind: NoteCommit, Commit: commitNote(res), Text: msg})
		} else {
			s.notify(Notification{Kind: NoteInfo, Text: msg})
		}
	})
	return msg, err
}
