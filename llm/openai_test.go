package llm

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// recorded is what the fake server saw of one request.
type recorded struct {
	header http.Header
	body   []byte
}

// fakeServer is an httptest server whose handler is swappable per test
// and which records every request.
type fakeServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []recorded
}

func newFakeServer(t *testing.T, h http.HandlerFunc) *fakeServer {
	t.Helper()
	fs := &fakeServer{}
	fs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fs.mu.Lock()
		fs.reqs = append(fs.reqs, recorded{header: r.Header.Clone(), body: body})
		fs.mu.Unlock()
		if r.URL.Path != "/v1/chat/completions" {
			http.Error(w, "wrong path "+r.URL.Path, http.StatusNotFound)
			return
		}
		h(w, r)
	}))
	t.Cleanup(fs.Close)
	return fs
}

func (fs *fakeServer) last(t *testing.T) recorded {
	t.Helper()
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if len(fs.reqs) == 0 {
		t.Fatal("server saw no request")
	}
	return fs.reqs[len(fs.reqs)-1]
}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// serveSSE writes body as an event stream, flushing after every event so
// the client sees the chunks arrive separately.
func serveSSE(body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		for _, ev := range bytes.SplitAfter(body, []byte("\n\n")) {
			w.Write(ev)
			w.(http.Flusher).Flush()
		}
	}
}

// serveError answers with status, a JSON body and extra headers.
func serveError(status int, body []byte, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(body)
	}
}

