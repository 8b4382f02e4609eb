package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/workspace/changes"
	"github.com/loom-lsp/loom-lsp/workspace/review"
)

// Under tools.edits = "review" an edit tool's change is proposed, not
// applied (fsm.ChangesProposed): the user decides per hunk with Review,
// and only the accepted hunks are then applied, three-way over whatever
// the user typed meanwhile, and committed like any edit.

// ErrNoProposal is wrapped by Review's error when no proposal of that id
// waits for the user.
var ErrNoProposal = errors.New("no such proposal waiting for review")

// ProposalNote is a proposal waiting for the user's review (NoteProposal).
type ProposalNote struct {
	ID     string
	CallID string
	// Changes are the proposed files; their Path is relative to the
	// folder, and Abs[i] is the absolute path of Changes[i].
	Changes []fsm.FileChange
	Abs     []string
	// OldText and NewText are the file's text the change was computed
	// from and the agent's text (one file per proposal).
	OldText, NewText string
	// Created marks a file the change creates.
	Created bool
	// Command is set for a command's changes (kind command; already on
	// disk: accept keeps, reject discards); OldTexts and NewTexts are
	// then each file's text before and after the command, as Abs.
	Command            string
	OldTexts, NewTexts []string
	// Draft is what the user decided so far, nil when nothing.
	Draft *ReviewDraft
}

// ReviewResult is what a review decision did.
type ReviewResult = changes.ReviewResult

// AllHunks, as the only element of Review's accept or reject, stands for
// every hunk of the proposal.
const AllHunks = "all"

// proposal is a proposed edit, owned by the owner goroutine.
type proposal struct {
	id     string // "" until the machine named it (ProposeChanges)
	callID string
	edit   *tools.Edit
	change *review.Change
	// cmd is set instead of edit and change for a command's changes.
	cmd *commandReview
	// settled is closed once the call is completed (applied or
	// rejected): the batch's next mutating call may run.
	settled chan struct{}
	// outcome receives the decision's result once applied or rejected.
	outcome chan reviewOutcome
	// draft is what the user decided so far and the comment typed, kept
	// for a client that reconnects (SetReviewDraft).
	draft ReviewDraft
}

type reviewOutcome struct {
	res ReviewResult
	err error
}

// propose turns an edit computed under review into a proposal: it
// records it, steps ChangesProposed and returns the proposal, or nil when
// the machine did not take it (the turn is gone).
func (s *Conversation) propose(turn uint64, callID string, e *tools.Edit) *proposal {
	ch := review.Split(e.RelPath, e.OldText, e.NewText, e.Created, 1)
	if len(ch.File.Hunks) == 0 {
		return nil
	}
	p := &proposal{callID: callID, edit: e, change: ch, settled: make(chan struct{}), outcome: make(chan reviewOutcome, 1)}
	s.proposed[callID] = p
	if _, err := s.step(fsm.ChangesProposed{Turn: turn, CallID: callID, Changes: []fsm.FileChange{ch.File}}); err != nil {
		delete(s.proposed, callID)
		return nil
	}
	return p
}

// onProposeChanges performs fsm.ProposeChanges: the proposal gets its id
// and is shown to the user.
func (s *Conversation) onProposeChanges(a fsm.ProposeChanges) {
	p := s.proposed[a.CallID]
	delete(s.proposed, a.CallID)
	if p == nil {
		return
	}
	p.id = a.ID
	s.proposals[a.ID] = p
	s.saveReviews()
	s.notify(Notification{Kind: NoteProposal, Turn: a.Turn, Proposal: p.note()})
}

func (p *proposal) note() *ProposalNote {
	var n *ProposalNote
	if p.cmd != nil {
		n = &ProposalNote{ID: p.id, CallID: p.callID, Command: p.cmd.command}
		n.Changes, n.Abs, n.OldTexts, n.NewTexts = p.cmd.noteFiles()
	} else {
		n = &ProposalNote{ID: p.id, CallID: p.callID, Changes: []fsm.FileChange{p.change.File}, Abs: []string{p.edit.Path},
			OldText: p.edit.OldText, NewText: p.edit.NewText, Created: p.edit.Created}
	}
	if !p.draft.empty() {
		d := p.draft
		n.Draft = &d
	}
	return n
}

