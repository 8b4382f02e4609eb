package changes

import (
	"context"
	"fmt"
	"strings"

	"github.com/loom-lsp/loom-lsp/tools/sandbox"
	"github.com/loom-lsp/loom-lsp/workspace/gitcommit"
	"github.com/loom-lsp/loom-lsp/workspace/journal"
)

// CommitJournaled makes the commit, with its start (before anything is
// written to the branch) and its end journaled.
// The user's hooks, when they run, run in sb (nil: unsandboxed, as the
// user's commands are with tools.sandbox = "off").
func (t *Tree) CommitJournaled(ctx context.Context, repo *gitcommit.Repo, plan *gitcommit.Plan, runHooks bool, sb *sandbox.Sandbox) (*gitcommit.Result, error) {
	rec := &journal.CommitRecord{Plan: plan, RunHooks: runHooks}
	if err := t.conv.Do(ctx, func() {
		// One write(2): it survives the daemon's death (kill -9); the
		// journal is fsynced at the turn's end.
		t.conv.Journal(journal.Record{Type: "commit", Commit: rec})
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
	t.conv.Post(func() { t.conv.Journal(journal.Record{Type: "commit-end", Commit: end}) })
	return res, err
}

// ReportPendingCommit tells the user about a commit the daemon's death
// interrupted (found on resume), and keeps it for CommitPending.
func (t *Tree) ReportPendingCommit(rec *journal.CommitRecord) {
	if rec == nil || rec.Plan == nil {
		return
	}
	t.pending = rec
	t.conv.Tell(Note{Kind: Error, Text: fmt.Sprintf(
		"the agent's change to %s was not committed: the daemon stopped during the commit; run loom.commit to commit it now, or leave it uncommitted",
		strings.Join(rec.Plan.Files(), ", "))})
}

// CommitPending makes the commit the daemon's death interrupted
// (loom.commit), and returns what it did. When the commit was in fact
// made before the daemon died, it says so.
func (t *Tree) CommitPending(ctx context.Context) (string, error) {
	var rec *journal.CommitRecord
	var scrub string
	var sb *sandbox.Sandbox
	if err := t.conv.Do(ctx, func() { rec, scrub, sb = t.pending, t.conv.Scrub(), t.conv.Sandbox() }); err != nil {
		return "", err
	}
	if rec == nil {
		return "", ErrNoPendingCommit
	}
	repo, err := gitcommit.Open(ctx, rec.Plan.Top, scrub)
	if err != nil {
		return "", err
	}
	if err := t.checkRepo(repo); err != nil {
		return "", err
	}
	files := strings.Join(rec.Plan.Files(), ", ")
	var res *gitcommit.Result
	var msg string
	if done := repo.Committed(ctx, rec.Plan); done != "" {
		msg = fmt.Sprintf("the agent's change to %s was committed as %s before the daemon stopped", files, gitcommit.Short(done))
	} else {
		res, err = t.CommitJournaled(ctx, repo, rec.Plan, rec.RunHooks, sb)
		if err != nil {
			return "", fmt.Errorf("the agent's change to %s could not be committed: %w", files, err)
		}
		subject, _, _ := strings.Cut(res.Message, "\n")
		msg = fmt.Sprintf("committed %s: %s", gitcommit.Short(res.SHA), subject)
	}
	err = t.conv.Do(ctx, func() {
		t.pending = nil
		if res != nil {
			t.Log.Add(res, t.conv.Machine().State().Turn)
		}
		if res != nil {
			t.conv.Tell(Note{Kind: Commit, Commit: res, Text: msg})
		} else {
			t.conv.Tell(Note{Kind: Info, Text: msg})
		}
	})
	return msg, err
}
