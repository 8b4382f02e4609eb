package changes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/workspace/worktree"
)

// lines is a file of n numbered lines.
func lines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

// changeLine replaces line i (1-based) of text.
func changeLine(text string, i int, to string) string {
	ls := strings.SplitAfter(text, "\n")
	ls[i-1] = to + "\n"
	return strings.Join(ls, "")
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	t.Cleanup(cancel)
	return ctx
}

// TestReviewAppliesTheAcceptedHunksOfAnEdit: an edit proposed under
// review is shown, writes nothing until decided, and then only its
// accepted hunks land; the call completes with what landed.
func TestReviewAppliesTheAcceptedHunksOfAnEdit(t *testing.T) {
	o := newOwner(t, map[string]string{"a.txt": lines(30)})
	ctx := ctxT(t)
	turn := o.turn(fsm.ToolCall{ID: "c1", Name: "edit_file", Arguments: `{"path":"a.txt"}`})
	agent := changeLine(changeLine(lines(30), 2, "two"), 25, "twenty-five")
	_, id := o.propose(turn, "c1", o.edit("a.txt", agent))
	if got := o.read("a.txt"); got != lines(30) {
		t.Fatalf("a proposal wrote the file: %q", got)
	}
	shown := o.told(Proposed)
	if len(shown) != 1 || shown[0].Proposal.ID != id || len(shown[0].Proposal.Changes[0].Hunks) != 2 {
		t.Fatalf("shown: %+v", shown)
	}
	if _, err := os.Stat(ReviewsPath(o.journal)); err != nil {
		t.Fatalf("the waiting proposal is not kept for the next daemon: %v", err)
	}
	list, err := o.review.Proposals(ctx)
	if err != nil || len(list) != 1 || list[0].ID != id || list[0].NewText != agent {
		t.Fatalf("Proposals = %+v, %v", list, err)
	}

	res, err := o.review.Decide(ctx, id, []string{"1"}, nil, "only the first")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Applied, []string{"1"}) || !slices.Equal(res.Rejected, []string{"2"}) || len(res.Conflicts) != 0 {
		t.Fatalf("result %+v, want applied [1] rejected [2]", res)
	}
	want := changeLine(lines(30), 2, "two")
	if got := o.read("a.txt"); got != want {
		t.Fatalf("on disk:\n%s\nwant:\n%s", got, want)
	}
	o.mu.Lock()
	completed := slices.Clone(o.completed)
	o.mu.Unlock()
	if len(completed) != 1 || completed[0].CallID != "c1" || completed[0].Edit == nil || completed[0].Edit.NewText != want || completed[0].IsError {
		t.Fatalf("completed: %+v", completed)
	}
	if r, ok := o.result("c1"); !ok || !strings.Contains(r, "only the first") {
		t.Fatalf("the model reads %q (%v), not the decision", r, ok)
	}
	if list, _ := o.review.Proposals(ctx); len(list) != 0 {
		t.Fatalf("still waiting: %+v", list)
	}
	if _, err := os.Stat(ReviewsPath(o.journal)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the kept proposals outlive their decision: %v", err)
	}
	if _, err := o.review.Decide(ctx, id, []string{AllHunks}, nil, ""); !errors.Is(err, ErrNoProposal) {
		t.Fatalf("a second decision: %v, want ErrNoProposal", err)
	}
}

