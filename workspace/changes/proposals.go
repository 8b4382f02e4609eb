package changes

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/workspace/review"
)

// Under tools.edits = "review" an edit tool's change is proposed, not
// applied (fsm.ChangesProposed): the user decides per hunk (Decide), and
// only the accepted hunks are then applied, three-way over whatever the
// user typed meanwhile, and committed like any edit. A command's changes
// are proposed the same way (NewCommandReview): the command already wrote
// them, so accepted hunks stay and the others are taken back.

// ErrNoProposal is wrapped by Decide's error when no proposal of that id
// waits for the user.
var ErrNoProposal = errors.New("no such proposal waiting for review")

// AllHunks, as the only element of Decide's accept or reject, stands for
// every hunk of the proposal.
const AllHunks = "all"

// ProposalNote is a proposal waiting for the user's review, as the user
// is shown it.
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

// Review is the review of one conversation's proposals: the proposals
// the machine has not named yet and those waiting for the user's
// decision, what the user decided of them so far (kept beside the
// journal for the next daemon: reviewfile.go), and the decisions
// themselves. It steps the machine's review events and completes the
// proposing calls through ReviewConversation; the decisions' writes are
// the Tree's (DecideEdit, DecideCommand).
//
// Its state is owned by the conversation's goroutine, like the
// conversation's own: the methods said to run there do, the others reach
// it through ReviewConversation.Do.
type Review struct {
	tree  *Tree
	conv  ReviewConversation
	reads *tools.ReadTracker
	// proposed holds proposals by call id until the machine names them;
	// waiting those it named, by proposal id, until decided.
	proposed map[string]*Proposal
	waiting  map[string]*Proposal
}

// ReviewConversation is what the review needs of the conversation whose
// proposals it keeps.
type ReviewConversation interface {
	// Do runs f on the conversation's goroutine and waits for it; Post
	// runs it there without waiting; Go runs f on a worker of the
	// conversation (waited for when it stops).
	Do(ctx context.Context, f func()) error
	Post(f func())
	Go(f func())
	// Wait blocks until ready is closed (nil), ctx is done or the
	// conversation stopped (an error saying which).
	Wait(ctx context.Context, ready <-chan struct{}) error
	// JournalPath is the conversation's journal ("": not journaled);
	// Redact masks the secrets loom knows in text; Warn logs a failure
	// nobody waits for (any goroutine).
	JournalPath() string
	Redact(text string) string
	Warn(msg string, err error)

	// On the conversation's goroutine only:

	// Machine is the conversation's state machine, to read; Step steps
	// it (journaled, its actions performed).
	Machine() *fsm.Machine
	Step(ev fsm.Event) ([]fsm.Action, error)
	// TurnContext is the context of the turn in flight.
	TurnContext() context.Context
	// Tell tells the user.
	Tell(n Note)
	// Complete records what a decision made of its call (the bytes that
	// landed, for the post-tool hook; the call's card) and steps the
	// call's fsm.ToolCompleted, after what its PostToolUse hooks said.
	Complete(c Completion)

	// On a worker:

	// PostToolHooks runs the PostToolUse hooks of a call the user's
	// decision ran (an edit applied, a command's changes decided) and
	// returns what they said, for the Completion.
	PostToolHooks(ctx context.Context, r Ran) []fsm.HookReport
}

// Ran is a proposing call that ran, now the user decided: an edit that
// was applied (Edit, accepted Whole or in part) or a command whose
// changes were decided.
type Ran struct {
	// Call is the call as it ran (with the input a hook rewrote it to).
	Call           fsm.ToolCall
	Result         string
	IsError        bool
	Edit           *tools.Edit
	Whole, Command bool
}

// callOf is the batch's call id as it runs; on the conversation's
// goroutine.
func callOf(m *fsm.Machine, id string) fsm.ToolCall {
	for _, x := range m.State().Executions {
		if x.Call.ID == id {
			return x.Call
		}
	}
	return fsm.ToolCall{ID: id}
}

// Completion is a proposing call that the user's decision completed.
type Completion struct {
	Turn           uint64
	CallID, Result string
	IsError        bool
	// Edit is what an edit's accepted hunks changed (nil when nothing,
	// and for a command): committed by the hook and shown on the card.
	Edit *tools.Edit
	// Kept are the kept parts of a command's changes, which the hook
	// commits like edits.
	Kept []Keep
	// Hooks are what the call's PostToolUse hooks said (stepped before
	// the call's completion).
	Hooks []fsm.HookReport
}

