package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/loom-lsp/loom-lsp/workspace/gitcommit"
	"github.com/loom-lsp/loom-lsp/workspace/worktree"
)

// A revert (an undo, an undo of one file, a rewind and its redo) is
// planned by gitcommit.Revert, which moves the branch and returns the
// files to restore on disk; they are written here, through the folder's
// one writer, after the branch moved. A file the user changed while the
// revert ran (a save during the dozen git processes) is left as it is
// and named: their version stays on disk, the restored one is in git.
//
// The restores are journaled before the first is written ("restore") and
// when they are done ("restore-end"): a daemon that dies in between
// leaves a "restore" with no end, which the resumed conversation finishes
// (a file still as planned from is restored, one changed since is left)
// and reports.

// restoreRecord is the journal record of a revert's restores.
type restoreRecord struct {
	// Top is the repository's top; What says which revert, for people;
	// Head is HEAD after it.
	Top   string        `json:"top"`
	What  string        `json:"what"`
	Head  string        `json:"head,omitempty"`
	Files []restoreFile `json:"files,omitempty"`
}

// restoreFile is one planned restore.
type restoreFile struct {
	Rel string `json:"rel"`
	// Expect is the SHA-256 of the content it was planned from, "" when
	// the file was absent.
	Expect string `json:"expect,omitempty"`
	// New is the content to restore, nil to delete the file.
	New  *string `json:"new,omitempty"`
	Mode uint32  `json:"mode,omitempty"`
}

// versionSum is the journal's hash of v ("" for absent).
func versionSum(v worktree.Version) string {
	if !v.Present {
		return ""
	}
	sum := sha256.Sum256([]byte(v.Text))
	return hex.EncodeToString(sum[:])
}

func newRestoreRecord(top, what, head string, changes []worktree.Change) *restoreRecord {
	rec := &restoreRecord{Top: top, What: what, Head: head}
	for _, c := range changes {
		f := restoreFile{Rel: c.Rel, Expect: versionSum(c.Expect), Mode: uint32(c.Mode)}
		if c.New.Present {
			text := c.New.Text
			f.New = &text
		}
		rec.Files = append(rec.Files, f)
	}
	return rec
}

// restoreWriter is the writer of the repository at top for a revert's
// restores: its writes are loom's own changes, no news for the user (the
// model is told, as after any change it did not make itself).
func (s *Conversation) restoreWriter(top string) *worktree.Writer {
	w := worktree.New(top)
	w.Record = func(abs string, _ []byte, _ bool) { s.own.expect(relPaths(s.folder.dir, []string{abs})) }
	return w
}

// applyRestores journals rv's restores, writes them through the writer
// and journals their end. It returns the files left as they are, with
// why.
func (s *Conversation) applyRestores(ctx context.Context, top, what string, rv *gitcommit.Reverted) []gitcommit.Conflict {
	if len(rv.Restores) == 0 {
		return nil
	}
	rec := newRestoreRecord(top, what, rv.Head, rv.Restores)
	s.call(ctx, func() {
		// One write(2) before the first file: it survives kill -9.
		s.writeJournal(func(j *journal) error { return j.writeLine(journalRecord{Type: "restore", Restore: rec}) })
	})
	w := s.restoreWriter(top)
	var left []gitcommit.Conflict
	for i, err := range w.WriteAll(rv.Restores) {
		if err != nil {
			rel := rv.Restores[i].Rel
			left = append(left, gitcommit.Conflict{Path: rel, Reason: restoreLeft(rel, err, rv)})
		}
	}
	s.call(ctx, func() {
		s.writeJournal(func(j *journal) error { return j.writeLine(journalRecord{Type: "restore-end"}) })
	})
	return left
}

// restoreLeft says why rel was not restored, and where each version is.
func restoreLeft(rel string, err error, rv *gitcommit.Reverted) string {
	where := "git show " + gitcommit.Short(rv.Head) + ":" + rel
	if errors.Is(err, worktree.ErrChanged) {
		return fmt.Sprintf("%s changed on disk while it was being restored, so it is left as you saved it; the restored version: %s", rel, where)
	}
	return fmt.Sprintf("%s was not restored (%v); the restored version: %s", rel, err, where)
}

// finishRestore completes restores a daemon's death cut short (found on
// resume) and says what it did.
func (s *Conversation) finishRestore(rec *restoreRecord) {
	if rec == nil {
		return
	}
	w := s.restoreWriter(rec.Top)
	var done, left []string
	for _, f := range rec.Files {
		want := worktree.Absent
		if f.New != nil {
			want = worktree.Text(*f.New)
		}
		cur, _, err := w.Read(f.Rel)
		switch {
		case err != nil:
			left = append(left, fmt.Sprintf("%s (%v)", f.Rel, err))
		case cur == want:
			done = append(done, f.Rel)
		case versionSum(cur) != f.Expect:
			left = append(left, f.Rel+" (changed since)")
		default:
			if err := w.Write(worktree.Change{Rel: f.Rel, Expect: cur, New: want, Mode: fs.FileMode(f.Mode)}); err != nil {
				left = append(left, fmt.Sprintf("%s (%v)", f.Rel, err))
				continue
			}
			done = append(done, f.Rel)
		}
	}
	s.writeJournal(func(j *journal) error { return j.writeLine(journalRecord{Type: "restore-end"}) })
	msg := fmt.Sprintf("the daemon stopped while %s was restoring files (HEAD %s); finished now", rec.What, gitcommit.Short(rec.Head))
	if len(done) > 0 {
		msg += ": restored " + strings.Join(done, ", ")
	}
	if len(left) > 0 {
		msg += "; left as they are: " + strings.Join(left, ", ") + "; their restored versions: git show " + gitcommit.Short(rec.Head) + ":<file>"
	}
	s.notify(Notification{Kind: NoteInfo, Text: msg, Visible: true})
}

// describeRestore is a restore record's line in DescribeJournal.
func describeRestore(st journalStep) string {
	if st.restoreEnd || st.restore == nil {
		return "restores ended"
	}
	var rels []string
	for _, f := range st.restore.Files {
		rels = append(rels, f.Rel)
	}
	return fmt.Sprintf("restores of %s planned (HEAD %s): %s", st.restore.What, gitcommit.Short(st.restore.Head), strings.Join(rels, ", "))
}
