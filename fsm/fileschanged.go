package fsm

import (
	"slices"
	"sort"
	"strings"
)

// FilesChanged tells the machine that files the model had read changed on
// disk afterwards, not through its own edits (the file watcher saw it).
// Paths are relative to the workspace root. The machine needs no action
// for it: it tells the model, in a user message of its own placed before
// its next request, which files to read again. It is valid in every state
// but ShuttingDown; paths already pending are not repeated.
type FilesChanged struct {
	Paths []string
}

func (FilesChanged) isEvent() {}

// Describe implements [Event].
func (e FilesChanged) Describe() string {
	qs := make([]string, len(e.Paths))
	for i, p := range e.Paths {
		qs[i] = quote(p)
	}
	return "FilesChanged [" + strings.Join(qs, " ") + "]"
}

// The message that tells the model which files changed on disk.
const (
	filesChangedNote = "[loom] changed on disk since you read them: "
	filesChangedTail = " (read them again before editing them)"
)

// changedFiles are the paths of FilesChanged events not yet told to the
// model, in arrival order, each once.
type changedFiles struct {
	paths []string
	set   map[string]bool // indexes paths
}

// add records paths to tell the model at its next request.
func (c *changedFiles) add(paths []string) {
	for _, p := range paths {
		if !c.set[p] {
			if c.set == nil {
				c.set = map[string]bool{}
			}
			c.set[p] = true
			c.paths = append(c.paths, p)
		}
	}
}

// forget drops pending paths the model has just read afresh
// (ToolCompleted.Read).
func (c *changedFiles) forget(paths []string) {
	for _, p := range paths {
		if !c.set[p] {
			continue
		}
		delete(c.set, p)
		c.paths = slices.DeleteFunc(c.paths, func(q string) bool { return q == p })
	}
}

// take returns the pending paths, sorted, and forgets them.
func (c *changedFiles) take() []string {
	paths := append([]string(nil), c.paths...)
	sort.Strings(paths)
	c.paths = c.paths[:0]
	clear(c.set)
	return paths
}

// flushChanged appends the note of pending changed files, if any, to the
// conversation.
func (m *Machine) flushChanged() {
	m.flushNotes()
	m.flushMode()
	if len(m.changed.paths) == 0 {
		return
	}
	paths := m.changed.take()
	m.history = append(m.history, Message{Role: RoleUser, Content: filesChangedNote + strings.Join(paths, ", ") + filesChangedTail, Note: true})
}
