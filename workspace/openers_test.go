package workspace

import (
	"context"
	"sync"
	"testing"
)

// Two openers at once as a server starts (AddFolder's Current, and a
// request naming the kept conversation): the one that locks the journal
// registers it before the other lists the journals, so the other never
// takes it for a conversation open in another process and starts a new
// one in its place. Every opener gets the kept conversation.
func TestConcurrentOpenersGetTheKeptConversation(t *testing.T) {
	state, folder := t.TempDir(), t.TempDir()
	h1 := newTestHostIn(t, state, textModel(), nil)
	s1, _ := h1.AddFolder(folder)
	s1.Ask(context.Background(), "first")
	h1.editor.turnEnded(t, 1)
	id := s1.ID()
	h1.Close()
	for round := 0; round < 40; round++ {
		h := newTestHostIn(t, state, textModel(), nil)
		f, err := h.OpenFolder(folder)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]string, 4)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range got {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				var c *Conversation
				var err error
				if i%2 == 0 {
					c, err = f.Conversation(id)
				} else {
					c, err = f.Current()
				}
				if err != nil {
					got[i] = "error: " + err.Error()
					return
				}
				got[i] = c.ID()
			}()
		}
		close(start)
		wg.Wait()
		for i, g := range got {
			if g != id {
				t.Fatalf("round %d: opener %d got %q, want the kept conversation %s (all: %q)", round, i, g, id, got)
			}
		}
		h.Close()
	}
}
