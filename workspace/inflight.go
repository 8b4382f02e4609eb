package workspace

import (
	"context"
	"time"
)

// inFlight is what runs for a conversation's turn and stops with it: the
// turn's context (model stream, tool runs, hooks), the retry timer and
// the subagents. The owner goroutine owns it.
type inFlight struct {
	ctx    context.Context
	cancel context.CancelFunc
	retry  *time.Timer
	// closeChildren stops the conversation's subagents
	// (children.closeAll).
	closeChildren func()
}

// context returns the context of the turn in flight, creating it; stop
// cancels it.
func (t *inFlight) context() context.Context {
	if t.ctx == nil {
		t.ctx, t.cancel = context.WithCancel(context.Background())
	}
	return t.ctx
}

// retryAfter runs fired after delay, unless stop comes first.
func (t *inFlight) retryAfter(delay time.Duration, fired func()) {
	t.retry = time.AfterFunc(delay, fired)
}

// stop cancels the subagents, the model stream, tool runs and hook of
// the turn in flight, and the retry timer.
func (t *inFlight) stop() {
	t.closeChildren()
	if t.cancel != nil {
		t.cancel()
		t.ctx, t.cancel = nil, nil
	}
	if t.retry != nil {
		t.retry.Stop()
		t.retry = nil
	}
}
