package workspace

import "sync"

// identity is a conversation's id (its journal's, see ConversationInfo.ID)
// and its journal's path: set on the owner goroutine, read on any.
type identity struct {
	// own is the id as the owner goroutine knows it: "" until the
	// conversation opened (run), then the same as id.
	own string

	mu sync.Mutex
	id string
	// path is the journal's path, "" when not journaled.
	path string
}

// ID returns the conversation's id; safe on any goroutine.
func (x *identity) ID() string {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.id
}

// journal returns the journal's path, "" when not journaled; safe on any
// goroutine.
func (x *identity) journal() string {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.path
}

// set records the conversation's id and journal, on the owner goroutine.
func (x *identity) set(id, path string) {
	x.own = id
	x.mu.Lock()
	x.id, x.path = id, path
	x.mu.Unlock()
}
