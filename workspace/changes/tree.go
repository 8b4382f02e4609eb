package changes

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/tools/sandbox"
	"github.com/loom-lsp/loom-lsp/workspace/gitcommit"
	"github.com/loom-lsp/loom-lsp/workspace/journal"
	"github.com/loom-lsp/loom-lsp/workspace/worktree"
)

// ErrUndoRefused is wrapped by Undo's and UndoFile's errors when a guard
// refuses to undo; the error says why.
var ErrUndoRefused = gitcommit.ErrUndoRefused

// ErrRewindRefused is wrapped by Rewind's and Redo's errors when they
// refuse; the error says why. Nothing was changed then.
var ErrRewindRefused = errors.New("cannot rewind")

// ErrNoPendingCommit is returned by CommitPending when no commit was
// interrupted.
var ErrNoPendingCommit = errors.New("no interrupted commit to complete")

// Tree is the worktree of one conversation's folder as the change verbs
// see it: the one value they are methods of. It holds the folder's
// writer (every write goes through package worktree), the repository
// (opened per verb, and checked against the one the folder was opened
// or trusted with) and the folder's worktree lock, which the folder's
// conversations share so that no verb races the agent's next edit.
//
// Its state (Log, the rewinds a redo can undo, an interrupted commit) is
// owned by the conversation's goroutine, like the conversation's own:
// the verbs touch it only in functions run through Conversation.Read and
// in their Outcome's Then.
type Tree struct {
	dir  string
	lock *sync.Mutex
	conv Conversation
	ed   Editor
	deps Deps

	// Log are the conversation's auto-commits.
	Log Log
	// rewinds are the files rewinds a Redo can undo, newest last;
	// cleared when a turn starts (TurnStarted).
	rewinds []*rewindRecord
	// pending is a commit the daemon's death interrupted, found in the
	// journal on resume; CommitPending makes it.
	pending *journal.CommitRecord
	// commandChanges are the commands' changes reported and not yet kept
	// or discarded (commandchanges.go).
	commandChanges []CommandChange
	// hooksTold is set once the user was told that their git hooks did
	// not run for an agent's commit (any goroutine: the hook's worker).
	hooksTold atomic.Bool
}

// Conversation is what the verbs need of the conversation whose changes
// they are: to read it on its goroutine, to ask its user, and the
// editor's text of a call's file. What they change of it — its journal,
// its machine, what the user is told — they return (Outcome), and
// package workspace applies.
type Conversation interface {
	// Read runs f on the conversation's goroutine, given the
	// conversation as the verbs read it, and waits for it.
	Read(ctx context.Context, f func(View)) error
	// AskHooks asks the user whether their git hooks run (in the sandbox)
	// for the commit of job in repo, under tools.bash = "ask", unless a
	// rule allows them; reason says why not (the hook's worker).
	AskHooks(ctx context.Context, repo *gitcommit.Repo, job Job) (ok bool, reason string)
	// CurrentText is the file's text as the user sees it now (the open
	// buffer, the editor's store, else the disk); ApplyEdit writes e, an
	// edit of call callID, as a tool's edit is written (the open buffer
	// through the editor, else the disk through the writer).
	CurrentText(ctx context.Context, callID, path string) (text string, exists bool, err error)
	ApplyEdit(ctx context.Context, callID string, e *tools.Edit) error
}

// Editor is what the verbs need of the editor's buffers, the folder's
// (any goroutine).
type Editor interface {
	// Dirty reports whether the editor holds unsaved changes of the file
	// at abs.
	Dirty(abs string) bool
	// Document is the editor's text of the file at abs, when it is open;
	// SaveDocuments asks the editor to save those of paths it can, and
	// returns those it saved.
	Document(abs string) (text string, open bool)
	SaveDocuments(ctx context.Context, paths []string) []string
}

