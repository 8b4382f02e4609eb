package changes

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/internal/gittest"
	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/workspace/gitcommit"
	"github.com/loom-lsp/loom-lsp/workspace/worktree"
)

// testWait bounds a test's wait for what must happen: long, so that a
// loaded machine does not fail a test that only waits.
const testWait = 90 * time.Second

// owner is a conversation as the package sees it, for its tests: one
// goroutine owns a real fsm.Machine and performs the actions the review
// is given (as workspace does), the files are real, in a real git
// repository; the editor has no buffers (CurrentText reads the disk,
// ApplyEdit writes through the writer).
type owner struct {
	t       *testing.T
	dir     string
	journal string
	m       *fsm.Machine
	tree    *Tree
	review  *Review
	reads   *tools.ReadTracker
	inbox   chan func()
	done    chan struct{}
	workers sync.WaitGroup
	turnCtx context.Context
	cancel  context.CancelFunc
	// beforeApply, when set, runs before each ApplyEdit (on a worker):
	// a user who types meanwhile.
	beforeApply func(attempt int)
	applies     int

	mu        sync.Mutex // guards what follows (any goroutine)
	notes     []Note
	completed []Completion
	wrote     []string
}

// newOwner starts a conversation under tools.edits = "review" in a new
// repository holding files.
func newOwner(t *testing.T, files map[string]string) *owner {
	t.Helper()
	return newOwnerAt(t, gittest.Repo(t, files), t.TempDir()+"/c.jsonl")
}

// newOwnerAt starts a conversation of the folder dir whose journal is
// journal (the next daemon's, when another had them).
func newOwnerAt(t *testing.T, dir, journal string) *owner {
	o := &owner{t: t, dir: dir, journal: journal, reads: tools.NewReadTracker(), inbox: make(chan func()), done: make(chan struct{})}
	o.m = fsm.New(fsm.Config{ReviewEdits: true, Tools: map[string]fsm.ToolSpec{
		"edit_file": {Mutating: true}, "bash": {Mutating: true}, "read_file": {}}})
	o.tree = New(o.dir, &sync.Mutex{}, Deps{Conv: o, Editor: o, Wrote: o.Wrote, Restoring: func([]string) {}, Redact: o.Redact})
	o.review = NewReview(o.tree, o, o.reads)
	o.turnCtx, o.cancel = context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case f := <-o.inbox:
				f()
			case <-o.done:
				return
			}
		}
	}()
	t.Cleanup(func() {
		close(o.done)
		<-stopped
		o.workers.Wait()
		o.cancel()
	})
	return o
}

// path is the absolute path of the folder's file rel.
func (o *owner) path(rel string) string { return o.dir + "/" + rel }

func (o *owner) read(rel string) string {
	o.t.Helper()
	b, err := os.ReadFile(o.path(rel))
	if err != nil {
		o.t.Fatal(err)
	}
	return string(b)
}

func (o *owner) write(rel, text string) {
	o.t.Helper()
	if err := os.WriteFile(o.path(rel), []byte(text), 0o644); err != nil {
		o.t.Fatal(err)
	}
}

// on runs f on the owner goroutine and waits for it.
func (o *owner) on(f func()) {
	o.t.Helper()
	if err := o.Do(context.Background(), f); err != nil {
		o.t.Fatal(err)
	}
}

// turn starts a turn whose model answers with calls; it returns the turn.
func (o *owner) turn(calls ...fsm.ToolCall) uint64 {
	o.t.Helper()
	var turn uint64
	o.on(func() {
		acts, err := o.m.Step(fsm.UserInput{Text: "change it"})
		if err != nil {
			o.t.Error(err)
			return
		}
		var req uint64
		for _, a := range acts {
			if s, ok := a.(fsm.SendLlmRequest); ok {
				req = s.Request
			}
		}
		if _, err := o.m.Step(fsm.LlmCompleted{Request: req, ToolCalls: calls}); err != nil {
			o.t.Error(err)
		}
		turn = o.m.State().Turn
	})
	return turn
}

// propose proposes e as call callID's edit and returns its proposal id.
func (o *owner) propose(turn uint64, callID string, e *tools.Edit) (*Proposal, string) {
	o.t.Helper()
	var p *Proposal
	o.on(func() { p = o.review.Propose(turn, callID, e) })
	if p == nil {
		o.t.Fatal("the machine did not take the proposal")
	}
	var id string
	o.on(func() { id = p.id })
	return p, id
}

// edit is an edit of rel from its text on disk to text.
func (o *owner) edit(rel, text string) *tools.Edit {
	return tools.NewEdit(o.dir, o.path(rel), false, o.read(rel), text, 0o644)
}

