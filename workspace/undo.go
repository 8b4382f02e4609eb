package workspace

import (
	"context"
	"path/filepath"

	"github.com/loom-lsp/loom-lsp/workspace/changes"
)

// ErrUndoRefused is wrapped by Undo's error when a guard refuses to undo;
// the error says why.
var ErrUndoRefused = changes.ErrUndoRefused

// waitTurnEnd returns once the session has no turn in flight: at once
// when idle, else when the turn in flight ends. held reports that the
// worktree lock was taken for the caller at the turn's end, before a
// queued prompt's turn could take it.
func (s *Conversation) waitTurnEnd(ctx context.Context) (held bool, err error) {
	var wait chan bool
	if err := s.loop.call(ctx, func() {
		if s.busy() {
			wait = make(chan bool, 1)
			s.git.idle = append(s.git.idle, wait)
		}
	}); err != nil {
		return false, err
	}
	if wait == nil {
		return false, nil
	}
	select {
	case held = <-wait:
		return held, nil
	case <-ctx.Done():
		// The lock may have been handed over meanwhile: give it back.
		go func() {
			select {
			case held := <-wait:
				if held {
					s.git.lock.Unlock()
				}
			case <-s.loop.done:
			}
		}()
		return false, ctx.Err()
	case <-s.loop.done:
		return false, ErrClosed
	}
}

// turnEnded hands the worktree lock to the first undo waiting for the
// turn to end, when it is free, and releases the others; on the owner
// goroutine, when the turn ends.
func (g *gitState) turnEnded() {
	for _, w := range g.idle {
		w <- g.lock.TryLock()
	}
	g.idle = nil
}

// absPaths joins each of rels (slash-separated, relative to top) to top.
func absPaths(top string, rels []string) []string {
	out := make([]string, len(rels))
	for i, r := range rels {
		out[i] = filepath.Join(top, filepath.FromSlash(r))
	}
	return out
}