// View is the conversation as the verbs read it, on its goroutine
// (Conversation.Read, and an Outcome's Then).
type View struct {
	// Scrub names the variable of the model's API key, kept out of git's
	// environment.
	Scrub string
	// Sandbox is the sandbox the conversation's commands run in (nil:
	// tools.sandbox = "off"); Config the configuration it runs with;
	// Prompt the prompt of its turn; AgentFiles the files the agent's
	// tools changed in the conversation.
	Sandbox    *sandbox.Sandbox
	Config     config.Config
	Prompt     string
	AgentFiles []string
	// Busy reports whether a turn is in flight.
	Busy bool
	// Machine is the conversation's state machine, to read only.
	Machine *fsm.Machine
	// TurnTime is when turn started (zero when not known: a turn of a
	// resumed conversation).
	TurnTime func(turn uint64) time.Time
}

// Deps is what a Tree is made with.
type Deps struct {
	Conv   Conversation
	Editor Editor
	// Check, when set, refuses a repository other than the folder's.
	Check func(*gitcommit.Repo) error
	// Redact masks the secrets loom knows in text (any goroutine).
	Redact func(string) string
	// KeepHow and DiscardHow say how the user keeps and discards
	// commands' changes in this front end ("": the LSP commands
	// loom.commit, loom.discard).
	KeepHow, DiscardHow string
	// Wrote records a write of the conversation's own text (a review
	// decision, a discard): its watcher echo is no change; Restoring notes
	// that loom itself is about to rewrite the files (relative to the
	// folder): no news for the user (any goroutine).
	Wrote     func(abs string, content []byte, present bool)
	Restoring func(rels []string)
}

// NoteKind is what a Note is.
type NoteKind int

const (
	// Info is news; Error a failure; Commit an auto-commit made;
	// Proposed a proposal waiting for the user's review; CommandChanges
	// commands' changes to keep or discard.
	Info NoteKind = iota
	Error
	Commit
	Proposed
	CommandChanges
)

// Note is what a verb tells the user.
type Note struct {
	Kind    NoteKind
	Turn    uint64
	Text    string
	Visible bool
	// Commit is the commit made (Kind Commit), and Notes what the user
	// must know of it.
	Commit *gitcommit.Result
	Notes  []string
	// Proposal is the proposal shown (Kind Proposed); Changes the
	// commands' changes (Kind CommandChanges).
	Proposal *ProposalNote
	Changes  []CommandChange
}

// New returns the Tree of the folder at dir, whose worktree lock is
// lock.
func New(dir string, lock *sync.Mutex, d Deps) *Tree {
	return &Tree{dir: dir, lock: lock, conv: d.Conv, ed: d.Editor, deps: d}
}

// Lock is the folder's worktree lock: what writes the worktree for a
// conversation holds it (a batch's mutating tools and its hook, a verb).
func (t *Tree) Lock() *sync.Mutex { return t.lock }

// checkRepo refuses a repository other than the folder's.
func (t *Tree) checkRepo(repo *gitcommit.Repo) error {
	if t.deps.Check == nil {
		return nil
	}
	return t.deps.Check(repo)
}

// redact masks the secrets loom knows in text.
func (t *Tree) redact(text string) string {
	if t.deps.Redact == nil {
		return text
	}
	return t.deps.Redact(text)
}

// TurnStarted forgets the rewinds a redo could undo: a new prompt ends
// them. On the conversation's goroutine.
func (t *Tree) TurnStarted() { t.rewinds = nil }

// FolderWriter is the writer of the folder's files whose writes are the
// conversation's own texts: neither news for the user nor a change to
// tell the model (a review decision, a discard).
func (t *Tree) FolderWriter() *worktree.Writer {
	w := worktree.New(t.dir)
	w.Record = t.deps.Wrote
	return w
}

// RestoreWriter is the writer of the repository at top for a revert's
// restores: its writes are loom's own changes, no news for the user (the
// model is told, as after any change it did not make itself).
func (t *Tree) RestoreWriter(top string) *worktree.Writer {
	w := worktree.New(top)
	w.Record = func(abs string, _ []byte, _ bool) { t.deps.Restoring(RelPaths(t.dir, []string{abs})) }
	return w
}
