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
// document.
type Input struct {
	// Doc identifies the document (its path): one request per document
	// is in flight.
	Doc string
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
type Service struct {
	http  *http.Client
	cache *Cache
	// Stats counts requests, cache hits, model calls and superseded
	// requests.
	Stats Stats

	mu       sync.Mutex
	inflight map[string]*flight // by document
}

type flight struct{ cancel context.CancelCauseFunc }

// NewService returns a service whose model requests go through hc (nil:
// a client of its own).
func NewService(hc *http.Client) *Service {
	if hc == nil {
		hc = &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, MaxIdleConnsPerHost: 4, IdleConnTimeout: time.Minute}}
	}
	return &Service{http: hc, cache: NewCache(), inflight: map[string]*flight{}}
}

// Complete returns the suggestion for in. A newer Complete for the same
// document cancels this one, which then returns an empty suggestion and
// an error whose context cause is ErrSuperseded; cancelling ctx aborts
// the model's request.
func (s *Service) Complete(ctx context.Context, in Input) (Suggestion, error) {
	s.Stats.Requests.Add(1)
	ctx, done := s.begin(ctx, in.Doc)
	defer done()
	w, err := NewWindow(in.Text, in.Pos, in.Config.ContextTokens)
	if err != nil {
		return Suggestion{}, err
	}
	if in.Redact != nil {
		w.Prefix, w.Suffix = in.Redact(w.Prefix), in.Redact(w.Suffix)
	}
	if text, ok := s.cache.Get(in.Doc, w.Prefix, w.Suffix); ok {
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
	s.cache.Put(in.Doc, w.Prefix, w.Suffix, text)
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

// begin registers the request of doc as the one in flight, cancelling
// the one before it; done unregisters it.
func (s *Service) begin(ctx context.Context, doc string) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	f := &flight{cancel: cancel}
	s.mu.Lock()
	if old := s.inflight[doc]; old != nil {
		old.cancel(ErrSuperseded)
	}
	s.inflight[doc] = f
	s.mu.Unlock()
	return ctx, func() {
		s.mu.Lock()
		if s.inflight[doc] == f {
			delete(s.inflight, doc)
		}
		s.mu.Unlock()
		cancel(nil)
	}
}