// Proposal is a proposed change waiting for its decision.
type Proposal struct {
	id     string // "" until the machine named it (Named)
	callID string
	edit   *tools.Edit
	change *review.Change
	// cmd is set instead of edit and change for a command's changes.
	cmd *CommandReview
	// settled is closed once the call is completed (applied or
	// rejected): the batch's next mutating call may run. res and err
	// are the decision's result, set before settled is closed.
	settled chan struct{}
	res     ReviewResult
	err     error
	// draft is what the user decided so far and the comment typed, kept
	// for a client that reconnects (SetDraft).
	draft ReviewDraft
}

func newProposal(callID string) *Proposal {
	return &Proposal{callID: callID, settled: make(chan struct{})}
}

// Path is the file an edit's proposal changes ("" for a command's).
func (p *Proposal) Path() string {
	if p.edit == nil {
		return ""
	}
	return p.edit.Path
}

// settle gives the decision's result to who waits for it.
func (p *Proposal) settle(res ReviewResult, err error) {
	p.res, p.err = res, err
	close(p.settled)
}

// NewReview returns the review of conv's proposals, whose decisions tree
// writes; reads is what the model read (a command's file kept as the
// model knew it stays known).
func NewReview(tree *Tree, conv ReviewConversation, reads *tools.ReadTracker) *Review {
	return &Review{tree: tree, conv: conv, reads: reads, proposed: map[string]*Proposal{}, waiting: map[string]*Proposal{}}
}

// Propose turns an edit computed under review into a proposal: it
// records it, steps ChangesProposed and returns the proposal, or nil when
// the machine did not take it (the turn is gone). On the conversation's
// goroutine.
func (r *Review) Propose(turn uint64, callID string, e *tools.Edit) *Proposal {
	ch := review.Split(e.RelPath, e.OldText, e.NewText, e.Created, 1)
	if len(ch.File.Hunks) == 0 {
		return nil
	}
	p := newProposal(callID)
	p.edit, p.change = e, ch
	r.proposed[callID] = p
	if _, err := r.conv.Step(fsm.ChangesProposed{Turn: turn, CallID: callID, Changes: []fsm.FileChange{ch.File}}); err != nil {
		delete(r.proposed, callID)
		return nil
	}
	return p
}

// ProposeCommand steps ChangesProposed for cr, the changes of the command
// of call callID, and returns the proposal, or nil when the machine did
// not take it (the caller then completes the call as under auto). On the
// conversation's goroutine.
func (r *Review) ProposeCommand(turn uint64, callID string, cr *CommandReview) *Proposal {
	p := newProposal(callID)
	p.cmd = cr
	var changes []fsm.FileChange
	for _, f := range cr.files {
		changes = append(changes, f.Change.File)
	}
	r.proposed[callID] = p
	if _, err := r.conv.Step(fsm.ChangesProposed{Turn: turn, CallID: callID, Changes: changes, Output: cr.output}); err != nil {
		delete(r.proposed, callID)
		return nil
	}
	return p
}

// Named performs fsm.ProposeChanges: the proposal gets its id and is
// shown to the user. On the conversation's goroutine.
func (r *Review) Named(a fsm.ProposeChanges) {
	p := r.proposed[a.CallID]
	delete(r.proposed, a.CallID)
	if p == nil {
		return
	}
	p.id = a.ID
	r.waiting[a.ID] = p
	r.save()
	r.conv.Tell(Note{Kind: Proposed, Turn: a.Turn, Proposal: p.note()})
}

