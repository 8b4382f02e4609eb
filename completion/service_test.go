package completion

import (
	"errors"
	"testing"

	"github.com/loom-lsp/loom-lsp/completion/fimtest"
	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/internal/lsppos"
)

// The editor's order decides which request is newest, not the order the
// handlers run in: a request sent earlier whose handler begins after a
// newer one's must answer nothing and leave the newer one asking (the
// newer one is what the user typed last). Before tickets, the late
// handler superseded the newer request and the user saw no suggestion.
func TestOlderRequestBegunLateLeavesNewerAsking(t *testing.T) {
	srv := fimtest.New()
	defer srv.Close()
	release := make(chan struct{})
	srv.Gate = func(fimtest.Received) <-chan struct{} { return release }
	srv.Answer = func(r fimtest.Received) string { return "b + c" }
	cfg := config.Completion{API: config.CompletionInfill, BaseURL: srv.URL, MaxTokens: 16, ContextTokens: 256}
	s := NewService(nil)
	older := s.Admit("add.py")
	newer := s.Admit("add.py")

	type result struct {
		sug Suggestion
		err error
	}
	got := make(chan result, 1)
	go func() {
		sug, err := s.Complete(ctxT(t), newer, Input{Name: "add.py", Text: "return a", Pos: lsppos.Position{Character: 8}, Config: cfg})
		got <- result{sug, err}
	}()
	if err := srv.Await(ctxT(t), "the newer request at the model", func() bool { return srv.Started.Load() == 1 }); err != nil {
		t.Fatal(err)
	}
	// The older request's handler runs only now.
	sug, err := s.Complete(ctxT(t), older, Input{Name: "add.py", Text: "return ", Pos: lsppos.Position{Character: 7}, Config: cfg})
	if !errors.Is(err, ErrSuperseded) || sug.Text != "" {
		t.Errorf("older request = %+v, %v; want superseded", sug, err)
	}
	close(release)
	r := <-got
	if r.err != nil || r.sug.Text != "b + c" {
		t.Errorf("newer request = %+v, %v; want the model's answer", r.sug, r.err)
	}
	if n := srv.Started.Load(); n != 1 {
		t.Errorf("model requests = %d, want 1 (the older one never asks)", n)
	}
	// Nothing kept once both ended.
	s.mu.Lock()
	left := len(s.docs)
	s.mu.Unlock()
	if left != 0 {
		t.Errorf("documents still tracked: %d", left)
	}
}

// A newer request admitted while the older one asks cancels the older one.
func TestNewerRequestCancelsOlderAsking(t *testing.T) {
	srv := fimtest.New()
	hold := make(chan struct{})
	defer srv.Close()
	defer close(hold)
	srv.Gate = func(fimtest.Received) <-chan struct{} { return hold }
	cfg := config.Completion{API: config.CompletionInfill, BaseURL: srv.URL, MaxTokens: 16, ContextTokens: 256}
	s := NewService(nil)
	older := s.Admit("x.go")
	errc := make(chan error, 1)
	go func() {
		_, err := s.Complete(ctxT(t), older, Input{Name: "x.go", Text: "x := ", Pos: lsppos.Position{Character: 5}, Config: cfg})
		errc <- err
	}()
	if err := srv.Await(ctxT(t), "the older request at the model", func() bool { return srv.Started.Load() == 1 }); err != nil {
		t.Fatal(err)
	}
	s.Admit("x.go")
	if err := <-errc; !errors.Is(err, ErrSuperseded) {
		t.Errorf("older request's error = %v, want superseded", err)
	}
	if err := srv.Await(ctxT(t), "the older request aborted", func() bool { return srv.Aborted.Load() == 1 }); err != nil {
		t.Fatal(err)
	}
}
