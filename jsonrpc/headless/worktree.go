package headless

import "encoding/json"

// The worktree events of `loom-lsp exec` (--worktree, and the recovery
// any exec does first):
//
//	worktree_recovered  worktree (an orphan found: removed, or kept with
//	                    the files it changed)
//	worktree_created    worktree (--worktree: where the conversation works)
//	worktree_merged     worktree (its work brought back: files, lines,
//	                    applied, conflicts; state merged or kept)

// WorktreeInfo is a worktree in the worktree_* events.
type WorktreeInfo struct {
	// Name is the worktree's name (loom-lsp worktrees), Path its
	// directory, Folder the user's folder it belongs to.
	Name   string `json:"name"`
	Path   string `json:"path"`
	Folder string `json:"folder,omitempty"`
	// Base is the commit it started from.
	Base string `json:"base,omitempty"`
	// State is creating, active, kept or merged.
	State string `json:"state,omitempty"`
	// Included are the untracked files copied in (.worktreeinclude).
	Included []string `json:"included,omitempty"`
	// Changed are the files an orphan holds (worktree_recovered).
	Changed []string `json:"changed,omitempty"`
	// Removed: the worktree is gone (recovered orphan with nothing
	// unmerged, or merged).
	Removed bool `json:"removed,omitempty"`
	// Applied: the merge wrote into the user's tree (else a report).
	Applied bool `json:"applied,omitempty"`
	// Files are the merge's files; LinesAdded and LinesRemoved its stat.
	Files        []WorktreeFile `json:"files,omitempty"`
	LinesAdded   int            `json:"lines_added,omitempty"`
	LinesRemoved int            `json:"lines_removed,omitempty"`
}

// WorktreeFile is one file of a worktree's merge.
type WorktreeFile struct {
	Path         string `json:"path"`
	Kind         string `json:"kind"`
	LinesAdded   int    `json:"lines_added,omitempty"`
	LinesRemoved int    `json:"lines_removed,omitempty"`
	Diff         string `json:"diff,omitempty"`
	Applied      bool   `json:"applied,omitempty"`
	Conflict     string `json:"conflict,omitempty"`
}

// WorktreeRecovered is the JSONL line of a recovered orphan.
func WorktreeRecovered(w WorktreeInfo) []byte {
	return eventLine(Event{Type: "worktree_recovered", Worktree: &w})
}

// WorktreeCreated is the JSONL line of the worktree --worktree made.
func WorktreeCreated(w WorktreeInfo) []byte {
	return eventLine(Event{Type: "worktree_created", Worktree: &w})
}

// WorktreeMerged is the JSONL line of a worktree's merge back.
func WorktreeMerged(w WorktreeInfo) []byte {
	return eventLine(Event{Type: "worktree_merged", Worktree: &w})
}

func eventLine(ev Event) []byte {
	b, _ := json.Marshal(ev)
	return append(b, '\n')
}
