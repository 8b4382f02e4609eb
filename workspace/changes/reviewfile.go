package changes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/workspace/review"
)

// A review outlives the daemon. The proposals waiting for the user, what
// the user decided of them so far and the comment typed are kept beside
// the conversation's journal (<journal>.review.json, rewritten whenever
// they change, removed once none waits). A daemon that stops (a window
// reload restarts loom-lsp) leaves the file; the next one replays the
// journal, which ends in the turn that waits for the review, and instead
// of cancelling that turn it puts the proposals back up (Resume): the
// client asks loom.proposals and draws them as the user left them; the
// decision goes on as if the daemon had never stopped, and the calls of
// the batch that had not run yet run after it. A turn that cannot be
// taken up again that way (a call was running, a command's changes wait,
// the file is missing or does not match the journal) is cancelled as
// before.

// ReviewDraft is what the user decided so far on a proposal, and the
// comment typed, before the decision is sent.
type ReviewDraft struct {
	Accepted []string `json:"accepted,omitempty"`
	Rejected []string `json:"rejected,omitempty"`
	Comment  string   `json:"comment,omitempty"`
}

func (d ReviewDraft) empty() bool {
	return len(d.Accepted) == 0 && len(d.Rejected) == 0 && d.Comment == ""
}

// savedProposal is a proposed edit as kept beside the journal.
type savedProposal struct {
	ID      string      `json:"id"`
	CallID  string      `json:"callId"`
	Path    string      `json:"path"`
	Rel     string      `json:"rel"`
	Old     string      `json:"old"`
	New     string      `json:"new"`
	Created bool        `json:"created,omitempty"`
	Mode    fs.FileMode `json:"mode"`
	Draft   ReviewDraft `json:"draft"`
}

// ReviewsPath is where the proposals of the journal at journal are kept.
func ReviewsPath(journal string) string {
	return strings.TrimSuffix(journal, ".jsonl") + ".review.json"
}

// SetDraft records what the user decided so far on proposal id and the
// comment typed (nothing is decided until Decide): a client that
// reconnects, or the next daemon, shows the proposal as the user left
// it.
func (r *Review) SetDraft(ctx context.Context, id string, d ReviewDraft) error {
	var found bool
	err := r.conv.Do(ctx, func() {
		p := r.waiting[id]
		if p == nil {
			return
		}
		found = true
		if p.draft.Comment == d.Comment && slices.Equal(p.draft.Accepted, d.Accepted) && slices.Equal(p.draft.Rejected, d.Rejected) {
			return
		}
		p.draft = d
		r.save()
	})
	if err == nil && !found {
		err = fmt.Errorf("%w: %q", ErrNoProposal, id)
	}
	return err
}

// Tidy removes the file of kept proposals when none waits (one left by a
// daemon whose turn could not be taken up again). On the conversation's
// goroutine.
func (r *Review) Tidy() {
	if len(r.waiting) == 0 {
		r.save()
	}
}

// save rewrites the file of the proposals waiting for the user (their
// edits; a command's changes are not kept), or removes it when none
// waits. A proposal whose texts hold a secret is not kept: what is
// written beside the journal is never unmasked.
func (r *Review) save() {
	path := r.conv.JournalPath()
	if path == "" {
		return
	}
	var saved []savedProposal
	for _, id := range slices.Sorted(maps.Keys(r.waiting)) {
		p := r.waiting[id]
		if p.cmd != nil || p.edit == nil {
			continue
		}
		e := p.edit
		if r.conv.Redact(e.OldText) != e.OldText || r.conv.Redact(e.NewText) != e.NewText || r.conv.Redact(p.draft.Comment) != p.draft.Comment {
			continue
		}
		saved = append(saved, savedProposal{ID: id, CallID: p.callID, Path: e.Path, Rel: e.RelPath, Old: e.OldText, New: e.NewText,
			Created: e.Created, Mode: e.Mode, Draft: p.draft})
	}
	file := ReviewsPath(path)
	if len(saved) == 0 {
		if err := os.Remove(file); err != nil && !errors.Is(err, fs.ErrNotExist) {
			r.conv.Warn("cannot remove the kept proposals", err)
		}
		return
	}
	b, err := json.Marshal(saved)
	if err == nil {
		tmp := file + ".tmp"
		if err = os.WriteFile(tmp, b, 0o600); err == nil {
			err = os.Rename(tmp, file)
		}
	}
	if err != nil {
		r.conv.Warn("cannot keep the proposals for the next daemon", err)
	}
}

// Resume puts back up the proposals kept beside the journal at path when
// the machine's turn waits for exactly them (see the top of this file):
// it returns them, and the calls of the batch still to run (those after
// the reviewed ones, which had not started). It reports false, changing
// nothing, when it cannot. On the conversation's goroutine.
func (r *Review) Resume(path string) (waiting []*Proposal, rest fsm.ExecuteTools, ok bool) {
	b, err := os.ReadFile(ReviewsPath(path))
	if err != nil {
		return nil, rest, false
	}
	var saved []savedProposal
	if json.Unmarshal(b, &saved) != nil {
		return nil, rest, false
	}
	m := r.conv.Machine()
	st := m.State()
	ids := m.PendingProposals()
	if st.Kind != fsm.ExecutingTools || len(ids) == 0 {
		return nil, rest, false
	}
	rebuilt := map[string]*Proposal{}
	for _, id := range ids {
		callID, hunks, _ := m.ProposalCall(id)
		i := slices.IndexFunc(saved, func(sp savedProposal) bool { return sp.ID == id && sp.CallID == callID })
		if i < 0 {
			return nil, rest, false
		}
		sp := saved[i]
		abs, err := tools.Resolve(r.tree.dir, sp.Path)
		if err != nil || abs != sp.Path {
			return nil, rest, false
		}
		ch := review.Split(sp.Rel, sp.Old, sp.New, sp.Created, 1)
		if !slices.Equal(ch.HunkIDs(), hunks) {
			return nil, rest, false
		}
		p := newProposal(callID)
		p.id, p.edit, p.change, p.draft = id, tools.NewEdit(r.tree.dir, sp.Path, sp.Created, sp.Old, sp.New, sp.Mode), ch, sp.Draft
		rebuilt[id] = p
	}
	rest = fsm.ExecuteTools{Turn: st.Turn, Review: true}
	for _, x := range st.Executions {
		switch x.Status {
		case fsm.ExecCompleted, fsm.ExecReviewing:
		case fsm.ExecPending:
			rest.Calls = append(rest.Calls, x.Call)
			rest.Mutating = append(rest.Mutating, x.Mutating)
		default:
			return nil, fsm.ExecuteTools{}, false // a call was running: it cannot be taken up
		}
	}
	for _, id := range ids {
		r.waiting[id] = rebuilt[id]
		waiting = append(waiting, rebuilt[id])
	}
	return waiting, rest, true
}
