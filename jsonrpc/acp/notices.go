package acp

import (
	"fmt"
	"sync"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/loom-lsp/loom-lsp/workspace"
)

// Notices and session/load's replay. What loom itself tells a session
// (a file changed on disk since the agent read it, an undo, the commit
// journal, a configuration reload, an MCP server ready, the sandbox, …)
// goes out as an agent_message_chunk of a message of its own (messageId
// "<session>-notice-N"), tagged _meta {"loom": {"notice": kind}}, to the
// sessions of the conversation it concerns (all of its folder's for a
// folder's notice).
//
// While session/load replays a conversation, every update for that
// session (a notice, a running turn's text) is held and queued after the
// replay, so that nothing lands in the middle of the history. A session
// made by session/new is held the same way from the moment it is
// registered until its response (which names it to the client) is
// written: nothing reaches the client for a session id it was not yet
// given, whatever the goroutines' timing (issue 47, item 6).

// noticeMeta tags a notice's update.
func noticeMeta(kind string) map[string]any {
	return map[string]any{"loom": map[string]any{"notice": kind}}
}

// notice sends text to session s as a notice message of its own.
func (o sessionOut) notice(kind, text string) {
	a, s := o.a, o.s
	a.mu.Lock()
	s.notices++
	id := fmt.Sprintf("%s-notice-%d", s.id, s.notices)
	a.mu.Unlock()
	u := acpsdk.UpdateAgentMessageText("· " + text + "\n\n")
	u.AgentMessageChunk.MessageId = &id
	u.AgentMessageChunk.Meta = noticeMeta(kind)
	a.updates.send(s.id, u)
}

// heldItem is an update, a marker (mark set) or an update the SDK's
// types lack (raw set), held during a replay.
type heldItem struct {
	update acpsdk.SessionUpdate
	mark   func()
	raw    any
}

// updateQueue queues each session's updates on the outbox, holding those of
// a session whose history is being replayed (or whose session/new
// response is not written yet) until the replay ends. Its maps are
// guarded by mu, the agent's lock: a session is registered and held in
// one critical section (registerNew).
type updateQueue struct {
	mu  *sync.Mutex
	out *outbox
	// held holds the updates of the sessions being replayed, replays
	// counts those replays.
	held    map[acpsdk.SessionId][]heldItem
	replays map[acpsdk.SessionId]int
}

// newUpdates returns the updates of out, guarded by mu.
func newUpdates(mu *sync.Mutex, out *outbox) *updateQueue {
	return &updateQueue{mu: mu, out: out, held: map[acpsdk.SessionId][]heldItem{}, replays: map[acpsdk.SessionId]int{}}
}

// sendRaw queues update u, which the SDK's types lack, for session id,
// behind its replay if one runs.
func (q *updateQueue) sendRaw(id acpsdk.SessionId, u any) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sendRawLocked(id, u)
}

// sendRawLocked is sendRaw with mu held.
func (q *updateQueue) sendRawLocked(id acpsdk.SessionId, u any) {
	if !q.heldLocked(id, heldItem{raw: u}) {
		q.out.raw(id, u)
	}
}

// send queues update u for session id, behind its replay if one runs.
func (q *updateQueue) send(id acpsdk.SessionId, u acpsdk.SessionUpdate) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.heldLocked(id, heldItem{update: u}) {
		q.out.update(id, u)
	}
}

// markFor queues fn behind session id's updates (see outbox.mark).
func (q *updateQueue) markFor(id acpsdk.SessionId, fn func()) {
	q.mu.Lock()
	held := q.heldLocked(id, heldItem{mark: fn})
	q.mu.Unlock()
	if !held {
		// Not under mu: a closed outbox runs fn at once, and fn may lock it.
		q.out.mark(fn)
	}
}

// heldLocked appends it to session id's held items when a replay runs,
// and reports whether it did; mu is held.
func (q *updateQueue) heldLocked(id acpsdk.SessionId, it heldItem) bool {
	if _, replaying := q.held[id]; !replaying {
		return false
	}
	q.held[id] = append(q.held[id], it)
	return true
}

