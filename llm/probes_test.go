package llm

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestContextWindowProbesAtOnce: the window probes are in flight together,
// never one after the other — llama.cpp's /props answers only once
// Ollama's /api/show was asked (a sequential prober would wait for it
// forever) — and paths the server answered 404 are not asked again.
func TestContextWindowProbesAtOnce(t *testing.T) {
	showAsked := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	asked := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		asked[r.URL.Path]++
		mu.Unlock()
		switch r.URL.Path {
		case "/api/show":
			once.Do(func() { close(showAsked) })
			http.NotFound(w, r)
		case "/props":
			select {
			case <-showAsked:
			case <-time.After(20 * time.Second):
			case <-r.Context().Done():
				return
			}
			io.WriteString(w, llamaCppProps)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	p, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w, err := p.ContextWindow(ctx)
	if err != nil || w.Tokens != 16384 {
		t.Fatalf("window %+v, %v: the probes were not in flight together", w, err)
	}
	if got, want := p.MissingProbes(), []string{"/api/show", "/api/v0/models", "/v1/models"}; !slices.Equal(got, want) {
		t.Errorf("missing probes %v, want %v", got, want)
	}
	// Asked again: only /props, which answered.
	if _, err := p.ContextWindow(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if asked["/v1/models"] != 1 || asked["/api/show"] != 1 || asked["/props"] != 2 {
		t.Errorf("asked %v: a 404 path was asked again", asked)
	}

	// Another provider of the same server told what is missing asks
	// only the rest.
	q, _ := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1", Model: "m"})
	q.SkipProbes([]string{"/v1/models", "/api/show", "/api/v0/models"})
	mu.Unlock()
	if w, err := q.ContextWindow(ctx); err != nil || w.Tokens != 16384 {
		t.Errorf("window %+v, %v", w, err)
	}
	mu.Lock()
	if asked["/v1/models"] != 1 || asked["/api/show"] != 1 {
		t.Errorf("asked %v: a path known to be missing was asked", asked)
	}
}
