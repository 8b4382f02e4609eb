package tools

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
)

// Errors of ReadTracker.Check.
var (
	// ErrNotRead refuses an edit of an existing file the model never read.
	ErrNotRead = errors.New("you have not read this file yet; read it first with read_file")
	// ErrStale refuses an edit of a file that changed since the model
	// last read it.
	ErrStale = errors.New("file changed since you last read it; read it again")
)

// ReadTracker remembers, per absolute path, a hash of the content the
// model last read, so that edits based on an old or absent read are
// refused. It is safe for concurrent use; the zero value is ready to use.
//
// Policy: edit_file and write_file refuse to change an existing file
// that was never read (ErrNotRead) or whose current content differs from
// what was read (ErrStale). Creating a new file needs no read.
type ReadTracker struct {
	mu      sync.Mutex
	entries map[string]readEntry
}

type readEntry struct {
	hash  Sum
	stale bool
	// text is the content read, kept (up to maxRebaseText) so that an
	// edit of a file changed since can be rebased onto its new text.
	text    string
	hasText bool
}

// NewReadTracker returns an empty tracker.
func NewReadTracker() *ReadTracker { return &ReadTracker{entries: map[string]readEntry{}} }

// Record notes that the model now knows path's content: read_file calls
// it after a read, and the workspace after it applied an edit to path.
func (t *ReadTracker) Record(path string, content []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.entries == nil {
		t.entries = map[string]readEntry{}
	}
	e := readEntry{hash: SumOf(content)}
	if len(content) <= maxRebaseText {
		e.text, e.hasText = string(content), true
	}
	t.entries[path] = e
}

// ReadText returns the content of path as the model last read it (or as
// the agent last wrote it), when it was small enough to keep.
func (t *ReadTracker) ReadText(path string) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.entries[path]
	return e.text, ok && e.hasText
}

// MarkStale notes that path changed outside the agent (the file watcher
// calls it). A stale path is refused by Check unless its current content
// hashes exactly as what was read, which clears the mark: the watcher's
// echo of the agent's own write, or a touch, is harmless.
func (t *ReadTracker) MarkStale(path string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.entries[path]; ok {
		e.stale = true
		t.entries[path] = e
	}
}

// Sum is the hash the tracker keeps of a file's content.
type Sum [sha256.Size]byte

// SumOf is the Sum of content.
func SumOf(content []byte) Sum { return sha256.Sum256(content) }

// Saw notes what the file watcher read of path, by its Sum: it reports
// whether that is not what the model last read of path (nor what the
// agent last wrote there), and marks path stale then; a content that is
// what was read clears the mark. A path never read is no news.
//
// The watcher reads a changed file once, and only here: the decisions
// that come later (Differs, Fresh) ask the tracker, never the disk.
func (t *ReadTracker) Saw(path string, seen Sum) (stale bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.entries[path]
	if !ok {
		return false
	}
	e.stale = e.hash != seen
	t.entries[path] = e
	return e.stale
}

// Differs reports whether seen (a content of path the watcher saw) is not
// what the model last read of path: a read that completed since the
// watcher looked, and read that content, makes it no news.
func (t *ReadTracker) Differs(path string, seen Sum) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.entries[path]
	return ok && e.hash != seen
}

// Fresh reports whether the model's last read of path still stands: it
// was recorded, and no content the watcher saw since differed from it
// (Saw, MarkStale). A read_file call that completes asks it, instead of
// reading the file again: a change after the read is the watcher's to
// tell, and when the watcher told it first the read is not fresh.
func (t *ReadTracker) Fresh(path string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.entries[path]
	return ok && !e.stale
}

// Holds reports whether content is what the model last read of path (or
// what the agent last wrote there), stale or not.
func (t *ReadTracker) Holds(path string, content []byte) bool {
	sum := SumOf(content)
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.entries[path]
	return ok && e.hash == sum
}

// Forget drops what is known of path, e.g. after it was deleted.
func (t *ReadTracker) Forget(path string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.entries, path)
}

// Check returns nil when the model may edit path whose current content
// is current: it read path and the content has not changed since. Else
// the error wraps ErrNotRead or ErrStale.
func (t *ReadTracker) Check(path string, current []byte) error {
	sum := SumOf(current)
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.entries[path]
	switch {
	case !ok:
		return fmt.Errorf("%s: %w", path, ErrNotRead)
	case e.hash != sum:
		return fmt.Errorf("%s: %w", path, ErrStale)
	case e.stale:
		e.stale = false
		t.entries[path] = e
	}
	return nil
}
