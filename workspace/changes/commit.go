package changes

import (
	"context"
	"fmt"
	"strings"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/tools/sandbox"
	"github.com/loom-lsp/loom-lsp/workspace/gitcommit"
	"github.com/loom-lsp/loom-lsp/workspace/journal"
)

// ReportPendingCommit keeps a commit the daemon's death interrupted
// (found on resume, on the conversation's goroutine) for CommitPending,
// and returns what to tell the user.
func (t *Tree) ReportPendingCommit(rec *journal.CommitRecord) Outcome {
	if rec == nil || rec.Plan == nil {
		return Outcome{}
	}
	t.pending = rec
	return Outcome{Notes: []Note{{Kind: Error, Text: fmt.Sprintf(
		"the agent's change to %s was not committed: the daemon stopped during the commit; run loom.commit to commit it now, or leave it uncommitted",
		strings.Join(rec.Plan.Files(), ", "))}}}
}

// CommitPending makes the commit the daemon's death interrupted
// (loom.commit): it returns what to do (the commit, journaled; the user
// told). When the commit was in fact made before the daemon died, it
// says so.
func (t *Tree) CommitPending(ctx context.Context) (Outcome, error) {
	var rec *journal.CommitRecord
	var scrub string
	var sb *sandbox.Sandbox
	if err := t.conv.Read(ctx, func(v View) { rec, scrub, sb = t.pending, v.Scrub, v.Sandbox }); err != nil {
		return Outcome{}, err
	}
	if rec == nil {
		return Outcome{}, ErrNoPendingCommit
	}
	repo, err := gitcommit.Open(ctx, rec.Plan.Top, scrub)
	if err != nil {
		return Outcome{}, err
	}
	if err := t.checkRepo(repo); err != nil {
		return Outcome{}, err
	}
	files := strings.Join(rec.Plan.Files(), ", ")
	if done := repo.Committed(ctx, rec.Plan); done != "" {
		msg := fmt.Sprintf("the agent's change to %s was committed as %s before the daemon stopped", files, gitcommit.Short(done))
		return Outcome{
			Then:    func(View, []fsm.Action) { t.pending = nil },
			Notes:   []Note{{Kind: Info, Text: msg}},
			Message: msg,
		}, nil
	}
	return Outcome{
		Commit: &CommitPlan{Repo: repo, Plan: rec.Plan, RunHooks: rec.RunHooks, Sandbox: sb},
		After: func(d Done) (Outcome, error) {
			if d.Err != nil {
				return Outcome{}, fmt.Errorf("the agent's change to %s could not be committed: %w", files, d.Err)
			}
			res := d.Committed
			subject, _, _ := strings.Cut(res.Message, "\n")
			msg := fmt.Sprintf("committed %s: %s", gitcommit.Short(res.SHA), subject)
			return Outcome{
				Then: func(v View, _ []fsm.Action) {
					t.pending = nil
					t.Log.Add(res, v.Machine.State().Turn)
				},
				Notes:   []Note{{Kind: Commit, Commit: res, Text: msg}},
				Message: msg,
			}, nil
		},
	}, nil
}
