package mcp

import (
	"context"
	"errors"
	"sync"
	"time"
)

// errCallTimeout is the cause of a call's context cancelled by its
// timeout.
var errCallTimeout = errors.New("the MCP call's timeout passed")

// callClock is a call's timeout that stops while a question of the
// server waits for the user (elicitation), so that a slow typist does not
// time the call out: only the time the server takes counts. The question
// itself is bounded by whoever asks (tools.approval_timeout).
type callClock struct {
	mu      sync.Mutex
	cancel  context.CancelCauseFunc
	timer   *time.Timer
	left    time.Duration // what is left when started last
	started time.Time
	paused  int // questions waiting
	asked   time.Duration
	askedAt time.Time
}

// startCallClock returns the call's context, cancelled with
// errCallTimeout once timeout passed outside questions, and its clock;
// stop releases it.
func startCallClock(ctx context.Context, timeout time.Duration) (context.Context, *callClock, func()) {
	callCtx, cancel := context.WithCancelCause(ctx)
	c := &callClock{cancel: cancel, left: timeout, started: time.Now()}
	c.timer = time.AfterFunc(timeout, func() { cancel(errCallTimeout) })
	return callCtx, c, func() {
		c.mu.Lock()
		c.timer.Stop()
		c.mu.Unlock()
		cancel(context.Canceled)
	}
}

// pause stops the clock while a question waits; resume starts it again
// with what was left. Questions may overlap: the clock runs again when
// the last one is answered.
func (c *callClock) pause() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paused++; c.paused == 1 && c.timer.Stop() {
		c.left -= time.Since(c.started)
		c.askedAt = time.Now()
	}
}

func (c *callClock) resume() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paused--; c.paused == 0 && !c.askedAt.IsZero() {
		c.asked += time.Since(c.askedAt)
		c.askedAt = time.Time{}
		c.started = time.Now()
		c.timer = time.AfterFunc(max(c.left, 0), func() { c.cancel(errCallTimeout) })
	}
}

// waited is the time questions waited for the user.
func (c *callClock) waited() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.asked
}

// timedOut reports whether callCtx ended by the call's timeout.
func timedOut(callCtx context.Context) bool {
	return errors.Is(context.Cause(callCtx), errCallTimeout)
}
