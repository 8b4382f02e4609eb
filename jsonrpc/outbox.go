package jsonrpc

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/loom-lsp/loom-lsp/workspace"
)

// outItem is one queued notification. Consecutive text (or reasoning) of
// one turn merges into one item while it waits.
type outItem struct {
	n workspace.Notification
	// merged marks a NoteText or NoteReasoning item; text is its merged
	// text (n.Text is unused), in a buffer the outbox recycles once it
	// was sent.
	merged bool
	text   []byte
	// dropped counts the bytes of text cut from its head while the
	// client was not reading (see capPending); a marker says so.
	dropped int
	// barrier, if set, is closed when everything queued before it was
	// sent (see flush); the item sends nothing.
	barrier chan struct{}
}

// outbox serialises the notifications of one conversation of a folder
// (or the folder's own notices) to the client. push never
// blocks (the session's owner goroutine calls it); one goroutine sends,
// in order. Streamed text is coalesced: a text item is held until the
// coalescing window since the last text notification has passed, unless
// another notification is queued behind it, in which case the text goes
// first, at once, so order holds.
type outbox struct {
	s      *Server
	folder string
	window time.Duration

	mu sync.Mutex
	q  []outItem
	// spare holds emptied text buffers for the next text items, so that
	// streaming allocates nothing once they have grown.
	spare  [][]byte
	closed bool
	wake   chan struct{} // capacity 1: "the queue changed"
	done   chan struct{} // closed when run returns

	// Owned by run.
	lastText time.Time
	out      *folderOut
}

func newOutbox(s *Server, folder, conversation string, seq *atomic.Uint64) *outbox {
	return &outbox{
		s: s, folder: folder, window: s.opts.CoalesceWindow,
		wake: make(chan struct{}, 1), done: make(chan struct{}),
		out: newFolderOut(s, folder, conversation, seq),
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
		if k := len(o.q); k > 0 && o.q[k-1].merged && o.q[k-1].n.Turn == n.Turn && o.q[k-1].n.Kind == n.Kind {
			o.q[k-1].text = append(o.q[k-1].text, n.Text...)
			o.q[k-1].capPending()
			o.mu.Unlock()
			o.signal()
			return
		}
		var buf []byte
		if k := len(o.spare); k > 0 {
			buf, o.spare = o.spare[k-1], o.spare[:k-1]
		}
		buf = append(buf, n.Text...)
		n.Text = ""
		o.q = append(o.q, outItem{n: n, merged: true, text: buf})
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

// recycle keeps a sent text buffer for a next text item, unless enough
// are kept or it grew large.
func (o *outbox) recycle(buf []byte) {
	if cap(buf) > 64<<10 {
		return
	}
	o.mu.Lock()
	if len(o.spare) < 4 {
		o.spare = append(o.spare, buf[:0])
	}
	o.mu.Unlock()
}

// MaxPendingText bounds the text of one queued notification: a client
// that stops reading while a model streams would otherwise make the
// daemon hold everything streamed since. Past it, the oldest text is
// dropped, keeping the last keepPendingText bytes, and a marker says how
// much the client did not get (the journal and loom.history have it all).
const (
	MaxPendingText  = 1 << 20
	keepPendingText = 256 << 10
)

// capPending drops the head of the item's text past MaxPendingText.
func (it *outItem) capPending() {
	if len(it.text) <= MaxPendingText {
		return
	}
	cut := len(it.text) - keepPendingText
	for cut < len(it.text) && !utf8.RuneStart(it.text[cut]) {
		cut++
	}
	it.dropped += cut
	n := copy(it.text, it.text[cut:])
	it.text = it.text[:n]
}

// notShown is the marker of text dropped for a client that was not
// reading.
func notShown(dropped int) string {
	return fmt.Sprintf("… %d KB not shown (the editor was not reading; loom.history has it all) …\n", (dropped+1023)/1024)
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
		if head.merged && len(o.q) == 1 && !o.closed {
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
		if len(o.q) == 1 {
			o.q = o.q[:0] // reuse the array from its start
		} else {
			o.q = o.q[1:]
		}
		o.mu.Unlock()
		if head.barrier != nil {
			close(head.barrier)
			continue
		}
		if !head.merged {
			o.out.send(head.n)
			continue
		}
		o.lastText = time.Now()
		if head.dropped > 0 {
			head.text = append([]byte(notShown(head.dropped)), head.text...)
		}
		if head.n.Kind == workspace.NoteText {
			o.out.sendText(head.n.Turn, head.text)
		} else {
			head.n.Text = string(head.text)
			o.out.send(head.n)
		}
		o.recycle(head.text)
	}
}