// TestReviewRejectedWholeWritesNothing: a proposal rejected whole (or
// settled unreviewed) writes nothing and the machine completes the call;
// a decision that accepts and rejects everything is refused and leaves
// the proposal waiting.
func TestReviewRejectedWholeWritesNothing(t *testing.T) {
	o := newOwner(t, map[string]string{"a.txt": lines(30), "b.txt": lines(5)})
	ctx := ctxT(t)
	turn := o.turn(fsm.ToolCall{ID: "c1", Name: "edit_file", Arguments: `{"path":"a.txt"}`},
		fsm.ToolCall{ID: "c2", Name: "edit_file", Arguments: `{"path":"b.txt"}`})
	_, id1 := o.propose(turn, "c1", o.edit("a.txt", changeLine(changeLine(lines(30), 2, "two"), 25, "x")))
	if _, err := o.review.Decide(ctx, id1, []string{AllHunks}, []string{AllHunks}, ""); err == nil || errors.Is(err, ErrNoProposal) {
		t.Fatalf("accept and reject all: %v", err)
	}
	res, err := o.review.Decide(ctx, id1, nil, []string{AllHunks}, "not this one")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Applied) != 0 || !slices.Equal(res.Rejected, []string{"1", "2"}) {
		t.Fatalf("result %+v, want every hunk rejected", res)
	}
	_, id2 := o.propose(turn, "c2", o.edit("b.txt", changeLine(lines(5), 1, "one")))
	if _, err := o.review.Unreviewed(ctx, id2, "the editor could not ask"); err != nil {
		t.Fatal(err)
	}
	if o.read("a.txt") != lines(30) || o.read("b.txt") != lines(5) {
		t.Fatal("a rejected proposal was written")
	}
	o.mu.Lock()
	n := len(o.completed)
	o.mu.Unlock()
	if n != 0 {
		t.Fatalf("the review completed %d rejected calls itself (the machine does)", n)
	}
	if r, ok := o.result("c2"); !ok || !strings.Contains(r, "the editor could not ask") {
		t.Fatalf("the model reads %q (%v), not why", r, ok)
	}
	if r, ok := o.result("c1"); !ok || !strings.Contains(r, "not this one") {
		t.Fatalf("the model reads %q (%v), not the rejection", r, ok)
	}
}

