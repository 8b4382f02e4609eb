package journal

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/workspace/gitcommit"
	"github.com/loom-lsp/loom-lsp/workspace/worktree"
)

// CommitRecord is a journal record of the auto-commit: "commit" when it
// starts (Plan, RunHooks), "commit-end" when it ends (SHA or Error). A
// "commit" with no "commit-end" after it was cut short by the daemon's
// death.
type CommitRecord struct {
	Plan     *gitcommit.Plan `json:"plan,omitempty"`
	RunHooks bool            `json:"runHooks,omitempty"`
	SHA      string          `json:"sha,omitempty"`
	Error    string          `json:"error,omitempty"`
}

// describeCommit is a commit record's line in Describe.
func describeCommit(st Step) string {
	switch {
	case st.CommitEnd && st.Commit != nil && st.Commit.Error != "":
		return "auto-commit failed: " + st.Commit.Error
	case st.CommitEnd && st.Commit != nil:
		return "auto-commit made " + st.Commit.SHA
	case st.CommitEnd:
		return "auto-commit ended"
	case st.Commit.Plan != nil:
		return "auto-commit started: " + strings.Join(st.Commit.Plan.Files(), ", ")
	}
	return "auto-commit started"
}

// RestoreRecord is the journal record of a revert's restores.
type RestoreRecord struct {
	// Top is the repository's top; What says which revert, for people;
	// Head is HEAD after it.
	Top  string `json:"top"`
	What string `json:"what"`
	Head string `json:"head,omitempty"`
	// Dropped are the commits the move takes off the branch, if any.
	Dropped []string      `json:"dropped,omitempty"`
	Files   []RestoreFile `json:"files,omitempty"`
	// Rewind is the conversation's side of a files rewind whose restores
	// these are: the fsm.Rewind the rewind steps once they are written. A
	// "restore-end" of a rewind carries it again with the files it left
	// (Left). A resume that finds the restores and not the event steps it
	// (Replayed.PendingRewind).
	Rewind *fsm.Rewind `json:"rewind,omitempty"`
}

// RestoreFile is one planned restore.
type RestoreFile struct {
	Rel string `json:"rel"`
	// Expect is the SHA-256 of the content it was planned from, "" when
	// the file was absent.
	Expect string `json:"expect,omitempty"`
	// New is the content to restore, nil to delete the file.
	New  *string `json:"new,omitempty"`
	Mode uint32  `json:"mode,omitempty"`
}

// VersionSum is the journal's hash of v ("" for absent).
func VersionSum(v worktree.Version) string {
	if !v.Present {
		return ""
	}
	sum := sha256.Sum256([]byte(v.Text))
	return hex.EncodeToString(sum[:])
}

func NewRestoreRecord(top, what string, p gitcommit.PlannedRevert) *RestoreRecord {
	rec := &RestoreRecord{Top: top, What: what, Head: p.Head, Dropped: p.Dropped}
	for _, c := range p.Restores {
		f := RestoreFile{Rel: c.Rel, Expect: VersionSum(c.Expect), Mode: uint32(c.Mode)}
		if c.New.Present {
			text := c.New.Text
			f.New = &text
		}
		rec.Files = append(rec.Files, f)
	}
	return rec
}

// describeRestore is a restore record's line in Describe.
func describeRestore(st Step) string {
	if st.RestoreEnd || st.Restore == nil {
		return "restores ended"
	}
	var rels []string
	for _, f := range st.Restore.Files {
		rels = append(rels, f.Rel)
	}
	return fmt.Sprintf("restores of %s planned (HEAD %s): %s", st.Restore.What, gitcommit.Short(st.Restore.Head), strings.Join(rels, ", "))
}
