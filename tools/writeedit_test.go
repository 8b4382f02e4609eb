package tools

import (
	"path/filepath"
	"strings"

	"github.com/loom-lsp/loom-lsp/workspace/worktree"
)

// WriteFileAtomic applies e to disk as the workspace does: through the
// one writer, rooted where e's path and relative path say.
func WriteFileAtomic(e *Edit) error {
	rel := filepath.FromSlash(e.RelPath)
	root, ok := strings.CutSuffix(e.Path, string(filepath.Separator)+rel)
	if !ok || !filepath.IsLocal(rel) {
		return ErrBadPath
	}
	expect := worktree.Text(e.OldText)
	if e.Created {
		expect = worktree.Absent
	}
	return worktree.New(root).Write(worktree.Change{Rel: e.RelPath, Expect: expect, New: worktree.Text(e.NewText), Mode: e.Mode})
}
