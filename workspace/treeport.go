package workspace

import (
	"context"
	"errors"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/workspace/changes"
	"github.com/loom-lsp/loom-lsp/workspace/journal"
)

// The change verbs (undo, undo of one file, rewind, redo, the
// completion of an interrupted commit, the commands' changes kept or
// discarded) are methods of the conversation's changes.Tree, which holds
// the folder's writer, repository and worktree lock: they read the
// conversation through treePort (Read) and return what to do, which the
// conversation's ChangeVerbs apply (changeapply.go).

// ErrNoPendingCommit is returned by CommitPending when no commit was
// interrupted.
var ErrNoPendingCommit = changes.ErrNoPendingCommit

// Changes are the conversation's change verbs (loom.undo, loom.undoFile,
// loom.rewind, loom.redo, loom.commit, loom.discard).
func (s *Conversation) Changes() *ChangeVerbs { return s.verbs }

// newChangeVerbs makes the conversation's changes.Tree and the verbs that
// apply what it returns.
func newChangeVerbs(s *Conversation) (*changes.Tree, *ChangeVerbs) {
	f := s.folder
	tree := changes.New(f.dir, &f.worktreeMu, changes.Deps{
		Conv:       treePort{s},
		Editor:     folderEditor{f},
		Check:      f.repo.check,
		Redact:     func(text string) string { return f.host.redactor.String(text) },
		KeepHow:    f.host.opts.KeepHow,
		DiscardHow: f.host.opts.DiscardHow,
		Wrote: func(abs string, content []byte, present bool) {
			if present {
				s.writes.expect(abs, content)
			}
		},
		Restoring: s.own.expect,
	})
	return tree, &ChangeVerbs{
		tree:      tree,
		lock:      &f.worktreeMu,
		afterTurn: s.waitTurnEnd,
		do:        s.loop.call,
		post:      s.loop.post,
		view:      treePort{s}.view,
		journal:   func(rec journal.Record) { s.jr.record(rec) },
		step:      s.step,
		indexLeft: s.leaveIndex,
		tell:      func(n changes.Note) { s.out.notify(noteOf(n)) },
	}
}

// treePort is what the conversation lends its changes.Tree
// (changes.Conversation): Read, AskHooks (hook.go), CurrentText
// (review.go) and ApplyEdit.
type treePort struct{ s *Conversation }

func (p reviewPort) Do(ctx context.Context, f func()) error { return p.s.loop.call(ctx, f) }
func (p reviewPort) Post(f func())                          { p.s.loop.post(f) }

// Read runs f on the conversation's goroutine with the conversation as
// the Tree reads it.
func (p treePort) Read(ctx context.Context, f func(changes.View)) error {
	return p.s.loop.call(ctx, func() { f(p.view()) })
}

// view is the conversation as the Tree reads it; on its goroutine.
func (p treePort) view() changes.View {
	s := p.s
	v := changes.View{Scrub: s.cfg.Model.APIKeyEnv, Sandbox: s.env.Sandbox, Config: s.cfg, Prompt: s.turnPrompt,
		Busy: s.busy(), Machine: s.m, TurnTime: func(turn uint64) time.Time { return s.turnTimes[turn] }}
	for f := range s.git.agentFiles {
		v.AgentFiles = append(v.AgentFiles, f)
	}
	return v
}

func (p reviewPort) Machine() *fsm.Machine                   { return p.s.m }
func (p reviewPort) Step(ev fsm.Event) ([]fsm.Action, error) { return p.s.step(ev) }

// Tell shows n as the conversation's notification.
func (p reviewPort) Tell(n changes.Note) { p.s.out.notify(noteOf(n)) }

// noteOf is the notification of a change verb's note.
func noteOf(n changes.Note) Notification {
	kind := map[changes.NoteKind]NotificationKind{changes.Info: NoteInfo, changes.Error: NoteError, changes.Commit: NoteCommit,
		changes.Proposed: NoteProposal, changes.CommandChanges: NoteCommandChanges}[n.Kind]
	note := Notification{Kind: kind, Turn: n.Turn, Text: n.Text, Visible: n.Visible, Proposal: n.Proposal, Changes: n.Changes}
	if n.Commit != nil {
		note.Commit = commitNote(n.Commit)
		note.Commit.Notes = n.Notes
	}
	return note
}

// relPaths makes each of paths relative to top (changes.RelPaths).
func relPaths(top string, paths []string) []string { return changes.RelPaths(top, paths) }

func (p reviewPort) Redact(text string) string { return p.s.folder.host.redactor.String(text) }

func (p treePort) ApplyEdit(ctx context.Context, callID string, e *tools.Edit) error {
	return callRun{s: p.s}.applyEdit(ctx, callID, e)
}

// folderEditor is the editor's buffers of a folder, as the change verbs
// see them (changes.Editor).
type folderEditor struct{ f *Folder }

func (e folderEditor) Dirty(abs string) bool { return e.f.host.overlay.Dirty(abs) }

func (e folderEditor) Document(abs string) (string, bool) {
	text, _, open := e.f.host.overlay.Document(abs)
	return text, open
}

// SaveDocuments asks the editor to save paths; a failure is logged (an
// editor that cannot save saves none).
func (e folderEditor) SaveDocuments(ctx context.Context, paths []string) []string {
	saved, err := e.f.host.opts.Editor.SaveDocuments(ctx, paths)
	if err != nil && !errors.Is(err, ErrUnsupported) {
		e.f.log.Warn("saving documents failed", "err", err)
	}
	return saved
}
