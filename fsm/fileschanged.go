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

// onFilesChanged records paths to tell the model at its next request.
func (m *Machine) onFilesChanged(e FilesChanged) []Action {
	for _, p := range e.Paths {
		if !m.changedSet[p] {
			if m.changedSet == nil {
				m.changedSet = map[string]bool{}
			}
			m.changedSet[p] = true
			m.changed = append(m.changed, p)
		}
	}
	return nil
}

// forgetChanged drops pending changed paths the model has just read
// afresh (ToolCompleted.Read).
func (m *Machine) forgetChanged(paths []string) {
	for _, p := range paths {
		if !m.changedSet[p] {
			continue
		}
		delete(m.changedSet, p)
		m.changed = slices.DeleteFunc(m.changed, func(q string) bool { return q == p })
	}
}

// flushChanged appends the note of pending changed files, if any, to the
// conversation.
func (m *Machine) flushChanged() {
	m.flushNotes()
	m.flushMode()
	if len(m.changed) == 0 {
		return
	}
	paths := append([]string(nil), m.changed...)
	sort.Strings(paths)
	m.history = append(m.history, Message{Role: RoleUser, Content: filesChangedNote + strings.Join(paths, ", ") + filesChangedTail, Note: true})
	m.changed = m.changed[:0]
	clear(m.changedSet)
}
