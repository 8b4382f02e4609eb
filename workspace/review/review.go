// Package review splits an agent's change to a file into hunks the user
// accepts or rejects one by one, and applies a chosen subset of them
// three-way: onto the file as it is now, so that whatever the user typed
// meanwhile stays. It is pure text work on go-udiff's line edits; the
// workspace does the I/O.
package review

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// Change is a proposed change to one file and its hunks.
type Change struct {
	// Old is the text the change was computed from, New the agent's text.
	Old, New string
	// File is what the user reviews: path, kind, diff and hunks.
	File fsm.FileChange
	// edits[i] is the line edit of File.Hunks[i], in Old's byte offsets.
	edits []udiff.Edit
}

// Split computes the hunks turning old into new for the file at rel
// (slash-separated, relative to the workspace root). Each contiguous run
// of changed lines is one hunk; hunk ids are firstID, firstID+1, … so
// that the ids of several files of one proposal never collide.
func Split(rel, old, new string, created bool, firstID int) *Change {
	c := &Change{Old: old, New: new}
	c.File = fsm.FileChange{Path: rel, Kind: fsm.ChangeEdit}
	from, to := "a/"+rel, "b/"+rel
	if created {
		c.File.Kind = fsm.ChangeCreate
		from = "/dev/null"
	}
	edits := udiff.Lines(old, new)
	c.File.Diff = unified(from, to, old, edits)
	for i, e := range edits {
		id := strconv.Itoa(firstID + i)
		start, end := lineOf(old, e.Start), lineOf(old, e.End)
		c.File.Hunks = append(c.File.Hunks, fsm.Hunk{ID: id, Diff: hunkBody(unified(from, to, old, []udiff.Edit{e})), StartLine: start, EndLine: end})
		c.edits = append(c.edits, e)
	}
	return c
}

// unified renders edits of text as a unified diff with 3 lines of
// context; "" when there are none.
func unified(from, to, text string, edits []udiff.Edit) string {
	if len(edits) == 0 {
		return ""
	}
	u, err := udiff.ToUnified(from, to, text, edits, 3)
	if err != nil {
		return ""
	}
	return u
}

// hunkBody drops the "---"/"+++" header of a one-hunk diff.
func hunkBody(d string) string {
	if i := strings.Index(d, "@@"); i >= 0 {
		return d[i:]
	}
	return d
}

// lineOf returns the 0-based line of byte offset off in text.
func lineOf(text string, off int) int { return strings.Count(text[:off], "\n") }

// HunkIDs returns the ids of the change's hunks, in order.
func (c *Change) HunkIDs() []string {
	ids := make([]string, len(c.File.Hunks))
	for i, h := range c.File.Hunks {
		ids[i] = h.ID
	}
	return ids
}

// Result is what applying a subset of hunks gave.
type Result struct {
	// Text is the file's new text: current with the applied hunks.
	Text string
	// Applied and Conflicts are hunk ids: applied ones, and accepted ones
	// that overlap what the user changed meanwhile (left out).
	Applied, Conflicts []string
}

// Apply applies the accepted hunks of c onto current, the file's text now
// (Old plus whatever the user changed since). The user's edits are kept;
// an accepted hunk that overlaps them is left out and named in
// Conflicts. The rejected hunks never appear in Text.
func (c *Change) Apply(current string, accepted []string) (Result, error) {
	var user []udiff.Edit
	if current != c.Old { // the common case costs no diff
		user = udiff.Lines(c.Old, current)
	}
	var take []udiff.Edit
	var res Result
	for i, h := range c.File.Hunks {
		if !slices.Contains(accepted, h.ID) {
			continue
		}
		e := c.edits[i]
		if _, ok := udiff.Merge([]udiff.Edit{e}, user); !ok || touches(e, user) {
			res.Conflicts = append(res.Conflicts, h.ID)
			continue
		}
		take = append(take, e)
		res.Applied = append(res.Applied, h.ID)
	}
	merged, ok := udiff.Merge(take, user)
	if !ok {
		// Each hunk merged alone and hunks never overlap each other, so
		// this is a bug, not the user's doing.
		return Result{}, fmt.Errorf("review %s: the accepted hunks conflict with each other", c.File.Path)
	}
	text, err := udiff.Apply(c.Old, merged)
	if err != nil {
		return Result{}, fmt.Errorf("review %s: %w", c.File.Path, err)
	}
	res.Text = text
	return res, nil
}

// touches reports whether e and a user edit change the same place: two
// insertions at one point, or one inside the other's span, which Merge
// would order arbitrarily rather than call a conflict.
func touches(e udiff.Edit, user []udiff.Edit) bool {
	for _, u := range user {
		if u.Start == e.Start && (u.Start == u.End || e.Start == e.End) && u != e {
			return true
		}
	}
	return false
}