// Proposals returns the proposals waiting for the user, oldest first.
func (s *Conversation) Proposals(ctx context.Context) ([]ProposalNote, error) {
	var out []ProposalNote
	err := s.call(ctx, func() {
		for _, id := range s.m.PendingProposals() {
			if p := s.proposals[id]; p != nil {
				out = append(out, *p.note())
			}
		}
	})
	return out, err
}

// Review takes the user's decision on proposal id: the hunks in accept
// are applied, the others are not ([AllHunks] names every hunk); comment
// goes to the model with the decision. It returns once the accepted hunks
// are in the buffer or on disk.
func (s *Conversation) Review(ctx context.Context, id string, accept, reject []string, comment string) (ReviewResult, error) {
	return s.decide(ctx, fsm.ChangesDecided{ID: id, Accepted: accept, Rejected: reject, Comment: comment})
}

// Unreviewed settles proposal id without the user's decision: why says
// what happened instead (the file changed while the change waited, the
// editor could not ask). Nothing is written, and the model reads why,
// not a rejection by the user.
func (s *Conversation) Unreviewed(ctx context.Context, id, why string) (ReviewResult, error) {
	return s.decide(ctx, fsm.ChangesDecided{ID: id, Rejected: []string{AllHunks}, Unreviewed: why})
}

func (s *Conversation) decide(ctx context.Context, ev fsm.ChangesDecided) (ReviewResult, error) {
	id, accept, reject := ev.ID, ev.Accepted, ev.Rejected
	var p *proposal
	var stepErr error
	err := s.call(ctx, func() {
		p = s.proposals[id]
		if p == nil {
			return
		}
		all := p.hunkIDs()
		if slices.Contains(accept, AllHunks) {
			accept = all
		}
		if slices.Contains(reject, AllHunks) {
			reject = all
			if len(accept) == len(all) {
				stepErr = errors.New(`accept and reject cannot both be "all"`)
				return
			}
		}
		var acts []fsm.Action
		ev.Accepted, ev.Rejected = accept, reject
		acts, stepErr = s.step(ev)
		if stepErr != nil {
			return
		}
		applying := slices.ContainsFunc(acts, func(a fsm.Action) bool { _, ok := a.(fsm.ApplyChanges); return ok })
		if !applying {
			// Rejected whole: the machine completed the call.
			delete(s.proposals, id)
			s.saveReviews()
			close(p.settled)
			p.outcome <- reviewOutcome{res: ReviewResult{Applied: []string{}, Rejected: all}}
		}
	})
	switch {
	case err != nil:
		return ReviewResult{}, err
	case p == nil:
		return ReviewResult{}, fmt.Errorf("%w: %q", ErrNoProposal, id)
	case stepErr != nil:
		return ReviewResult{}, fmt.Errorf("review %s: %w", id, stepErr)
	}
	select {
	case o := <-p.outcome:
		return o.res, o.err
	case <-ctx.Done():
		return ReviewResult{}, ctx.Err()
	case <-s.done:
		return ReviewResult{}, ErrClosed
	}
}