// result is the tool result the model reads for call callID ("", false
// while the call has none).
func (o *owner) result(callID string) (string, bool) {
	var content string
	var ok bool
	o.on(func() {
		for _, m := range o.m.Messages() {
			if m.Role == fsm.RoleTool && m.ToolCallID == callID {
				content, ok = m.Content, true
			}
		}
	})
	return content, ok
}

func (o *owner) told(kind NoteKind) []Note {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []Note
	for _, n := range o.notes {
		if n.Kind == kind {
			out = append(out, n)
		}
	}
	return out
}

// ReviewConversation and Conversation.

func (o *owner) Do(ctx context.Context, f func()) error {
	finished := make(chan struct{})
	select {
	case o.inbox <- func() { defer close(finished); f() }:
	case <-ctx.Done():
		return ctx.Err()
	case <-o.done:
		return errors.New("closed")
	}
	select {
	case <-finished:
		return nil
	case <-o.done:
		return errors.New("closed")
	}
}

func (o *owner) Post(f func()) {
	select {
	case o.inbox <- f:
	case <-o.done:
	}
}

func (o *owner) Go(f func()) {
	o.workers.Add(1)
	go func() { defer o.workers.Done(); f() }()
}

func (o *owner) Wait(ctx context.Context, ready <-chan struct{}) error {
	select {
	case <-ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-o.done:
		return errors.New("closed")
	}
}

func (o *owner) JournalPath() string          { return o.journal }
func (o *owner) Redact(text string) string    { return strings.ReplaceAll(text, "sk-SECRET", "***") }
func (o *owner) Warn(msg string, err error)   { o.t.Logf("%s: %v", msg, err) }
func (o *owner) Machine() *fsm.Machine        { return o.m }
func (o *owner) TurnContext() context.Context { return o.turnCtx }

// Step steps the machine and performs the review's actions, as the
// conversation does.
func (o *owner) Step(ev fsm.Event) ([]fsm.Action, error) {
	acts, err := o.m.Step(ev)
	for _, a := range acts {
		switch a := a.(type) {
		case fsm.ProposeChanges:
			o.review.Named(a)
		case fsm.ApplyChanges:
			o.review.Apply(a)
		case fsm.CancelInFlight, fsm.WaitForInput:
			o.review.Drop()
		}
	}
	return acts, err
}

func (o *owner) Tell(n Note) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.notes = append(o.notes, n)
}

func (o *owner) PostToolHooks(context.Context, Ran) []fsm.HookReport { return nil }

func (o *owner) Complete(c Completion) {
	o.mu.Lock()
	o.completed = append(o.completed, c)
	o.mu.Unlock()
	if _, err := o.Step(fsm.ToolCompleted{Turn: c.Turn, CallID: c.CallID, Result: c.Result, IsError: c.IsError}); err != nil {
		o.t.Error(err)
	}
}

func (o *owner) Dirty(string) bool { return false }
func (o *owner) Wrote(abs string, _ []byte, _ bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.wrote = append(o.wrote, abs)
}
func (o *owner) Document(string) (string, bool)                                { return "", false }
func (o *owner) SaveDocuments(context.Context, []string) []string              { return nil }
func (o *owner) AskHooks(context.Context, *gitcommit.Repo, Job) (bool, string) { return false, "" }

// Read runs f on the owner goroutine with the conversation as the Tree
// reads it.
func (o *owner) Read(ctx context.Context, f func(View)) error {
	return o.Do(ctx, func() {
		f(View{Prompt: "change it", Machine: o.m, Busy: o.m.State().Kind != fsm.WaitingForUserInput, TurnTime: func(uint64) time.Time { return time.Time{} }})
	})
}

func (o *owner) CurrentText(_ context.Context, _, path string) (string, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	return string(b), err == nil, err
}

// ApplyEdit writes e through the writer, refusing a file that is no
// longer e's old text (as the editor refuses a stale version).
func (o *owner) ApplyEdit(_ context.Context, _ string, e *tools.Edit) error {
	o.mu.Lock()
	o.applies++
	attempt := o.applies
	o.mu.Unlock()
	if o.beforeApply != nil {
		o.beforeApply(attempt)
	}
	w := worktree.New(o.dir)
	rel, err := w.Rel(e.Path)
	if err != nil {
		return err
	}
	expect := worktree.Text(e.OldText)
	if e.Created {
		expect = worktree.Version{}
	}
	return w.Write(worktree.Change{Rel: rel, Expect: expect, New: worktree.Text(e.NewText), Mode: e.Mode})
}
