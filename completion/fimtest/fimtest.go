// Package fimtest is a scripted fill-in-the-middle server on loopback
// for tests: it speaks llama.cpp's /infill, OpenAI-style /completions,
// Ollama's /api/generate, Mistral's /v1/fim/completions and
// /chat/completions with the answers' shapes those servers document, and
// counts the requests it started, completed and saw aborted by the
// client.
package fimtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"
)

// Received is one request the server got.
type Received struct {
	Path string
	// Raw is the body as sent; Body the same decoded.
	Raw  []byte
	Body map[string]any
	// Auth is the Authorization header.
	Auth string
}

// Str returns the body's string field key.
func (r Received) Str(key string) string { s, _ := r.Body[key].(string); return s }

// Server is the scripted server.
type Server struct {
	*httptest.Server
	// Answer returns the completion for a request (default: "").
	Answer func(Received) string
	// Gate, when set, returns a channel the request waits on before it
	// answers; a request whose client goes away first counts as aborted.
	Gate func(Received) <-chan struct{}
	// Started, Completed and Aborted count the requests.
	Started, Completed, Aborted atomic.Int64

	mu      sync.Mutex
	reqs    []Received
	times   []time.Duration // each completed request's time in the handler
	changed chan struct{}   // closed and replaced on every count change
}

// New starts a server on 127.0.0.1; it is closed at the test's end by
// the caller (Close).
func New() *Server {
	s := &Server{changed: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.reqs...)
}

func (s *Server) signal() {
	s.mu.Lock()
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// Await waits until cond holds (checked at every count change) or ctx
// ends.
func (s *Server) Await(ctx context.Context, what string, cond func() bool) error {
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (started %d, completed %d, aborted %d)", what, ctx.Err(),
				s.Started.Load(), s.Completed.Load(), s.Aborted.Load())
		}
	}
}

// ModelTimes returns the time each completed request spent in the
// server (the model's own time, as a client sees it at best).
func (s *Server) ModelTimes() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.times...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rec := Received{Path: r.URL.Path, Raw: raw, Auth: r.Header.Get("Authorization")}
	if err := json.Unmarshal(raw, &rec.Body); err != nil {
		http.Error(w, `{"error":"invalid JSON"}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, rec)
	s.mu.Unlock()
	s.Started.Add(1)
	s.signal()
	if s.Gate != nil {
		if gate := s.Gate(rec); gate != nil {
			select {
			case <-gate:
			case <-r.Context().Done():
				s.Aborted.Add(1)
				s.signal()
				return
			}
		}
	}
	text := ""
	if s.Answer != nil {
		text = s.Answer(rec)
	}
	body, status := answer(rec, text)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
	s.mu.Lock()
	s.times = append(s.times, time.Since(start))
	s.mu.Unlock()
	s.Completed.Add(1)
	s.signal()
}

// answer is the server's answer for rec's path, shaped as each server
// documents it.
func answer(rec Received, text string) ([]byte, int) {
	var v any
	switch rec.Path {
	case "/infill":
		// llama.cpp's /infill answers like /completion.
		v = map[string]any{"index": 0, "content": text, "tokens": []int{}, "id_slot": 0, "stop": true,
			"model": "qwen2.5-coder-1.5b", "tokens_predicted": 4, "tokens_evaluated": 32, "stop_type": "eos", "stopping_word": ""}
	case "/completions", "/v1/completions":
		v = map[string]any{"id": "cmpl-1", "object": "text_completion", "created": 1700000000, "model": rec.Str("model"),
			"choices": []any{map[string]any{"index": 0, "text": text, "logprobs": nil, "finish_reason": "stop"}},
			"usage":   map[string]any{"prompt_tokens": 30, "completion_tokens": 4, "total_tokens": 34}}
	case "/api/generate":
		v = map[string]any{"model": rec.Str("model"), "created_at": "2026-12-07T13:50:00Z", "response": text, "done": true,
			"done_reason": "stop", "total_duration": 123456, "eval_count": 4}
	case "/v1/fim/completions", "/chat/completions", "/v1/chat/completions":
		v = map[string]any{"id": "fim-1", "object": "chat.completion", "created": 1700000000, "model": rec.Str("model"),
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": text}, "finish_reason": "stop"}},
			"usage":   map[string]any{"prompt_tokens": 30, "completion_tokens": 4, "total_tokens": 34}}
	default:
		return []byte(`{"error":"not found"}`), http.StatusNotFound
	}
	b, _ := json.Marshal(v)
	return b, http.StatusOK
}
