package workspace

import (
	"sync"
	"time"
)

// ownChanges are files loom itself is about to rewrite on disk (an undo
// reverting a commit, a rewind, a discard): the watcher's echo of that
// write still tells the model (it must read them again), but is no
// "changed on disk" news for the user, who asked for it. One rewrite may
// reach the watcher as several batches of events (a truncate, then the
// write), so an expectation holds for ownQuiet rather than for one echo.
type ownChanges struct {
	mu    sync.Mutex
	paths map[string]time.Time // relative to the folder → until when
}

// ownQuiet is how long after expect an echo is loom's own.
const ownQuiet = 5 * time.Second

// expect notes that rels are about to change by loom's own doing.
func (o *ownChanges) expect(rels []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.paths == nil {
		o.paths = map[string]time.Time{}
	}
	until := time.Now().Add(ownQuiet)
	for _, r := range rels {
		o.paths[r] = until
	}
}

// news returns the paths of rels that are not loom's own changes, and
// forgets expectations that are over.
func (o *ownChanges) news(rels []string) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := time.Now()
	var out []string
	for _, r := range rels {
		if until, ok := o.paths[r]; ok {
			if now.Before(until) {
				continue
			}
			delete(o.paths, r)
		}
		out = append(out, r)
	}
	return out
}

// forget drops rels expected by expect that did not change after all.
func (o *ownChanges) forget(rels []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, r := range rels {
		delete(o.paths, r)
	}
}
