package workspace

import "sync"

// ownChanges are files loom itself is about to rewrite on disk (an undo
// reverting a commit): the watcher's echo of that write still tells the
// model (it must read them again), but is no "changed on disk" news for
// the user, who asked for it.
type ownChanges struct {
	mu    sync.Mutex
	paths map[string]bool // relative to the folder
}

// expect notes that rels are about to change by loom's own doing.
func (o *ownChanges) expect(rels []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.paths == nil {
		o.paths = map[string]bool{}
	}
	for _, r := range rels {
		o.paths[r] = true
	}
}

// news returns the paths of rels that are not loom's own changes, and
// forgets those that were.
func (o *ownChanges) news(rels []string) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for _, r := range rels {
		if o.paths[r] {
			delete(o.paths, r)
			continue
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
