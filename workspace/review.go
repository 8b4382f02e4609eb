package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/workspace/changes"
	"github.com/loom-lsp/loom-lsp/workspace/gitcommit"
	"github.com/loom-lsp/loom-lsp/workspace/toolcall"
)

// Under tools.edits = "review" an edit tool's change, or the text files a
// command changed, are proposed, not applied: the user decides per hunk.
// The proposals' bookkeeping is the conversation's changes.Review (the
// proposals, their decisions, the file that keeps them for the next
// daemon); what is here is the glue: proposing from the tools' workers
// while the turn is live, what a command's review takes out of the hook's
// report, the batch that goes on after a resumed review, and what the
// conversation lends the review through treePort.
//
// A command's changes join the review list (fsm.ChangesProposed, kind
// command): after a bash call, the text files it changed are proposed
// with their hunks (the command's bytes only, from the files as they were
// just before it), and the call waits for the decision like an edit's.
// The command already wrote them, so the decision is keep or discard:
// accepted hunks stay and are committed by the post-tool hook like an
// edit's (only those bytes); rejected hunks are taken back off the disk,
// by a three-way merge that keeps what the user typed since. The model
// reads the command's output, then the decision. Files that cannot be
// hunked (binary, too large, deleted), every command under tools.edits =
// "auto", and the proposed files of a turn cancelled before the decision
// are reported as before (loom/commandChanges: keep with loom.commit,
// discard with loom.discard).

// Review is the conversation's review of proposals: the user's decisions
// (Decide, Unreviewed), the proposals waiting (Proposals) and what the
// user decided so far (SetDraft).
func (s *Conversation) Review() *changes.Review { return s.review }

// awaitReview proposes what a call computed under review and waits until
// the call is settled (applied or rejected) or the turn is gone, so that
// the batch's next mutating call sees the file as the decision left it.
func (r callRun) awaitReview(ctx context.Context, propose func() *changes.Proposal) {
	if p := r.proposeLive(ctx, propose); p != nil {
		r.s.review.AwaitSettled(ctx, []*changes.Proposal{p})
	}
}

// proposeLive runs propose on the owner goroutine while the turn is live
// and returns the proposal it made, nil when none (or the turn is gone).
func (r callRun) proposeLive(ctx context.Context, propose func() *changes.Proposal) *changes.Proposal {
	s := r.s
	taken := make(chan *changes.Proposal, 1)
	s.loop.postLive(ctx, func() { taken <- propose() })
	select {
	case p := <-taken:
		return p
	case <-ctx.Done():
		return nil
	case <-s.loop.done:
		return nil
	}
}

// commandProposal works out the review of what run changed (on the
// tool's worker): nil when nothing can be reviewed. The other files of
// run stay in it, for the hook's report.
func (r callRun) commandProposal(ctx context.Context, run *commandRun, output string) *changes.CommandReview {
	s, b := r.s, r.b
	if run == nil || len(run.paths) == 0 {
		return nil
	}
	repo, err := gitcommit.Open(ctx, s.folder.dir, b.env.ScrubEnv...)
	if err != nil {
		return nil
	}
	cfg := s.changes.Config(ctx)
	reported, _ := reportCommands(ctx, repo, hookJob{Job: changes.Job{Cfg: cfg}, cmds: []commandRun{*run}}, b.turn)
	return changes.NewCommandReview(run.command, output, reported)
}

// proposeCommand proposes cr, the changes of run (on the owner
// goroutine), and returns the proposal, or nil when the machine did not
// take it: the command then completes as under auto. The proposed files
// leave run, so that the hook does not report them again.
func (r callRun) proposeCommand(turn uint64, callID string, run *commandRun, cr *changes.CommandReview) *changes.Proposal {
	s := r.s
	p := s.review.ProposeCommand(turn, callID, cr)
	if p == nil {
		s.git.cmds = append(s.git.cmds, *run)
		s.cards.outputs[callID] = toolOutput{text: cr.Output()}
		s.step(fsm.ToolCompleted{Turn: turn, CallID: callID, Result: cr.Output()})
		return nil
	}
	rest := *run
	rest.paths = slices.DeleteFunc(slices.Clone(run.paths), cr.Proposes)
	s.git.cmds = append(s.git.cmds, rest)
	return p
}