func newTestProvider(t *testing.T, url string, mod func(*OpenAIConfig)) *OpenAI {
	t.Helper()
	cfg := OpenAIConfig{BaseURL: url + "/v1", Model: "gpt-4o", IdleTimeout: 5 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	p, err := NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// run streams req and returns every emitted event.
func run(t *testing.T, p Provider, req Request) []fsm.Event {
	t.Helper()
	var evs []fsm.Event
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p.Stream(ctx, req, func(ev fsm.Event) { evs = append(evs, ev) })
	checkTerminal(t, evs)
	return evs
}

// checkTerminal asserts that exactly one final event ends evs.
func checkTerminal(t *testing.T, evs []fsm.Event) {
	t.Helper()
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	for i, ev := range evs {
		switch ev.(type) {
		case fsm.LlmCompleted, fsm.LlmError:
			if i != len(evs)-1 {
				t.Fatalf("final event %d of %d: %#v", i, len(evs), ev)
			}
		case fsm.LlmTextDelta, fsm.LlmToolCallDelta, fsm.LlmReasoningDelta:
			if i == len(evs)-1 {
				t.Fatalf("stream did not end with LlmCompleted or LlmError: last %#v", ev)
			}
		default:
			t.Fatalf("unexpected event %T", ev)
		}
	}
}

func text(evs []fsm.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		if d, ok := ev.(fsm.LlmTextDelta); ok {
			b.WriteString(d.Text)
		}
	}
	return b.String()
}

func lastErr(t *testing.T, evs []fsm.Event) fsm.LlmError {
	t.Helper()
	e, ok := evs[len(evs)-1].(fsm.LlmError)
	if !ok {
		t.Fatalf("want LlmError, got %#v", evs[len(evs)-1])
	}
	return e
}

func completed(t *testing.T, evs []fsm.Event) fsm.LlmCompleted {
	t.Helper()
	c, ok := evs[len(evs)-1].(fsm.LlmCompleted)
	if !ok {
		t.Fatalf("want LlmCompleted, got %#v", evs[len(evs)-1])
	}
	return c
}

func simpleReq(id uint64) Request {
	return Request{ID: id, Messages: []fsm.Message{{Role: fsm.RoleUser, Content: "hi"}}}
}

func TestOpenAITextChunksAndUsage(t *testing.T) {
	srv := newFakeServer(t, serveSSE(fixture(t, "text_chunks.sse")))
	evs := run(t, newTestProvider(t, srv.URL, nil), simpleReq(7))
	if got, want := text(evs), "Hello! I'm going to read the file first: `main.go`. Ünïcödé ✓\nDone."; got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
	deltas := 0
	for _, ev := range evs {
		switch e := ev.(type) {
		case fsm.LlmTextDelta:
			deltas++
			if e.Request != 7 {
				t.Errorf("delta Request = %d", e.Request)
			}
		case fsm.LlmCompleted:
			if e.Request != 7 {
				t.Errorf("completed Request = %d", e.Request)
			}
		}
	}
	if deltas != 18 {
		t.Errorf("%d text deltas, want 18 (one per non-empty chunk)", deltas)
	}
	c := completed(t, evs)
	if c.FinishReason != "stop" || len(c.ToolCalls) != 0 {
		t.Errorf("completed = %+v", c)
	}
	// OpenAI reports cached and reasoning tokens, here 0: reported zeros
	// are kept, unlike counts a server leaves out.
	if got, want := fsm.Describe(c), `LlmCompleted req=7 calls=[] usage=42/18/60 cached=0 reasoning=0 finish="stop"`; got != want {
		t.Errorf("completed = %s, want %s", got, want)
	}
}

func TestOpenAIToolCalls(t *testing.T) {
	tests := []struct {
		fixture string
		text    string
		want    []fsm.ToolCall
		reason  string
		deltas  int
	}{
		{"tool_call_split.sse", "", []fsm.ToolCall{
			{ID: "call_DdmO9pD3xa9XTPNJ32zg2hcA", Name: "read_file", Arguments: `{"path":"src/main.go","limit":200}`},
		}, "tool_calls", 12},
		{"two_tools_one_chunk.sse", "Let me look at both.", []fsm.ToolCall{
			{ID: "call_a1", Name: "read_file", Arguments: `{"path":"a.go"}`},
			{ID: "call_b2", Name: "grep", Arguments: `{"pattern":"TODO"}`},
		}, "tool_calls", 3},
		{"no_index.sse", "", []fsm.ToolCall{
			{ID: "call_lmk8r2x1", Name: "list_files", Arguments: `{"path":"."}`},
			{ID: "call_9qz0c3vb", Name: "read_file", Arguments: `{"path":"go.mod"}`},
		}, "tool_calls", 2},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			srv := newFakeServer(t, serveSSE(fixture(t, tt.fixture)))
			evs := run(t, newTestProvider(t, srv.URL, nil), simpleReq(3))
			if got := text(evs); got != tt.text {
				t.Errorf("text = %q, want %q", got, tt.text)
			}
			c := completed(t, evs)
			if !reflect.DeepEqual(c.ToolCalls, tt.want) {
				t.Errorf("tool calls = %+v\nwant %+v", c.ToolCalls, tt.want)
			}
			if c.FinishReason != tt.reason {
				t.Errorf("finish reason %q", c.FinishReason)
			}
			// The deltas re-assemble to the same calls, by Index.
			var n int
			args := map[int]string{}
			for _, ev := range evs {
				if d, ok := ev.(fsm.LlmToolCallDelta); ok {
					n++
					args[d.Index] += d.ArgumentsDelta
				}
			}
			if n != tt.deltas {
				t.Errorf("%d tool-call deltas, want %d", n, tt.deltas)
			}
			for i, call := range tt.want {
				if args[i] != call.Arguments {
					t.Errorf("deltas of call %d give %q, want %q", i, args[i], call.Arguments)
				}
			}
		})
	}
}

func TestOpenAIStreamErrors(t *testing.T) {
	tests := []struct {
		fixture   string
		kind      fsm.ErrorKind
		retryable bool
		text      string
		msg       string
	}{
		{"midstream_error.sse", fsm.ErrorServer, true, "Partial answer", "The server had an error while processing your request"},
		{"malformed_chunk.sse", fsm.ErrorStream, false, "Hel", "malformed chunk"},
		{"no_done.sse", fsm.ErrorStream, true, "Cut short", "[DONE]"},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			srv := newFakeServer(t, serveSSE(fixture(t, tt.fixture)))
			evs := run(t, newTestProvider(t, srv.URL, nil), simpleReq(9))
			if got := text(evs); got != tt.text {
				t.Errorf("text = %q, want %q", got, tt.text)
			}
			e := lastErr(t, evs)
			if e.Kind != tt.kind || e.Retryable != tt.retryable || e.Request != 9 {
				t.Errorf("error = %+v, want kind %s retryable %v", e, tt.kind, tt.retryable)
			}
			if !strings.Contains(e.Message, tt.msg) {
				t.Errorf("message %q does not contain %q", e.Message, tt.msg)
			}
		})
	}
}

