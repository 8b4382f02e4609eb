package acp

import (
	"fmt"

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
	a.send(s.id, u)
}

// heldItem is an update, a marker (mark set) or an update the SDK's
// types lack (raw set), held during a replay.
type heldItem struct {
	update acpsdk.SessionUpdate
	mark   func()
	raw    any
}

// sendRaw queues update u, which the SDK's types lack, for session id,
// behind its replay if one runs.
func (a *agent) sendRaw(id acpsdk.SessionId, u any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sendRawLocked(id, u)
}

// sendRawLocked is sendRaw with a.mu held.
func (a *agent) sendRawLocked(id acpsdk.SessionId, u any) {
	if _, replaying := a.held[id]; replaying {
		a.held[id] = append(a.held[id], heldItem{raw: u})
		return
	}
	a.out.raw(id, u)
}

// send queues update u for session id, behind its replay if one runs.
func (a *agent) send(id acpsdk.SessionId, u acpsdk.SessionUpdate) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, replaying := a.held[id]; replaying {
		a.held[id] = append(a.held[id], heldItem{update: u})
		return
	}
	a.out.update(id, u)
}

// markFor queues fn behind session id's updates (see outbox.mark).
func (a *agent) markFor(id acpsdk.SessionId, fn func()) {
	a.mu.Lock()
	if _, replaying := a.held[id]; replaying {
		a.held[id] = append(a.held[id], heldItem{mark: fn})
		a.mu.Unlock()
		return
	}
	a.mu.Unlock()
	// Not under a.mu: a closed outbox runs fn at once, and fn may lock it.
	a.out.mark(fn)
}

// holdForReplay starts holding session id's updates; the replay itself
// is queued with out.update directly. The returned function queues what
// was held after the replay and stops holding. Two holds of one session
// at once (two replays, a session/new's hold) hold until the last ends.
func (a *agent) holdForReplay(id acpsdk.SessionId) (release func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.holdLocked(id)
}

// holdLocked starts holding session id's updates (see holdForReplay);
// a.mu is held.
func (a *agent) holdLocked(id acpsdk.SessionId) (release func()) {
	a.replays[id]++
	if _, ok := a.held[id]; !ok {
		a.held[id] = []heldItem{}
	}
	return func() {
		a.mu.Lock()
		a.replays[id]--
		for {
			items := a.held[id]
			if a.replays[id] > 0 || len(items) == 0 {
				if a.replays[id] <= 0 {
					delete(a.replays, id)
					delete(a.held, id)
				}
				a.mu.Unlock()
				return
			}
			// Still holding while these go out: what arrives meanwhile
			// queues behind them, for the next round.
			a.held[id] = []heldItem{}
			a.mu.Unlock()
			for _, it := range items {
				if it.mark != nil {
					a.out.mark(it.mark)
				} else if it.raw != nil {
					a.out.raw(id, it.raw)
				} else {
					a.out.update(id, it.update)
				}
			}
			a.mu.Lock()
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

// openingNotes is what the conversations opened for a session id said
// while they opened; waiters counts the loads and resumes waiting.
type openingNotes struct {
	waiters int
	notes   []workspace.Notification
}

// catchOpening keeps, in order, every notification of conversation id
// from now until deliver is called: a conversation opened from its
// journal says what it restored (the "resumed" notice, its title, the
// context's use) on its own goroutine, which may run before the session
// is registered — those would find no session and be lost. deliver(s)
// hands them to session s, then lets later ones go straight to it;
// deliver(nil) drops them (the session was not established). Call
// deliver exactly once.
func (a *agent) catchOpening(id acpsdk.SessionId) (deliver func(s *session)) {
	a.mu.Lock()
	o := a.opening[id]
	if o == nil {
		o = &openingNotes{}
		a.opening[id] = o
	}
	o.waiters++
	a.mu.Unlock()
	return func(s *session) {
		for {
			a.mu.Lock()
			notes := o.notes
			o.notes = nil
			if len(notes) == 0 || s == nil {
				if o.waiters--; o.waiters == 0 && a.opening[id] == o {
					delete(a.opening, id)
				}
				a.mu.Unlock()
				return
			}
			a.mu.Unlock()
			// Still catching while these go: what comes meanwhile
			// follows them in the next round.
			for _, n := range notes {
				a.notifySession(s, n)
			}
		}
	}
}

// caught keeps n when its conversation is being opened (catchOpening)
// and reports whether it did.
func (a *agent) caught(n workspace.Notification) bool {
	if n.Conversation == "" {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	o := a.opening[acpsdk.SessionId(n.Conversation)]
	if o == nil {
		return false
	}
	o.notes = append(o.notes, n)
	return true
}
