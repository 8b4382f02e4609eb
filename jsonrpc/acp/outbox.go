package acp

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	acpsdk "github.com/coder/acp-go-sdk"
)

// outbox sends session updates to the client in order, from one
// goroutine, so that the sessions' goroutines never block on a slow
// client. Adjacent agent text chunks of one session are merged while they
// wait. A marker runs a function once everything queued before it is
// sent: a prompt answers only after its turn's updates went out.
type outbox struct {
	send func(context.Context, acpsdk.SessionNotification) error
	// sendRaw sends a session update the SDK's types lack (rawUpdate).
	sendRaw func(context.Context, rawUpdate) error

	mu     sync.Mutex
	cond   *sync.Cond
	queue  []outItem
	closed bool
	done   chan struct{}
}

// outItem is a session update, a marker when mark is set, or an update
// the SDK's types lack when raw is set.
type outItem struct {
	note acpsdk.SessionNotification
	mark func()
	raw  *rawUpdate
}

// rawUpdate is a session/update notification's params whose update the
// SDK's types lack (plan_update, plan_removed: planops.go).
type rawUpdate struct {
	SessionID acpsdk.SessionId `json:"sessionId"`
	Update    any              `json:"update"`
}

// raw queues one session update the SDK's types lack.
func (o *outbox) raw(id acpsdk.SessionId, u any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	o.queue = append(o.queue, outItem{raw: &rawUpdate{SessionID: id, Update: u}})
	o.cond.Signal()
}

func newOutbox(send func(context.Context, acpsdk.SessionNotification) error, sendRaw func(context.Context, rawUpdate) error) *outbox {
	o := &outbox{send: send, sendRaw: sendRaw, done: make(chan struct{})}
	o.cond = sync.NewCond(&o.mu)
	go o.run()
	return o
}

// update queues one session update.
func (o *outbox) update(id acpsdk.SessionId, u acpsdk.SessionUpdate) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	if n := len(o.queue); n > 0 && u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil {
		last := &o.queue[n-1]
		if last.mark == nil && last.raw == nil && last.note.SessionId == id && last.note.Update.AgentMessageChunk != nil && last.note.Update.AgentMessageChunk.Content.Text != nil &&
			sameID(last.note.Update.AgentMessageChunk.MessageId, u.AgentMessageChunk.MessageId) {
			merged := acpsdk.UpdateAgentMessageText(capPending(last.note.Update.AgentMessageChunk.Content.Text.Text + u.AgentMessageChunk.Content.Text.Text))
			merged.AgentMessageChunk.MessageId = u.AgentMessageChunk.MessageId
			last.note.Update = merged
			return
		}
	}
	o.queue = append(o.queue, outItem{note: acpsdk.SessionNotification{SessionId: id, Update: u}})
	o.cond.Signal()
}

// mark queues fn, to run once everything queued before it was sent. After
// close, fn runs at once.
func (o *outbox) mark(fn func()) {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		fn()
		return
	}
	o.queue = append(o.queue, outItem{mark: fn})
	o.cond.Signal()
	o.mu.Unlock()
}

// flush waits until everything queued so far was sent, or ctx is done.
func (o *outbox) flush(ctx context.Context) error {
	sent := make(chan struct{})
	o.mark(func() { close(sent) })
	select {
	case <-sent:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// close sends what is queued, then stops the outbox and waits for it.
func (o *outbox) close() {
	o.mu.Lock()
	if !o.closed {
		o.closed = true
		o.cond.Signal()
	}
	o.mu.Unlock()
	<-o.done
}

func (o *outbox) run() {
	defer close(o.done)
	for {
		o.mu.Lock()
		for len(o.queue) == 0 && !o.closed {
			o.cond.Wait()
		}
		if len(o.queue) == 0 {
			o.mu.Unlock()
			return
		}
		item := o.queue[0]
		o.queue[0] = outItem{}
		o.queue = o.queue[1:]
		o.mu.Unlock()
		if item.mark != nil {
			item.mark()
			continue
		}
		if item.raw != nil {
			if o.sendRaw != nil {
				_ = o.sendRaw(context.Background(), *item.raw)
			}
			continue
		}
		// A fresh context: an update must go out even when the turn that
		// produced it was just cancelled (the SDK drops a notification
		// sent under a cancelled context).
		_ = o.send(context.Background(), item.note)
	}
}

func sameID(a, b *string) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

// MaxPendingText bounds the agent text of one queued update: a client
// that stops reading while a model streams would otherwise make the agent
// hold everything streamed since. Past it the oldest text is dropped,
// keeping the last keepPendingText bytes after a marker saying how much
// the client did not get (the journal has it all).
const (
	MaxPendingText  = 1 << 20
	keepPendingText = 256 << 10
)

// pendingMarker starts a text whose head was dropped; it holds the count.
const pendingMarker = "… %d KB not shown (the client was not reading) …\n"

// capPending drops the head of text past MaxPendingText, adding up with
// an earlier marker's count.
func capPending(text string) string {
	if len(text) <= MaxPendingText {
		return text
	}
	dropped := 0
	var kb int
	if n, err := fmt.Sscanf(text, pendingMarker, &kb); err == nil && n == 1 {
		dropped = kb * 1024
		text = text[strings.IndexByte(text, '\n')+1:]
	}
	cut := len(text) - keepPendingText
	for cut < len(text) && !utf8.RuneStart(text[cut]) {
		cut++
	}
	dropped += cut
	return fmt.Sprintf(pendingMarker, (dropped+1023)/1024) + text[cut:]
}
