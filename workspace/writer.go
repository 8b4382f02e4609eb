package workspace

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/workspace/worktree"
)

// Every write of a user's file goes through package worktree: a tool's
// edit (writeEdit), a review decision and a discard
// (changes.Tree.FolderWriter, RestoreWriter), and a revert's restores
// (package changes). None opens a user's file itself.

// writeEdit writes a tool's edit to disk, rooted where the edit's path
// and relative path say (the folder, its links resolved).
func (s *Conversation) writeEdit(e *tools.Edit) error {
	rel := filepath.FromSlash(e.RelPath)
	root, ok := strings.CutSuffix(e.Path, string(filepath.Separator)+rel)
	if !ok || !filepath.IsLocal(rel) {
		return fmt.Errorf("%w: path and relative path disagree", tools.ErrBadPath)
	}
	if root == "" {
		root = string(filepath.Separator)
	}
	w := worktree.New(root)
	w.Record = treePort{s}.Wrote
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
