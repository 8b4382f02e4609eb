package workspace

import (
	"crypto/sha256"
	"sync"
	"time"
)

// ownWrites are the texts this conversation's own writes are putting in
// files (an applied edit or accepted hunk, a review's decision on a
// command's changes, the files a command of the agent changes): the
// watcher's echo of such a write, whenever it comes (before or after the
// model's read record is updated), is neither news for the user nor a
// change to tell the model. An expectation holds for ownQuiet, since one
// write may reach the watcher as several batches; a file whose content is
// anything else afterwards (the user's change) is reported as usual.
type ownWrites struct {
	mu    sync.Mutex
	texts map[string][]ownText // absolute path → texts expected
	// commands counts the agent's commands running now: what changes
	// meanwhile is theirs (the command's result names those files).
	commands int
}

type ownText struct {
	sum   [sha256.Size]byte
	until time.Time
}

// expect notes that loom is about to write content to path (absolute).
func (o *ownWrites) expect(path string, content []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.add(path, sha256.Sum256(content), time.Now())
}

// add expects sum in path until ownQuiet after now (o.mu held).
func (o *ownWrites) add(path string, sum [sha256.Size]byte, now time.Time) {
	if o.texts == nil {
		o.texts = map[string][]ownText{}
	}
	o.texts[path] = append(o.live(path, now), ownText{sum: sum, until: now.Add(ownQuiet)})
}

// commandStarted notes that a command of the agent runs.
func (o *ownWrites) commandStarted() {
	o.mu.Lock()
	o.commands++
	o.mu.Unlock()
}

// commandEnded notes that a command ended, having changed paths, whose
// contents now (read by read; nil when gone) are its own writes: a late
// echo of them is no news either.
func (o *ownWrites) commandEnded(paths []string, read func(string) ([]byte, error)) {
	for _, p := range paths {
		if b, err := read(p); err == nil {
			o.expect(p, b)
		}
	}
	o.mu.Lock()
	o.commands--
	o.mu.Unlock()
}

// is reports whether content of path is a text loom wrote there lately,
// or a command of the agent is running (the content is then expected).
func (o *ownWrites) is(path string, content []byte) bool {
	return o.isSum(path, sha256.Sum256(content))
}

// isSum is is, of a content given by its hash.
func (o *ownWrites) isSum(path string, sum [sha256.Size]byte) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.commands > 0 {
		o.add(path, sum, time.Now())
		return true
	}
	for _, t := range o.live(path, time.Now()) {
		if t.sum == sum {
			return true
		}
	}
	return false
}

// live drops path's expectations that are over and returns the others
// (o.mu held).
func (o *ownWrites) live(path string, now time.Time) []ownText {
	ts := o.texts[path]
	kept := ts[:0]
	for _, t := range ts {
		if now.Before(t.until) {
			kept = append(kept, t)
		}
	}
	if len(kept) == 0 {
		delete(o.texts, path)
		return nil
	}
	o.texts[path] = kept
	return kept
}
