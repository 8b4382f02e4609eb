package workspace

import (
	"context"
	"sync"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// ownerLoop is how work reaches a conversation's owner goroutine (run):
// its inbox of functions, and the goroutines started for its actions
// (workers), which drain waits for. Everything that is not the owner —
// model streams, tool runs, timers, editor replies, the exported methods
// — hands its work to the owner through call (waiting) or post (not
// waiting); a turn's work posts Live, so that nothing of a cancelled turn
// gets through.
type ownerLoop struct {
	in   chan func()
	quit chan struct{} // closed by Close
	done chan struct{} // closed when run has returned
	// workers counts the goroutines started for the actions.
	workers workerGroup
	// step steps an event of the conversation (on the owner goroutine);
	// nil for a folder's loop, which has no machine.
	step func(ev fsm.Event)
	// servesDraining: call is served until done, also once quit is
	// closed (a folder's loop: its workers may still need it while they
	// finish). A conversation's call refuses once quit is closed.
	servesDraining bool
}

// workerGroup counts the goroutines a session started for its actions.
type workerGroup struct{ sync.WaitGroup }

// goWorker runs fn on a new goroutine counted in l.workers.
func (l *ownerLoop) goWorker(fn func()) {
	l.workers.Add(1)
	go func() {
		defer l.workers.Done()
		fn()
	}()
}

// call runs fn on the owner goroutine and waits for it. Once quit is
// closed it returns ErrClosed, unless the loop servesDraining.
func (l *ownerLoop) call(ctx context.Context, fn func()) error {
	finished := make(chan struct{})
	wrapped := func() { defer close(finished); fn() }
	quit := l.quit
	if l.servesDraining {
		quit = nil // never ready: served until done
	}
	select {
	case l.in <- wrapped:
	case <-l.done:
		return ErrClosed
	case <-quit:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-finished:
		return nil
	case <-l.done:
		return ErrClosed
	}
}

// post hands fn to the owner goroutine without waiting for it to run. It
// gives up once the session is done.
func (l *ownerLoop) post(fn func()) {
	select {
	case l.in <- fn:
	case <-l.done:
	}
}

// postEvent steps ev on the owner goroutine.
func (l *ownerLoop) postEvent(ev fsm.Event) {
	l.post(func() { l.step(ev) })
}

// postLive runs fn on the owner goroutine unless ctx, the context of the
// work that produced it, was cancelled by then. The owner goroutine is the
// one that cancels, so nothing from a cancelled turn gets through: not to
// a later turn, nor to a new conversation whose ids start again.
func (l *ownerLoop) postLive(ctx context.Context, fn func()) {
	l.post(func() {
		if ctx.Err() == nil {
			fn()
		}
	})
}

// postEventLive steps ev on the owner goroutine unless ctx was cancelled.
func (l *ownerLoop) postEventLive(ctx context.Context, ev fsm.Event) {
	l.postLive(ctx, func() { l.step(ev) })
}
