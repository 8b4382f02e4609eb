package workspace

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
	"time"

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
// of cancelling that turn it puts the proposals back up: the client asks
// loom.proposals and draws them as the user left them; the decision
// goes on as if the daemon had never stopped, and the calls of the batch
// that had not run yet run after it. A turn that cannot be taken up
// again that way (a call was running, a command's changes wait, the file
// is missing or does not match the journal) is cancelled as before.

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

// reviewsPath is where the proposals of the journal at journal are kept.
func reviewsPath(journal string) string {
	return strings.TrimSuffix(journal, ".jsonl") + ".review.json"
}

// SetReviewDraft records what the user decided so far on proposal id and
// the comment typed (nothing is decided until Review): a client that
// reconnects, or the next daemon, shows the proposal as the user left
// it.
func (s *Conversation) SetReviewDraft(ctx context.Context, id string, d ReviewDraft) error {
	var found bool
	err := s.call(ctx, func() {
		p := s.proposals[id]
		if p == nil {
			return
		}
		found = true
		if p.draft.Comment == d.Comment && slices.Equal(p.draft.Accepted, d.Accepted) && slices.Equal(p.draft.Rejected, d.Rejected) {
			return
		}
		p.draft = d
		s.saveReviews()
	})
	if err == nil && !found {
		err = fmt.Errorf("%w: %q", ErrNoProposal, id)
	}
	return err
}

// saveReviews rewrites the file of the proposals waiting for the user
// (their edits; a command's changes are not kept), or removes it when
// none waits. A proposal whose texts hold a secret is not kept: what is
// written beside the journal is never unmasked.
func (s *Conversation) saveReviews() {
	path := s.journalPathShared()
	if path == "" {
		return
	}
	var saved []savedProposal
	for _, id := range slices.Sorted(maps.Keys(s.proposals)) {
		p := s.proposals[id]
		if p.cmd != nil || p.edit == nil {
			continue
		}
		e := p.edit
		if r := s.folder.host.redactor; r.String(e.OldText) != e.OldText || r.String(e.NewText) != e.NewText || r.String(p.draft.Comment) != p.draft.Comment {
			continue
		}
		saved = append(saved, savedProposal{ID: id, CallID: p.callID, Path: e.Path, Rel: e.RelPath, Old: e.OldText, New: e.NewText,
			Created: e.Created, Mode: e.Mode, Draft: p.draft})
	}
	file := reviewsPath(path)
	if len(saved) == 0 {
		if err := os.Remove(file); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.folder.log.Warn("cannot remove the kept proposals", "err", err)
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
		s.folder.log.Warn("cannot keep the proposals for the next daemon", "err", err)
	}
}

// resumeReviews takes up again the turn the journal at path ends in when
// it waits for the user's review of proposals kept beside it (see the top
// of this file). It reports false, changing nothing, when it cannot.
func (s *Conversation) resumeReviews(path string) bool {
	b, err := os.ReadFile(reviewsPath(path))
	if err != nil {
		return false
	}
	var saved []savedProposal
	if json.Unmarshal(b, &saved) != nil {
		return false
	}
	st := s.m.State()
	ids := s.m.PendingProposals()
	if st.Kind != fsm.ExecutingTools || len(ids) == 0 {
		return false
	}
	rebuilt := map[string]*proposal{}
	for _, id := range ids {
		callID, hunks, _ := s.m.ProposalCall(id)
		i := slices.IndexFunc(saved, func(sp savedProposal) bool { return sp.ID == id && sp.CallID == callID })
		if i < 0 {
			return false
		}
		sp := saved[i]
		abs, err := tools.Resolve(s.folder.dir, sp.Path)
		if err != nil || abs != sp.Path {
			return false
		}
		ch := review.Split(sp.Rel, sp.Old, sp.New, sp.Created, 1)
		if !slices.Equal(ch.HunkIDs(), hunks) {
			return false
		}
		rebuilt[id] = &proposal{id: id, callID: callID, edit: tools.NewEdit(s.folder.dir, sp.Path, sp.Created, sp.Old, sp.New, sp.Mode),
			change: ch, settled: make(chan struct{}), outcome: make(chan reviewOutcome, 1), draft: sp.Draft}
	}
	// The calls still to run: those after the reviewed ones, which had
	// not started.
	rest := fsm.ExecuteTools{Turn: st.Turn, Review: true}
	for _, x := range st.Executions {
		switch x.Status {
		case fsm.ExecCompleted, fsm.ExecReviewing:
		case fsm.ExecPending:
			rest.Calls = append(rest.Calls, x.Call)
			rest.Mutating = append(rest.Mutating, x.Mutating)
		default:
			return false // a call was running: it cannot be taken up
		}
	}
	var waiting []*proposal
	for _, id := range ids {
		s.proposals[id] = rebuilt[id]
		waiting = append(waiting, rebuilt[id])
	}
	ctx := s.turnContext()
	s.turnPrompt = lastPrompt(s.m.Messages())
	s.git.newBatch()
	s.turnTimes[st.Turn] = time.Now()
	if len(rest.Calls) > 0 {
		b := s.newBatchRun(rest)
		s.goWorker(func() {
			s.awaitSettled(ctx, waiting)
			if ctx.Err() == nil {
				s.runTools(ctx, rest, b)
			}
		})
	}
	s.notify(Notification{Kind: NoteInfo, Turn: st.Turn, Text: fmt.Sprintf("%s still %s for your review (kept while loom-lsp restarted)",
		plural(len(ids), "change"), map[bool]string{true: "waits", false: "wait"}[len(ids) == 1])})
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
