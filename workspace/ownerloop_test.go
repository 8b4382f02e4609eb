package workspace

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestOwnerLoopCallWhileDraining: once quit is closed, a conversation's
// loop refuses calls (ErrClosed) rather than wait for an owner that is
// going away, while a folder's loop (servesDraining) still serves them
// until done: its workers may need the folder while they finish.
func TestOwnerLoopCallWhileDraining(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	t.Run("conversation", func(t *testing.T) {
		// No owner reads the inbox: only quit is ready.
		l := ownerLoop{in: make(chan func()), quit: make(chan struct{}), done: make(chan struct{})}
		close(l.quit)
		if err := l.call(ctx, func() { t.Error("a call ran after quit") }); !errors.Is(err, ErrClosed) {
			t.Fatalf("call after quit = %v, want ErrClosed", err)
		}
	})
	t.Run("folder", func(t *testing.T) {
		l := ownerLoop{in: make(chan func()), quit: make(chan struct{}), done: make(chan struct{}), servesDraining: true}
		close(l.quit)
		stop := make(chan struct{})
		go func() { // the owner drains
			defer close(l.done)
			for {
				select {
				case fn := <-l.in:
					fn()
				case <-stop:
					return
				}
			}
		}()
		defer func() { close(stop); <-l.done }()
		// Were quit a way out, the select would take it about half the
		// time: twenty calls all served say it is not.
		for i := 0; i < 20; i++ {
			ran := false
			if err := l.call(ctx, func() { ran = true }); err != nil || !ran {
				t.Fatalf("call %d while draining = %v (ran %v), want served", i, err, ran)
			}
		}
	})
}
