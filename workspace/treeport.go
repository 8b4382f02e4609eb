package workspace

import (
	"context"
	"errors"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/tools/sandbox"
	"github.com/loom-lsp/loom-lsp/workspace/changes"
	"github.com/loom-lsp/loom-lsp/workspace/gitcommit"
	"github.com/loom-lsp/loom-lsp/workspace/journal"
)

// The change verbs (undo, undo of one file, rewind, redo, the
// completion of an interrupted commit) are methods of the conversation's
// changes.Tree, which holds the folder's writer, repository and worktree
// lock; the conversation lends it its goroutine, machine, journal and
// user through treePort.

// ErrNoPendingCommit is returned by CommitPending when no commit was
// interrupted.
var ErrNoPendingCommit = changes.ErrNoPendingCommit

// Changes is the conversation's worktree, whose methods are the change
// verbs (loom.undo, loom.undoFile, loom.rewind, loom.redo, loom.commit).
func (s *Conversation) Changes() *changes.Tree { return s.changes }

// treePort is what the conversation lends its changes.Tree.
type treePort struct{ s *Conversation }

func (p treePort) Do(ctx context.Context, f func()) error { return p.s.call(ctx, f) }
func (p treePort) Post(f func())                          { p.s.post(f) }
func (p treePort) WaitTurnEnd(ctx context.Context) (bool, error) {
	return p.s.waitTurnEnd(ctx)
}
func (p treePort) Dirty(abs string) bool   { return p.s.folder.host.overlay.Dirty(abs) }
func (p treePort) Restoring(rels []string) { p.s.own.expect(rels) }
func (p treePort) Wrote(abs string, content []byte, present bool) {
	if present {
		p.s.writes.expect(abs, content)
	}
}
func (p treePort) Scrub() string                           { return p.s.cfg.Model.APIKeyEnv }
func (p treePort) Sandbox() *sandbox.Sandbox               { return p.s.env.Sandbox }
func (p treePort) Machine() *fsm.Machine                   { return p.s.m }
func (p treePort) Step(ev fsm.Event) ([]fsm.Action, error) { return p.s.step(ev) }
func (p treePort) Busy() bool                              { return p.s.busy() }
func (p treePort) Journal(rec journal.Record) {
	p.s.writeJournal(func(j *journal.File) error { return j.WriteLine(rec) })
}

// Tell shows n as the conversation's notification.
func (p treePort) Tell(n changes.Note) {
	kind := map[changes.NoteKind]NotificationKind{changes.Info: NoteInfo, changes.Error: NoteError, changes.Commit: NoteCommit,
		changes.Proposed: NoteProposal, changes.CommandChanges: NoteCommandChanges}[n.Kind]
	note := Notification{Kind: kind, Turn: n.Turn, Text: n.Text, Visible: n.Visible, Proposal: n.Proposal, Changes: n.Changes}
	if n.Commit != nil {
		note.Commit = commitNote(n.Commit)
		note.Commit.Notes = n.Notes
	}
	p.s.notify(note)
}

// relPaths makes each of paths relative to top (changes.RelPaths).
func relPaths(top string, paths []string) []string { return changes.RelPaths(top, paths) }

func (p treePort) Document(abs string) (string, bool) {
	text, _, open := p.s.folder.host.overlay.Document(abs)
	return text, open
}

// SaveDocuments asks the editor to save paths; a failure is logged (an
// editor that cannot save saves none).
func (p treePort) SaveDocuments(ctx context.Context, paths []string) []string {
	saved, err := p.s.folder.host.opts.Editor.SaveDocuments(ctx, paths)
	if err != nil && !errors.Is(err, ErrUnsupported) {
		p.s.folder.log.Warn("saving documents failed", "err", err)
	}
	return saved
}

func (p treePort) Redact(text string) string { return p.s.folder.host.redactor.String(text) }
func (p treePort) Config() config.Config     { return p.s.cfg }
func (p treePort) Prompt() string            { return p.s.turnPrompt }

func (p treePort) AgentFiles() []string {
	var out []string
	for f := range p.s.git.agentFiles {
		out = append(out, f)
	}
	return out
}

func (p treePort) IndexLeft(entries []gitcommit.Entry) {
	if len(entries) == 0 {
		return
	}
	s, turn := p.s, p.s.m.State().Turn
	tell := func(kind NotificationKind, text string) {
		s.post(func() { s.notify(Notification{Kind: kind, Turn: turn, Text: text, Visible: true}) })
	}
	s.folder.followIndex(indexLeft{entries: entries, tell: tell}, s.cfg.Model.APIKeyEnv)
}

func (p treePort) KeepHow() (string, string) {
	return p.s.folder.host.opts.KeepHow, p.s.folder.host.opts.DiscardHow
}

func (p treePort) TurnTime(turn uint64) time.Time { return p.s.turnTimes[turn] }

func (p treePort) ApplyEdit(ctx context.Context, callID string, e *tools.Edit) error {
	return callRun{s: p.s}.applyEdit(ctx, callID, e)
}