// firstLocked puts it before everything held for session id; mu is held.
func (q *updateQueue) firstLocked(id acpsdk.SessionId, it heldItem) {
	q.held[id] = append([]heldItem{it}, q.held[id]...)
}

// dropLocked drops what is held for session id, and its holds; mu is
// held.
func (q *updateQueue) dropLocked(id acpsdk.SessionId) {
	delete(q.held, id)
	delete(q.replays, id)
}

// holdForReplay starts holding session id's updates; the replay itself
// is queued with out.update directly. The returned function queues what
// was held after the replay and stops holding. Two holds of one session
// at once (two replays, a session/new's hold) hold until the last ends.
func (q *updateQueue) holdForReplay(id acpsdk.SessionId) (release func()) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.holdLocked(id)
}

// holdLocked starts holding session id's updates (see holdForReplay);
// mu is held.
func (q *updateQueue) holdLocked(id acpsdk.SessionId) (release func()) {
	q.replays[id]++
	if _, ok := q.held[id]; !ok {
		q.held[id] = []heldItem{}
	}
	return func() {
		q.mu.Lock()
		q.replays[id]--
		for {
			items := q.held[id]
			if q.replays[id] > 0 || len(items) == 0 {
				if q.replays[id] <= 0 {
					q.dropLocked(id)
				}
				q.mu.Unlock()
				return
			}
			// Still holding while these go out: what arrives meanwhile
			// queues behind them, for the next round.
			q.held[id] = []heldItem{}
			q.mu.Unlock()
			q.flushItems(id, items)
			q.mu.Lock()
		}
	}
}

// flushItems queues items, held for session id, on the outbox.
func (q *updateQueue) flushItems(id acpsdk.SessionId, items []heldItem) {
	for _, it := range items {
		switch {
		case it.mark != nil:
			q.out.mark(it.mark)
		case it.raw != nil:
			q.out.raw(id, it.raw)
		default:
			q.out.update(id, it.update)
		}
	}
}

// infoKind names a workspace notice for _meta.
func infoKind(n workspace.NoteSource) string {
	if n.Conversation == "" {
		return "folder"
	}
	return "info"
}

// openings keeps what the conversations being opened for session/load
// or session/resume say before their sessions are registered. Its map is
// guarded by mu, the agent's lock.
type openings struct {
	mu    *sync.Mutex
	notes map[acpsdk.SessionId]*openingNotes
	// notify hands a caught notification to its session, once there is one.
	notify func(s *session, n workspace.Notification)
}

// openingNotes is what the conversations opened for a session id said
// while they opened; waiters counts the loads and resumes waiting.
type openingNotes struct {
	waiters int
	notes   []workspace.Notification
}

// catch keeps, in order, every notification of conversation id from now
// until deliver is called: a conversation opened from its journal says
// what it restored (the "resumed" notice, its title, the context's use)
// on its own goroutine, which may run before the session is registered —
// those would find no session and be lost. deliver(s) hands them to
// session s, then lets later ones go straight to it; deliver(nil) drops
// them (the session was not established). Call deliver exactly once.
func (c *openings) catch(id acpsdk.SessionId) (deliver func(s *session)) {
	c.mu.Lock()
	o := c.notes[id]
	if o == nil {
		o = &openingNotes{}
		c.notes[id] = o
	}
	o.waiters++
	c.mu.Unlock()
	return func(s *session) {
		for {
			c.mu.Lock()
			notes := o.notes
			o.notes = nil
			if len(notes) == 0 || s == nil {
				if o.waiters--; o.waiters == 0 && c.notes[id] == o {
					delete(c.notes, id)
				}
				c.mu.Unlock()
				return
			}
			c.mu.Unlock()
			// Still catching while these go: what comes meanwhile
			// follows them in the next round.
			for _, n := range notes {
				c.notify(s, n)
			}
		}
	}
}

// caught keeps n when its conversation is being opened (catch) and
// reports whether it did.
func (c *openings) caught(n workspace.Notification) bool {
	if n.Conversation == "" {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	o := c.notes[acpsdk.SessionId(n.Conversation)]
	if o == nil {
		return false
	}
	o.notes = append(o.notes, n)
	return true
}