func (p *Proposal) note() *ProposalNote {
	var n *ProposalNote
	if p.cmd != nil {
		n = &ProposalNote{ID: p.id, CallID: p.callID, Command: p.cmd.command}
		for _, f := range p.cmd.files {
			n.Changes = append(n.Changes, f.Change.File)
			n.Abs = append(n.Abs, f.Abs)
			n.OldTexts = append(n.OldTexts, f.Before.Text)
			n.NewTexts = append(n.NewTexts, f.After.Text)
		}
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

// hunkIDs are every hunk of p, in order.
func (p *Proposal) hunkIDs() []string {
	if p.cmd == nil {
		return p.change.HunkIDs()
	}
	var ids []string
	for _, f := range p.cmd.files {
		ids = append(ids, f.Change.HunkIDs()...)
	}
	return ids
}

// result is res completed with the hunks not accepted, as rejected.
func (p *Proposal) result(res ReviewResult, accepted []string) ReviewResult {
	for _, id := range p.hunkIDs() {
		if !slices.Contains(accepted, id) {
			res.Rejected = append(res.Rejected, id)
		}
	}
	if res.Applied == nil {
		res.Applied = []string{}
	}
	if res.Rejected == nil {
		res.Rejected = []string{}
	}
	return res
}

// Proposals returns the proposals waiting for the user, oldest first.
func (r *Review) Proposals(ctx context.Context) ([]ProposalNote, error) {
	var out []ProposalNote
	err := r.conv.Do(ctx, func() {
		for _, id := range r.conv.Machine().PendingProposals() {
			if p := r.waiting[id]; p != nil {
				out = append(out, *p.note())
			}
		}
	})
	return out, err
}

// Decide takes the user's decision on proposal id: the hunks in accept
// are applied, the others are not ([AllHunks] names every hunk); comment
// goes to the model with the decision. It returns once the accepted hunks
// are in the buffer or on disk.
func (r *Review) Decide(ctx context.Context, id string, accept, reject []string, comment string) (ReviewResult, error) {
	return r.decide(ctx, fsm.ChangesDecided{ID: id, Accepted: accept, Rejected: reject, Comment: comment})
}

// Unreviewed settles proposal id without the user's decision: why says
// what happened instead (the file changed while the change waited, the
// editor could not ask). Nothing is written, and the model reads why,
// not a rejection by the user.
func (r *Review) Unreviewed(ctx context.Context, id, why string) (ReviewResult, error) {
	return r.decide(ctx, fsm.ChangesDecided{ID: id, Rejected: []string{AllHunks}, Unreviewed: why})
}

func (r *Review) decide(ctx context.Context, ev fsm.ChangesDecided) (ReviewResult, error) {
	id, accept, reject := ev.ID, ev.Accepted, ev.Rejected
	var p *Proposal
	var stepErr error
	err := r.conv.Do(ctx, func() {
		p = r.waiting[id]
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
		acts, stepErr = r.conv.Step(ev)
		if stepErr != nil {
			return
		}
		applying := slices.ContainsFunc(acts, func(a fsm.Action) bool { _, ok := a.(fsm.ApplyChanges); return ok })
		if !applying {
			// Rejected whole: the machine completed the call.
			delete(r.waiting, id)
			r.save()
			p.settle(ReviewResult{Applied: []string{}, Rejected: all}, nil)
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
	if err := r.conv.Wait(ctx, p.settled); err != nil {
		return ReviewResult{}, err
	}
	return p.res, p.err
}

// Apply performs fsm.ApplyChanges: a worker applies the accepted hunks,
// then the call is completed on the conversation's goroutine. On the
// conversation's goroutine.
func (r *Review) Apply(a fsm.ApplyChanges) {
	p := r.waiting[a.ID]
	delete(r.waiting, a.ID)
	if p == nil {
		return
	}
	r.save()
	ctx := r.conv.TurnContext()
	call := callOf(r.conv.Machine(), a.CallID)
	if p.cmd != nil {
		r.conv.Go(func() { r.applyCommand(ctx, a, p, call) })
		return
	}
	r.conv.Go(func() {
		res, e, err := r.tree.DecideEdit(ctx, r.tree.dir, p.callID, p.edit.Path, p.edit.Mode, p.change, a.Accepted)
		result, isError := a.Result, false
		if err != nil {
			result, isError = "tool error: the accepted change could not be applied: "+err.Error(), true
		} else if len(res.Conflicts) > 0 {
			result += fmt.Sprintf("; hunks %v were left out: the user changed the same lines meanwhile (read the file again)", res.Conflicts)
		}
		var hooks []fsm.HookReport
		if err == nil && e != nil && e.OldText != e.NewText {
			// The edit is applied now: its PostToolUse hooks run, with
			// the input as accepted. A rejected or unapplied one ran
			// nothing and gets none, as in the formats.
			whole := len(a.Accepted) == len(p.hunkIDs()) && len(res.Conflicts) == 0
			hooks = r.conv.PostToolHooks(ctx, Ran{Call: call, Result: result, Edit: e, Whole: whole})
		}
		r.conv.Post(func() {
			if ctx.Err() != nil {
				// The turn was cancelled meanwhile: the machine answered
				// the call. What landed before the cancel stays on disk
				// and is committed by no hook; say so.
				p.settle(res, fmt.Errorf("the turn was cancelled while the change was applied"))
				return
			}
			r.conv.Complete(Completion{Turn: a.Turn, CallID: a.CallID, Result: result, IsError: isError, Edit: e, Hooks: hooks})
			p.settle(p.result(res, a.Accepted), err)
		})
	})
}

// applyCommand performs an fsm.ApplyChanges of a command's changes (on
// a worker), then completes the call on the conversation's goroutine.
func (r *Review) applyCommand(ctx context.Context, a fsm.ApplyChanges, p *Proposal, call fsm.ToolCall) {
	res, keep, err := r.tree.DecideCommand(ctx, p.cmd.files, a.Accepted, r.reads)
	result, isError := a.Result, false
	if err != nil {
		result, isError = p.cmd.output+"\n[loom] the user's decision on this command's changes could not be applied: "+err.Error(), true
	} else if len(res.Conflicts) > 0 {
		result += fmt.Sprintf(" Hunks %v could not be taken back: the user changed the same lines since; they stay as they are.", res.Conflicts)
	}
	// The command ran whatever the user decided of its changes: its
	// PostToolUse hooks run now, with its output and the decision.
	hooks := r.conv.PostToolHooks(ctx, Ran{Call: call, Result: result, IsError: isError, Command: true})
	r.conv.Post(func() {
		if ctx.Err() != nil {
			p.settle(res, fmt.Errorf("the turn was cancelled while the decision was applied"))
			return
		}
		r.conv.Complete(Completion{Turn: a.Turn, CallID: a.CallID, Result: result, IsError: isError, Kept: keep, Hooks: hooks})
		p.settle(p.result(res, a.Accepted), err)
	})
}

// Drop forgets the proposals of a turn that ended or was cancelled: the
// machine answered their calls. On the conversation's goroutine.
func (r *Review) Drop() {
	for id, p := range r.waiting {
		delete(r.waiting, id)
		if p.cmd != nil {
			// A command's changes nobody decided on stay on disk: they
			// join the list to keep or discard later.
			r.tree.AddChanges(p.cmd.changes)
			r.conv.Tell(Note{Kind: CommandChanges, Turn: p.cmd.changes[0].Turn, Changes: p.cmd.changes})
		}
		p.settle(ReviewResult{}, fmt.Errorf("%w: %q (the turn was cancelled)", ErrNoProposal, id))
	}
	clear(r.proposed)
	if r.conv.Machine().State().Kind != fsm.ShuttingDown {
		// Stopping the daemon keeps them, for the next one (reviewfile.go).
		r.save()
	}
}

// AwaitSettled waits until every proposal of ps is decided (applied or
// rejected), or the turn (ctx) or the conversation is gone.
func (r *Review) AwaitSettled(ctx context.Context, ps []*Proposal) {
	for _, p := range ps {
		if r.conv.Wait(ctx, p.settled) != nil {
			return
		}
	}
}

// CommandReview is a proposal of a command's changes: the command, its
// output, and the files it changed that can be reviewed.
type CommandReview struct {
	command string
	output  string
	files   []*CommandFile
	// changes are the files' reports, for the keep/discard list when
	// the turn is cancelled before the decision.
	changes []CommandChange
}

// NewCommandReview works out the review of a command's changes (as the
// hook would report them): nil when none can be reviewed (binary, deleted,
// unchanged). The files it leaves out stay the hook's to report.
func NewCommandReview(command, output string, changes []CommandChange) *CommandReview {
	cr := &CommandReview{command: command, output: output}
	next := 1
	for _, c := range changes {
		if c.Binary || c.Before == nil || c.After == nil || !c.After.Present {
			continue
		}
		ch := review.Split(c.Rel, c.Before.Text, c.After.Text, !c.Before.Present, next)
		if len(ch.File.Hunks) == 0 {
			continue
		}
		ch.File.Kind = fsm.ChangeCommand
		next += len(ch.File.Hunks)
		mode := fs.FileMode(0o644)
		if st, err := os.Lstat(c.Path); err == nil {
			mode = st.Mode().Perm()
		}
		cr.files = append(cr.files, &CommandFile{Abs: c.Path, Rel: c.Rel, Before: *c.Before, After: *c.After, Change: ch, Mode: mode})
		cr.changes = append(cr.changes, c)
	}
	if len(cr.files) == 0 {
		return nil
	}
	return cr
}

// Proposes reports whether cr proposes the file at abs.
func (cr *CommandReview) Proposes(abs string) bool {
	return slices.ContainsFunc(cr.files, func(f *CommandFile) bool { return f.Abs == abs })
}

// Output is the command's output.
func (cr *CommandReview) Output() string { return cr.output }
