package jsonrpc

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/loom-lsp/loom-lsp/workspace"
)

// outItem is one queued notification. Consecutive text (or reasoning) of
// one turn merges into one item while it waits.
type outItem struct {
	n    workspace.Notification
	text *strings.Builder // for NoteText and NoteReasoning: the merged text
	// barrier, if set, is closed when everything queued before it was
	// sent (see flush); the item sends nothing.
	barrier chan struct{}
}

// outbox serialises one folder's notifications to the client. push never
// blocks (the session's owner goroutine calls it); one goroutine sends,
// in order. Streamed text is coalesced: a text item is held until the
// coalescing window since the last text notification has passed, unless
// another notification is queued behind it, in which case the text goes
// first, at once, so order holds.
type outbox struct {
	s      *Server
	folder string
	window time.Duration

	mu     sync.Mutex
	q      []outItem
	closed bool
	wake   chan struct{} // capacity 1: "the queue changed"
	done   chan struct{} // closed when run returns

	// Owned by run.
	lastText time.Time
	out      *folderOut
}

func newOutbox(s *Server, folder string) *outbox {
	return &outbox{
		s: s, folder: folder, window: s.opts.CoalesceWindow,
		wake: make(chan struct{}, 1), done: make(chan struct{}),
		out: newFolderOut(s, folder),
	}
}

// push queues n.
func (o *outbox) push(n workspace.Notification) {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		o.s.log.Debug("dropped a notification after the folder's outbox closed", "folder", o.folder, "kind", n.Kind)
		return
	}
	if n.Kind == workspace.NoteText || n.Kind == workspace.NoteReasoning {
		if k := len(o.q); k > 0 && o.q[k-1].text != nil && o.q[k-1].n.Turn == n.Turn && o.q[k-1].n.Kind == n.Kind {
			o.q[k-1].text.WriteString(n.Text)
			o.mu.Unlock()
			o.signal()
			return
		}
		b := &strings.Builder{}
		b.WriteString(n.Text)
		n.Text = ""
		o.q = append(o.q, outItem{n: n, text: b})
	} else {
		o.q = append(o.q, outItem{n: n})
	}
	o.mu.Unlock()
	o.signal()
}

// flush waits until everything queued so far was sent, so that a request
// to the client (an approval) never overtakes the text before it. It
// gives up when ctx ends or the outbox is closed.
func (o *outbox) flush(ctx context.Context) {
	barrier := make(chan struct{})
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return
	}
	o.q = append(o.q, outItem{barrier: barrier})
	o.mu.Unlock()
	o.signal()
	select {
	case <-barrier:
	case <-o.done:
	case <-ctx.Done():
	}
}

func (o *outbox) signal() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// close stops accepting notifications; run sends what is queued, then
// ends its progress and returns. close waits for that at most wait.
func (o *outbox) close(wait time.Duration) {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	o.signal()
	if wait <= 0 {
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-o.done:
	case <-t.C:
		o.s.log.Warn("outbox did not drain in time", "folder", o.folder)
	}
}

// run sends the queue until the outbox is closed and empty.
func (o *outbox) run() {
	defer close(o.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		o.mu.Lock()
		for len(o.q) == 0 {
			if o.closed {
				o.mu.Unlock()
				o.out.endAll()
				return
			}
			o.mu.Unlock()
			<-o.wake
			o.mu.Lock()
		}
		head := o.q[0]
		if head.text != nil && len(o.q) == 1 && !o.closed {
			if wait := time.Until(o.lastText.Add(o.window)); wait > 0 {
				o.mu.Unlock()
				timer.Reset(wait)
				select {
				case <-o.wake:
					timer.Stop()
				case <-timer.C:
				}
				continue // re-evaluate the head
			}
		}
		o.q[0] = outItem{}
		o.q = o.q[1:]
		o.mu.Unlock()
		if head.barrier != nil {
			close(head.barrier)
			continue
		}
		if head.text != nil {
			head.n.Text = head.text.String()
			o.lastText = time.Now()
		}
		o.out.send(head.n)
	}
}