// resumeReviews takes up again the turn the journal at path ends in when
// it waits for the user's review of proposals kept beside it
// (changes.Review.Resume): the calls of the batch that had not run yet
// run after the decisions. It reports false, changing nothing, when it
// cannot.
func (s *Conversation) resumeReviews(path string) bool {
	waiting, rest, ok := s.review.Resume(path)
	if !ok {
		return false
	}
	st := s.m.State()
	ctx := s.turn.context()
	s.turnPrompt = lastPrompt(s.m.Messages())
	s.git.newBatch()
	s.turnTimes[st.Turn] = time.Now()
	if len(rest.Calls) > 0 {
		batch := s.newBatch(rest)
		s.loop.goWorker(func() {
			s.review.AwaitSettled(ctx, waiting)
			if ctx.Err() == nil {
				batch.Run(ctx)
			}
		})
	}
	s.out.notify(Notification{Kind: NoteInfo, Turn: st.Turn, Text: fmt.Sprintf("%s still %s for your review (kept while loom-lsp restarted)",
		plural(len(waiting), "change"), map[bool]string{true: "waits", false: "wait"}[len(waiting) == 1])})
	return true
}

// lastPrompt is the text of the last user message of msgs.
func lastPrompt(msgs []fsm.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == fsm.RoleUser {
			return msgs[i].Content
		}
	}
	return ""
}

// reviewPort is what the conversation lends its changes.Review
// (changes.ReviewConversation): its goroutine, machine, journal path,
// user and the calls the review completes.
type reviewPort struct{ s *Conversation }

func (p reviewPort) Go(f func())                  { p.s.loop.goWorker(f) }
func (p reviewPort) TurnContext() context.Context { return p.s.turn.context() }
func (p reviewPort) JournalPath() string          { return p.s.ident.journal() }
func (p reviewPort) Warn(msg string, err error)   { p.s.folder.log.Warn(msg, "err", err) }

func (p reviewPort) Wait(ctx context.Context, ready <-chan struct{}) error {
	select {
	case <-ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-p.s.loop.done:
		return ErrClosed
	}
}

// Complete records what a decision made of its call (the edit landed, for
// the hook and the card; a command's kept bytes, for the hook) and
// completes the call.
func (p reviewPort) Complete(c changes.Completion) {
	s := p.s
	if e := c.Edit; e != nil {
		s.git.recordEdit(e.Path, e.OldText, e.NewText, e.Created, e.Mode)
		s.cards.diffs[c.CallID] = e.Diff
		s.cards.edits[c.CallID] = &EditNote{Path: e.Path, OldText: e.OldText, NewText: e.NewText, Created: e.Created}
	}
	for _, k := range c.Kept {
		s.git.recordEdit(k.Path, k.Before, k.After, k.Created, k.Mode)
	}
	s.cards.outputs[c.CallID] = toolOutput{text: c.Result}
	if len(c.Hooks) > 0 {
		s.step(fsm.HooksDecided{Turn: c.Turn, Event: fsm.HookPostToolUse, CallID: c.CallID, Hooks: c.Hooks})
	}
	s.step(fsm.ToolCompleted{Turn: c.Turn, CallID: c.CallID, Result: c.Result, IsError: c.IsError})
}

// PostToolHooks runs the PostToolUse hooks of a call the user's review
// decision ran, with the input as accepted (on a worker).
func (p reviewPort) PostToolHooks(ctx context.Context, r changes.Ran) []fsm.HookReport {
	c := r.Call
	if r.Edit != nil {
		c = acceptedCall(c, r.Edit, r.Whole)
	}
	return callRun{s: p.s}.PostToolUse(ctx, c, toolcall.Outcome{Result: r.Result, IsError: r.IsError})
}

// CurrentText is the file's text as the user sees it now: the open
// buffer, else the editor's document store (asked for call callID), else
// the disk.
func (p treePort) CurrentText(ctx context.Context, callID, path string) (text string, exists bool, err error) {
	s := p.s
	if text, _, open := s.folder.host.overlay.Document(path); open {
		return text, true, nil
	}
	if store, ok := s.folder.host.opts.Editor.(DocumentStore); ok {
		text, err := store.ReadDocument(ctx, s.caller(callID), path)
		if err == nil {
			return text, true, nil
		}
		if !errors.Is(err, ErrUnsupported) && !errors.Is(err, fs.ErrNotExist) {
			return "", false, err
		}
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	return string(b), err == nil, err
}
