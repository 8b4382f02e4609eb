package changes

import (
	"path/filepath"

	"github.com/loom-lsp/loom-lsp/workspace/gitcommit"
)

// Log is a conversation's auto-commits, oldest first, with their turns:
// what loom.undo, an undo of one file and a rewind take back. It is
// owned by the conversation's goroutine.
type Log struct {
	Commits []*gitcommit.Result
	// TurnOf is the turn of each of Commits, by SHA.
	TurnOf map[string]uint64
	// Last is the last commit's name, for loom.status.
	Last string
}

// Add records c, made in turn.
func (l *Log) Add(c *gitcommit.Result, turn uint64) {
	l.Commits = append(l.Commits, c)
	l.Last = c.SHA
	if l.TurnOf == nil {
		l.TurnOf = map[string]uint64{}
	}
	l.TurnOf[c.SHA] = turn
}

// Set replaces the log with commits and their turns (a resume).
func (l *Log) Set(commits []*gitcommit.Result, turnOf map[string]uint64) {
	l.Commits, l.TurnOf, l.Last = commits, turnOf, ""
	if n := len(commits); n > 0 {
		l.Last = commits[n-1].SHA
	}
}

// forget drops commits taken back from the log.
func (l *Log) forget(shas []string) {
	gone := map[string]bool{}
	for _, s := range shas {
		gone[s] = true
	}
	kept := l.Commits[:0]
	for _, c := range l.Commits {
		if !gone[c.SHA] {
			kept = append(kept, c)
		}
	}
	l.Commits = kept
	l.Last = ""
	if n := len(l.Commits); n > 0 {
		l.Last = l.Commits[n-1].SHA
	}
}

// RelPaths makes each of paths relative to top (slash-separated), or
// leaves it as it is when it cannot be.
func RelPaths(top string, paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		if r, err := filepath.Rel(top, p); err == nil {
			out[i] = filepath.ToSlash(r)
		} else {
			out[i] = p
		}
	}
	return out
}