func TestOpenAIHTTPErrors(t *testing.T) {
	tests := []struct {
		name       string
		handler    http.HandlerFunc
		status     int
		kind       fsm.ErrorKind
		retryable  bool
		retryAfter time.Duration
		msg        []string
	}{
		{"429 Retry-After", serveError(429, fixture(t, "error_429.json"), "Retry-After", "2"),
			429, fsm.ErrorRateLimited, true, 2 * time.Second,
			[]string{"rate limited by the provider", "Rate limit reached for gpt-4o", "retry in 2s"}},
		{"429 retry-after-ms wins", serveError(429, fixture(t, "error_429.json"), "Retry-After", "2", "retry-after-ms", "1500"),
			429, fsm.ErrorRateLimited, true, 1500 * time.Millisecond, []string{"retry in 1.5s"}},
		{"429 quota", serveError(429, []byte(`{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`)),
			429, fsm.ErrorRateLimited, false, 0, []string{"quota", "You exceeded your current quota"}},
		{"500", serveError(500, fixture(t, "error_500.json")),
			500, fsm.ErrorServer, true, 0, []string{"HTTP 500", "The server had an error"}},
		{"503 plain text", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "upstream connect error", http.StatusServiceUnavailable)
		}, 503, fsm.ErrorServer, true, 0, []string{"upstream connect error"}},
		{"401", serveError(401, fixture(t, "error_401.json")),
			401, fsm.ErrorAuth, false, 0, []string{"Incorrect API key provided"}},
		{"400 context length", serveError(400, fixture(t, "error_400_context.json")),
			400, fsm.ErrorContextLength, false, 0, []string{"maximum context length is 128000 tokens"}},
		{"400 other", serveError(400, []byte(`{"error":{"message":"Invalid 'messages[2].tool_call_id'","type":"invalid_request_error","code":null}}`)),
			400, fsm.ErrorBadRequest, false, 0, []string{"Invalid 'messages[2].tool_call_id'"}},
		{"404 ollama", serveError(404, []byte(`{"error":"model \"qwen9\" not found, try pulling it first"}`)),
			404, fsm.ErrorNotFound, false, 0, []string{`model "qwen9" not found`}},
		{"408", serveError(408, []byte(`{}`)), 408, fsm.ErrorNetwork, true, 0, nil},
		{"409", serveError(409, []byte(`{}`)), 409, fsm.ErrorServer, true, 0, nil},
		{"403", serveError(403, []byte(`{"error":{"message":"forbidden"}}`)), 403, fsm.ErrorAuth, false, 0, nil},
		{"200 json error", serveError(200, []byte(`{"error":{"message":"Provider returned error","code":502}}`)),
			502, fsm.ErrorServer, true, 0, []string{"Provider returned error"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, tt.handler)
			evs := run(t, newTestProvider(t, srv.URL, nil), simpleReq(5))
			if len(evs) != 1 {
				t.Fatalf("%d events, want just the error: %#v", len(evs), evs)
			}
			e := lastErr(t, evs)
			if e.StatusCode != tt.status || e.Kind != tt.kind || e.Retryable != tt.retryable ||
				e.RetryAfter != tt.retryAfter || e.Request != 5 {
				t.Errorf("got %+v\nwant status %d kind %s retryable %v retryAfter %s",
					e, tt.status, tt.kind, tt.retryable, tt.retryAfter)
			}
			for _, m := range tt.msg {
				if !strings.Contains(e.Message, m) {
					t.Errorf("message %q does not contain %q", e.Message, m)
				}
			}
		})
	}
}

func TestOpenAIConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	evs := run(t, newTestProvider(t, "http://"+addr, nil), simpleReq(1))
	e := lastErr(t, evs)
	if e.Kind != fsm.ErrorNetwork || !e.Retryable || !strings.Contains(e.Message, "refused") {
		t.Errorf("got %+v", e)
	}
}

func TestOpenAIConnectionResetMidStream(t *testing.T) {
	body := fixture(t, "text_chunks.sse")
	head := body[:bytes.Index(body, []byte("\n\n"))*3] // a few events in
	head = head[:bytes.LastIndex(head, []byte("\n\n"))+2]
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(head)
		w.(http.Flusher).Flush()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.SetLinger(0) // close with RST
		}
		conn.Close()
	})
	evs := run(t, newTestProvider(t, srv.URL, nil), simpleReq(2))
	if text(evs) == "" {
		t.Error("no text before the reset")
	}
	e := lastErr(t, evs)
	if e.Kind != fsm.ErrorNetwork || !e.Retryable || !strings.Contains(e.Message, "mid-stream") {
		t.Errorf("got %+v", e)
	}
}