// onApplyChanges performs fsm.ApplyChanges: a worker applies the accepted
// hunks, then the call is completed on the owner goroutine.
func (s *Conversation) onApplyChanges(a fsm.ApplyChanges) {
	p := s.proposals[a.ID]
	delete(s.proposals, a.ID)
	if p == nil {
		return
	}
	s.saveReviews()
	ctx := s.turnContext()
	root := s.env.Root
	call := s.callOf(a.CallID)
	if p.cmd != nil {
		s.goWorker(func() { s.applyCommand(ctx, a, p, call) })
		return
	}
	s.goWorker(func() {
		res, e, err := s.changes.DecideEdit(ctx, root, p.callID, p.edit.Path, p.edit.Mode, p.change, a.Accepted)
		result, isError := a.Result, false
		if err != nil {
			result, isError = "tool error: the accepted change could not be applied: "+err.Error(), true
		} else if len(res.Conflicts) > 0 {
			result += fmt.Sprintf("; hunks %v were left out: the user changed the same lines meanwhile (read the file again)", res.Conflicts)
		}
		var postHooks []fsm.HookReport
		if err == nil && e != nil && e.OldText != e.NewText {
			// The edit is applied now: its PostToolUse hooks run, with
			// the input as accepted (a rejected or unapplied one ran
			// nothing, and gets none, as in the formats).
			whole := len(a.Accepted) == len(p.hunkIDs()) && len(res.Conflicts) == 0
			postHooks = s.postToolHooks(ctx, acceptedCall(call, e, whole), toolOutcome{result: result})
		}
		s.post(func() {
			if ctx.Err() != nil {
				// The turn was cancelled meanwhile: the machine answered
				// the call. What landed before the cancel stays on disk
				// and is committed by no hook; say so.
				close(p.settled)
				p.outcome <- reviewOutcome{res: res, err: fmt.Errorf("the turn was cancelled while the change was applied")}
				return
			}
			if len(postHooks) > 0 {
				s.step(fsm.HooksDecided{Turn: a.Turn, Event: fsm.HookPostToolUse, CallID: a.CallID, Hooks: postHooks})
			}
			if e != nil {
				s.git.recordEdit(e.Path, e.OldText, e.NewText, e.Created, e.Mode)
				s.diffs[a.CallID] = e.Diff
				s.edits[a.CallID] = &EditNote{Path: e.Path, OldText: e.OldText, NewText: e.NewText, Created: e.Created}
			}
			s.outputs[a.CallID] = toolOutput{text: result}
			s.step(fsm.ToolCompleted{Turn: a.Turn, CallID: a.CallID, Result: result, IsError: isError})
			close(p.settled)
			for _, id := range p.hunkIDs() {
				if !slices.Contains(a.Accepted, id) {
					res.Rejected = append(res.Rejected, id)
				}
			}
			if res.Applied == nil {
				res.Applied = []string{}
			}
			if res.Rejected == nil {
				res.Rejected = []string{}
			}
			p.outcome <- reviewOutcome{res: res, err: err}
		})
	})
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

// dropProposals forgets the proposals of a turn that ended or was
// cancelled: the machine answered their calls.
func (s *Conversation) dropProposals() {
	for id, p := range s.proposals {
		delete(s.proposals, id)
		if p.cmd != nil {
			// A command's changes nobody decided on stay on disk: they
			// join the list to keep or discard later.
			s.changes.AddChanges(p.cmd.changes)
			s.notify(Notification{Kind: NoteCommandChanges, Turn: p.cmd.changes[0].Turn, Changes: p.cmd.changes})
		}
		close(p.settled)
		p.outcome <- reviewOutcome{err: fmt.Errorf("%w: %q (the turn was cancelled)", ErrNoProposal, id)}
	}
	clear(s.proposed)
	if s.m.State().Kind != fsm.ShuttingDown {
		// Stopping the daemon keeps them, for the next one (review_resume.go).
		s.saveReviews()
	}
}

// awaitReview proposes the edit a call computed under review and waits
// until the call is settled (applied or rejected) or the turn is gone, so
// that the batch's next mutating call sees the file as the decision left
// it.
func (s *Conversation) awaitReview(ctx context.Context, propose func() *proposal) {
	if p := s.proposeLive(ctx, propose); p != nil {
		s.awaitSettled(ctx, []*proposal{p})
	}
}

// proposeLive runs propose on the owner goroutine while the turn is live
// and returns the proposal it made, nil when none (or the turn is gone).
func (s *Conversation) proposeLive(ctx context.Context, propose func() *proposal) *proposal {
	taken := make(chan *proposal, 1)
	s.postLive(ctx, func() { taken <- propose() })
	select {
	case p := <-taken:
		return p
	case <-ctx.Done():
		return nil
	case <-s.done:
		return nil
	}
}