// TestReviewDecisionRetriedWhenTheUserTypes: the user types in the file
// between the decision's read and its write: the accepted hunks are
// applied again onto the user's text, which stays.
func TestReviewDecisionRetriedWhenTheUserTypes(t *testing.T) {
	o := newOwner(t, map[string]string{"a.txt": lines(30)})
	ctx := ctxT(t)
	typed := changeLine(lines(30), 15, "the user typed this")
	o.beforeApply = func(attempt int) {
		if attempt == 1 {
			if err := os.WriteFile(o.path("a.txt"), []byte(typed), 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	turn := o.turn(fsm.ToolCall{ID: "c1", Name: "edit_file", Arguments: `{"path":"a.txt"}`})
	_, id := o.propose(turn, "c1", o.edit("a.txt", changeLine(lines(30), 2, "two")))
	res, err := o.review.Decide(ctx, id, []string{AllHunks}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := changeLine(typed, 2, "two"); o.read("a.txt") != want {
		t.Fatalf("on disk:\n%s\nwant the user's line and the hunk:\n%s", o.read("a.txt"), want)
	}
	if !slices.Equal(res.Applied, []string{"1"}) {
		t.Fatalf("result %+v", res)
	}
}

// TestReviewKeptForTheNextDaemon: what waits, with the user's draft, is
// kept beside the journal; the next daemon, whose replayed machine waits
// for the same proposal, takes it up and the decision goes on. A
// proposal holding a secret is not kept; Tidy removes a file nothing
// waits for.
func TestReviewKeptForTheNextDaemon(t *testing.T) {
	o := newOwner(t, map[string]string{"a.txt": lines(10)})
	ctx := ctxT(t)
	calls := []fsm.ToolCall{{ID: "c1", Name: "edit_file", Arguments: `{"path":"a.txt"}`}, {ID: "c2", Name: "read_file", Arguments: `{"path":"a.txt"}`}}
	turn := o.turn(calls...)
	agent := changeLine(lines(10), 3, "three")
	p, id := o.propose(turn, "c1", o.edit("a.txt", agent))
	draft := ReviewDraft{Accepted: []string{"1"}, Comment: "looks right"}
	if err := o.review.SetDraft(ctx, id, draft); err != nil {
		t.Fatal(err)
	}
	if err := o.review.SetDraft(ctx, "9.c9", draft); !errors.Is(err, ErrNoProposal) {
		t.Fatalf("a draft of no proposal: %v", err)
	}

	// The next daemon: the journal replayed to the same state.
	next := newOwnerAt(t, o.dir, o.journal)
	next.turn(calls...)
	next.on(func() {
		if _, err := next.m.Step(fsm.ChangesProposed{Turn: turn, CallID: "c1", Changes: []fsm.FileChange{p.change.File}}); err != nil {
			t.Error(err)
		}
	})
	var waiting []*Proposal
	var rest fsm.ExecuteTools
	var ok bool
	next.on(func() { waiting, rest, ok = next.review.Resume(o.journal) })
	if !ok || len(waiting) != 1 || len(rest.Calls) != 1 || rest.Calls[0].ID != "c2" {
		t.Fatalf("Resume = %d waiting, rest %+v, %v", len(waiting), rest.Calls, ok)
	}
	list, err := next.review.Proposals(ctx)
	if err != nil || len(list) != 1 || list[0].ID != id || list[0].Draft == nil || list[0].Draft.Comment != "looks right" {
		t.Fatalf("Proposals after resume = %+v, %v", list, err)
	}
	if _, err := next.review.Decide(ctx, id, []string{AllHunks}, nil, ""); err != nil {
		t.Fatal(err)
	}
	if got := next.read("a.txt"); got != agent {
		t.Fatalf("on disk after the resumed decision: %q", got)
	}
	if _, err := os.Stat(ReviewsPath(o.journal)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the kept proposals outlive their decision: %v", err)
	}

	// A secret is never written beside the journal.
	o2 := newOwner(t, map[string]string{"a.txt": lines(10)})
	turn2 := o2.turn(calls[0])
	o2.propose(turn2, "c1", o2.edit("a.txt", changeLine(lines(10), 1, "key = sk-SECRET")))
	if _, err := os.Stat(ReviewsPath(o2.journal)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a proposal holding a secret was kept: %v", err)
	}
	// A file left by a daemon whose turn could not be taken up goes.
	if err := os.WriteFile(ReviewsPath(o2.journal), []byte("[]"), 0o600); err != nil {
		t.Fatal(err)
	}
	next2 := newOwnerAt(t, o2.dir, o2.journal)
	next2.on(func() {
		if _, _, ok := next2.review.Resume(o2.journal); ok {
			t.Error("resumed a review the machine does not wait for")
		}
		next2.review.Tidy()
	})
	if _, err := os.Stat(ReviewsPath(o2.journal)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Tidy left the file: %v", err)
	}
}

// commandChange is what the hook reports of rel, changed by a command
// from before to after.
func (o *owner) commandChange(rel, before, after string) CommandChange {
	b, a := worktree.Text(before), worktree.Text(after)
	return CommandChange{Path: o.path(rel), Rel: rel, Command: "sed -i ...", Turn: 1, Before: &b, After: &a}
}

// TestReviewOfACommandsChanges: a command's changes are proposed with
// their hunks; the accepted stay, the rejected are taken back off the
// disk by a three-way merge that keeps what the user typed since, and
// the kept bytes go to the hook.
func TestReviewOfACommandsChanges(t *testing.T) {
	o := newOwner(t, map[string]string{"c.txt": lines(30)})
	ctx := ctxT(t)
	turn := o.turn(fsm.ToolCall{ID: "b1", Name: "bash", Arguments: `{"command":"sed -i ..."}`})
	ran := changeLine(changeLine(lines(30), 3, "three"), 25, "twenty-five")
	o.write("c.txt", ran)
	if cr := NewCommandReview("rm x", "", []CommandChange{{Path: o.path("x"), Rel: "x", Binary: true}}); cr != nil {
		t.Fatal("a binary change is reviewable")
	}
	cr := NewCommandReview("sed -i ...", "done", []CommandChange{o.commandChange("c.txt", lines(30), ran)})
	if cr == nil || !cr.Proposes(o.path("c.txt")) || cr.Proposes(o.path("d.txt")) || cr.Output() != "done" {
		t.Fatalf("command review: %+v", cr)
	}
	var p *Proposal
	o.on(func() { p = o.review.ProposeCommand(turn, "b1", cr) })
	if p == nil {
		t.Fatal("the machine did not take the command's changes")
	}
	shown := o.told(Proposed)
	if len(shown) != 1 || shown[0].Proposal.Command != "sed -i ..." || shown[0].Proposal.NewTexts[0] != ran {
		t.Fatalf("shown: %+v", shown)
	}
	// The user types on another line meanwhile.
	typed := changeLine(ran, 15, "the user typed this")
	o.write("c.txt", typed)
	var id string
	o.on(func() { id = p.id })
	res, err := o.review.Decide(ctx, id, []string{"1"}, []string{"2"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := changeLine(typed, 25, "line 25"); o.read("c.txt") != want {
		t.Fatalf("on disk:\n%s\nwant the kept hunk, the user's line, the rejected hunk taken back:\n%s", o.read("c.txt"), want)
	}
	if !slices.Equal(res.Applied, []string{"1"}) || !slices.Equal(res.Rejected, []string{"2"}) {
		t.Fatalf("result %+v", res)
	}
	o.mu.Lock()
	completed := slices.Clone(o.completed)
	o.mu.Unlock()
	if len(completed) != 1 || len(completed[0].Kept) != 1 || completed[0].Kept[0].After != changeLine(lines(30), 3, "three") {
		t.Fatalf("completed: %+v", completed)
	}
}

// TestReviewDroppedWithTheTurn: a cancelled turn drops what waits: an
// edit's proposal is settled (who waits for it goes on) and a command's
// changes join the list to keep or discard, and the user is told.
func TestReviewDroppedWithTheTurn(t *testing.T) {
	o := newOwner(t, map[string]string{"a.txt": lines(10), "c.txt": lines(10)})
	ctx := ctxT(t)
	turn := o.turn(fsm.ToolCall{ID: "c1", Name: "edit_file", Arguments: `{"path":"a.txt"}`},
		fsm.ToolCall{ID: "b1", Name: "bash", Arguments: `{"command":"sed"}`})
	edit, id := o.propose(turn, "c1", o.edit("a.txt", changeLine(lines(10), 1, "one")))
	ran := changeLine(lines(10), 5, "five")
	o.write("c.txt", ran)
	cr := NewCommandReview("sed", "", []CommandChange{o.commandChange("c.txt", lines(10), ran)})
	var cmd *Proposal
	o.on(func() { cmd = o.review.ProposeCommand(turn, "b1", cr) })
	o.on(func() {
		if _, err := o.Step(fsm.Cancel{}); err != nil {
			t.Error(err)
		}
	})
	o.review.AwaitSettled(ctx, []*Proposal{edit, cmd})
	if !errors.Is(edit.err, ErrNoProposal) {
		t.Fatalf("a dropped proposal settled with %v", edit.err)
	}
	list, err := o.tree.CommandChanges(ctx)
	if err != nil || len(list) != 1 || list[0].Rel != "c.txt" {
		t.Fatalf("the command's changes are not to keep or discard: %+v, %v", list, err)
	}
	if told := o.told(CommandChanges); len(told) != 1 || told[0].Changes[0].Rel != "c.txt" {
		t.Fatalf("told: %+v", told)
	}
	if _, err := o.review.Decide(ctx, id, []string{AllHunks}, nil, ""); !errors.Is(err, ErrNoProposal) {
		t.Fatalf("a decision after the cancel: %v", err)
	}
	if o.read("a.txt") != lines(10) || o.read("c.txt") != ran {
		t.Fatal("the cancel wrote a file")
	}
}