// blockingSSE sends the first events of text_chunks.sse, signals started,
// and then stays silent until the client goes away or the test ends.
func blockingSSE(t *testing.T, started chan<- struct{}) http.HandlerFunc {
	body := fixture(t, "text_chunks.sse")
	events := bytes.SplitAfter(body, []byte("\n\n"))
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range events[:4] {
			w.Write(ev)
		}
		w.(http.Flusher).Flush()
		if started != nil {
			close(started)
		}
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}
}

func TestOpenAIIdleWatchdog(t *testing.T) {
	srv := newFakeServer(t, blockingSSE(t, nil))
	// Once the headers arrived, the idle limit applies, not the first-byte one.
	p := newTestProvider(t, srv.URL, func(c *OpenAIConfig) {
		c.IdleTimeout = 150 * time.Millisecond
		c.FirstByteTimeout = time.Hour
	})
	start := time.Now()
	evs := run(t, p, simpleReq(4))
	if el := time.Since(start); el < 150*time.Millisecond || el > 5*time.Second {
		t.Errorf("idle error after %s", el)
	}
	if got := text(evs); got != "Hello! I" {
		t.Errorf("text before silence = %q", got)
	}
	e := lastErr(t, evs)
	if e.Kind != fsm.ErrorIdle || !e.Retryable || !strings.Contains(e.Message, "150ms") {
		t.Errorf("got %+v", e)
	}
}

func TestOpenAIIdleBeforeHeaders(t *testing.T) {
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-done:
		}
	})
	// The first-byte limit, not the (much longer) idle one, applies until
	// the response headers arrive.
	p := newTestProvider(t, srv.URL, func(c *OpenAIConfig) {
		c.IdleTimeout = time.Hour
		c.FirstByteTimeout = 100 * time.Millisecond
	})
	e := lastErr(t, run(t, p, simpleReq(4)))
	if e.Kind != fsm.ErrorIdle || !e.Retryable || !strings.Contains(e.Message, "did not answer within 100ms (first_byte_timeout)") {
		t.Errorf("got %+v", e)
	}
}

// settleGoroutines waits, with a deadline, for the goroutine count to drop
// back to at most base.
func settleGoroutines(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("goroutines: %d > %d after the stream ended\n%s",
				runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
		runtime.Gosched()
		time.Sleep(5 * time.Millisecond) // polling a condition, not waiting for an event
	}
}

func TestOpenAICancelMidStream(t *testing.T) {
	base := runtime.NumGoroutine()
	started := make(chan struct{})
	srv := httptest.NewServer(blockingSSE(t, started))
	hc := &http.Client{Transport: &http.Transport{}}
	p := newTestProvider(t, srv.URL+"/", func(c *OpenAIConfig) {
		c.BaseURL = srv.URL
		c.HTTPClient = hc
	})
	ctx, cancel := context.WithCancel(context.Background())
	gotDelta := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	var afterCancel []fsm.Event
	cancelled := false
	returned := make(chan time.Time, 1)
	go func() {
		p.Stream(ctx, simpleReq(8), func(ev fsm.Event) {
			mu.Lock()
			if cancelled {
				afterCancel = append(afterCancel, ev)
			}
			mu.Unlock()
			if _, ok := ev.(fsm.LlmTextDelta); ok {
				once.Do(func() { close(gotDelta) })
			}
		})
		returned <- time.Now()
	}()
	for _, ch := range []chan struct{}{started, gotDelta} {
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatal("stream did not start")
		}
	}
	mu.Lock()
	cancelled = true
	mu.Unlock()
	at := time.Now()
	cancel()
	select {
	case end := <-returned:
		// Promptly; a loaded machine gets seconds (no wall-clock bound
		// tighter than that in a test).
		if d := end.Sub(at); d > 5*time.Second {
			t.Errorf("Stream returned %s after cancel, want promptly", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Stream did not return after cancel")
	}
	mu.Lock()
	for _, ev := range afterCancel {
		if _, ok := ev.(fsm.LlmTextDelta); !ok {
			t.Errorf("event after cancel: %#v", ev)
		}
	}
	mu.Unlock()
	srv.Close()
	hc.CloseIdleConnections()
	settleGoroutines(t, base)
}
