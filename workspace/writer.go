package workspace

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/workspace/worktree"
)

// Every write of a user's file goes through package worktree: a tool's
// edit (writeEdit), a review decision and a discard
// (changes.Tree.FolderWriter, RestoreWriter), and a revert's restores
// (ChangeVerbs.revert, through changes.WriteRestores). None opens a user's file itself.

// writeEdit writes a tool's edit to disk, rooted where the edit's path
// and relative path say (the folder, its links resolved).
func (r callRun) writeEdit(e *tools.Edit) error {
	rel := filepath.FromSlash(e.RelPath)
	root, ok := strings.CutSuffix(e.Path, string(filepath.Separator)+rel)
	if !ok || !filepath.IsLocal(rel) {
		return fmt.Errorf("%w: path and relative path disagree", tools.ErrBadPath)
	}
	if root == "" {
		root = string(filepath.Separator)
	}
	w := worktree.New(root)
	w.Record = func(abs string, content []byte, present bool) {
		if present {
			r.s.writes.expect(abs, content)
		}
	}
	expect := worktree.Text(e.OldText)
	if e.Created {
		expect = worktree.Absent
	}
	err := w.Write(worktree.Change{Rel: e.RelPath, Expect: expect, New: worktree.Text(e.NewText), Mode: e.Mode})
	if errors.Is(err, worktree.ErrChanged) {
		return fmt.Errorf("%w; read it again", err)
	}
	return err
}

// version is p as the writer's Version.
func (p preImage) version() worktree.Version {
	return worktree.Version{Text: p.text, Present: p.present}
}

// applyEdit lands an edit: through the editor when the document is open
// there (a versioned edit, refused if the user typed meanwhile), else
// atomically on disk. callID is the tool call that computed it.
func (r callRun) applyEdit(ctx context.Context, callID string, e *tools.Edit) error {
	s := r.s
	// The tools refuse these already; whatever else computes an edit
	// (a review applying a proposal later) meets the same wall.
	if err := config.CheckProtected(s.folder.dir, e.Path); err != nil {
		return err
	}
	overlay := s.folder.host.overlay
	// The watcher may see the write before the read record below holds
	// it: that echo is ours, not news.
	s.writes.expect(e.Path, []byte(e.NewText))
	for attempt := 1; ; attempt++ {
		text, version, open := overlay.Document(e.Path)
		if !open {
			break
		}
		if text != e.OldText {
			// The user typed since the edit was computed: rebase it onto
			// their text, unless both changed the same lines.
			merged, err := tools.Rebase(e.OldText, e.NewText, text)
			if err != nil {
				return fmt.Errorf("%s changed in the editor while the edit was computed, on the lines it changes (%v); read it again", e.RelPath, err)
			}
			*e = *tools.NewEdit(s.folder.dir, e.Path, e.Created, text, merged, e.Mode)
			s.writes.expect(e.Path, []byte(e.NewText))
		}
		err := s.folder.host.opts.Editor.ApplyEdit(ctx, DocumentEdit{Path: e.Path, Version: version, Edits: e.TextEdits, NewText: e.NewText})
		switch {
		case err == nil:
			// The editor reports its new text with a didChange; wait for it
			// so that the next read sees the edit.
			settle, cancel := context.WithTimeout(ctx, editSettleTimeout)
			overlay.waitChanged(e.Path, version, settle.Done())
			cancel()
			s.reads.Record(e.Path, []byte(e.NewText))
			return nil
		case errors.Is(err, ErrEditRejected) && attempt < maxEditAttempts:
			// The user typed while the edit was on its way: wait for
			// their didChange, then rebase onto it.
			settle, cancel := context.WithTimeout(ctx, editSettleTimeout)
			overlay.waitChanged(e.Path, version, settle.Done())
			cancel()
			continue
		case errors.Is(err, ErrEditRejected):
			return fmt.Errorf("the editor refused the edit to %s (%v): the document kept changing; read it again", e.RelPath, err)
		case !errors.Is(err, ErrUnsupported):
			return fmt.Errorf("apply the edit to %s: %w", e.RelPath, err)
		}
		break
	}
	if store, ok := s.folder.host.opts.Editor.(DocumentStore); ok {
		// Recorded first: the client may write the disk before it answers,
		// and the watcher must see our own text there, not a change.
		s.reads.Record(e.Path, []byte(e.NewText))
		err := store.WriteDocument(ctx, s.caller(callID), e.Path, e.NewText)
		if err == nil {
			return nil
		}
		s.reads.Record(e.Path, []byte(e.OldText))
		if !errors.Is(err, ErrUnsupported) {
			return fmt.Errorf("write %s through the editor: %w", e.RelPath, err)
		}
	}
	if err := r.writeEdit(e); err != nil {
		return err
	}
	s.reads.Record(e.Path, []byte(e.NewText))
	return nil
}
