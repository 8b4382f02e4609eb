package completion

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/internal/lsppos"
)

// ErrSuperseded is the cause of a request cancelled by a newer one for
// the same document.
var ErrSuperseded = errors.New("superseded by a newer completion request")

// Input is one request for a suggestion at the cursor of an open
// document (the document is its Ticket's).
type Input struct {
	// Name is the file's path relative to its workspace folder, shown to
	// the model.
	Name string
	// Text is the document's text as the editor has it, unsaved changes
	// included; Pos the cursor in it.
	Text string
	Pos  lsppos.Position
	// Config is the folder's completion configuration; Key its API key
	// ("" for none).
	Config config.Completion
	Key    string
	// Redact masks secrets in the text sent (nil: none).
	Redact func(string) string
}

// Suggestion is the text to insert at the cursor ("" for none).
type Suggestion struct {
	Text string
	// Cached: served from the cache, the model not asked.
	Cached bool
}

// Stats counts what the service did.
type Stats struct {
	Requests, CacheHits, ModelCalls, Superseded atomic.Int64
}

// Service answers completion requests: newest request per document only,
// cached, trimmed. It is safe for concurrent use.
//
// "Newest" is the order the editor sent the requests in, not the order
// their handlers happen to run: each request is admitted (Admit) in wire
// order, and a request's handler that runs after a newer one's was
// admitted answers nothing instead of cancelling the newer one.
type Service struct {
	http  *http.Client
	cache *Cache
	// Stats counts requests, cache hits, model calls and superseded
	// requests.
	Stats Stats

	mu   sync.Mutex
	seq  uint64
	docs map[string]*docRequests // documents with admitted requests not yet ended
}

// Ticket is a request's place in the order the editor sent requests for
// its document (Admit).
type Ticket struct {
	doc string
	n   uint64
}

// Doc is the document the request is for.
func (t Ticket) Doc() string { return t.doc }

// docRequests are one document's admitted requests.
type docRequests struct {
	newest uint64 // the ticket of the newest admitted request
	open   int    // admitted requests not yet ended
	// flight is the ticket of the request asking now (0: none); cancel
	// ends it.
	flight uint64
	cancel context.CancelCauseFunc
}

// NewService returns a service whose model requests go through hc (nil:
// a client of its own).
func NewService(hc *http.Client) *Service {
	if hc == nil {
		hc = &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, MaxIdleConnsPerHost: 4, IdleConnTimeout: time.Minute}}
	}
	return &Service{http: hc, cache: NewCache(), docs: map[string]*docRequests{}}
}

// Admit records a request for doc in the order the editor sent it: call
// it in wire order, before the request's handler is released, and pass
// the ticket to Complete exactly once. It supersedes the requests for
// doc admitted before it, asking or not yet begun.
func (s *Service) Admit(doc string) Ticket {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	d := s.docs[doc]
	if d == nil {
		d = &docRequests{}
		s.docs[doc] = d
	}
	d.newest = s.seq
	d.open++
	if d.cancel != nil {
		d.cancel(ErrSuperseded)
	}
	return Ticket{doc: doc, n: s.seq}
}

// Complete returns the suggestion for in at t's document. A request
// admitted after t supersedes it: Complete then returns an empty
// suggestion and an error whose context cause is ErrSuperseded (at once
// if the newer one was admitted before this began). Cancelling ctx
// aborts the model's request.
func (s *Service) Complete(ctx context.Context, t Ticket, in Input) (Suggestion, error) {
	s.Stats.Requests.Add(1)
	ctx, done := s.begin(ctx, t)
	defer done()
	if ctx.Err() != nil {
		return Suggestion{}, s.cancelled(ctx)
	}
	w, err := NewWindow(in.Text, in.Pos, in.Config.ContextTokens)
	if err != nil {
		return Suggestion{}, err
	}
	if in.Redact != nil {
		w.Prefix, w.Suffix = in.Redact(w.Prefix), in.Redact(w.Suffix)
	}
	if text, ok := s.cache.Get(t.doc, w.Prefix, w.Suffix); ok {
		s.Stats.CacheHits.Add(1)
		return Suggestion{Text: text, Cached: true}, nil
	}
	if d := in.Config.Debounce.Duration; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return Suggestion{}, s.cancelled(ctx)
		}
	}
	req := Request{Prefix: w.Prefix, Suffix: w.Suffix, Name: in.Name, Language: Language(in.Name),
		MaxTokens: in.Config.MaxTokens, Temperature: in.Config.Temperature}
	if !w.Multiline && in.Config.API != config.CompletionChat {
		req.Stop = []string{"\n"}
	}
	if t := in.Config.Timeout.Duration; t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	s.Stats.ModelCalls.Add(1)
	answer, err := NewClient(in.Config, in.Key, s.http).Complete(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return Suggestion{}, s.cancelled(ctx)
		}
		return Suggestion{}, err
	}
	text := Trim(answer, w.Suffix, w.Multiline)
	s.cache.Put(t.doc, w.Prefix, w.Suffix, text)
	return Suggestion{Text: text}, nil
}

// cancelled is the error of a request ctx ended, counting a superseded
// one.
func (s *Service) cancelled(ctx context.Context) error {
	if errors.Is(context.Cause(ctx), ErrSuperseded) {
		s.Stats.Superseded.Add(1)
	}
	return context.Cause(ctx)
}

// begin makes t's request the one asking for its document, unless a
// newer one was admitted (the context it returns is then cancelled with
// ErrSuperseded); done ends it.
func (s *Service) begin(ctx context.Context, t Ticket) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	s.mu.Lock()
	d := s.docs[t.doc]
	if d == nil || d.newest != t.n {
		cancel(ErrSuperseded)
	} else {
		d.flight, d.cancel = t.n, cancel
	}
	s.mu.Unlock()
	return ctx, func() {
		s.mu.Lock()
		if d != nil {
			if d.flight == t.n {
				d.flight, d.cancel = 0, nil
			}
			if d.open--; d.open == 0 {
				delete(s.docs, t.doc)
			}
		}
		s.mu.Unlock()
		cancel(nil)
	}
}
