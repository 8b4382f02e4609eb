package workspace

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/llm"
)

// turnEditor is an editor that only tells when a turn ended: keeping
// nothing, it costs the same at turn 200 as at turn 1.
type turnEditor struct{ ended chan uint64 }

func (e *turnEditor) Notify(n Notification) {
	if n.Kind == NoteTurnEnded {
		e.ended <- n.Turn
	}
}
func (e *turnEditor) ApplyEdit(context.Context, DocumentEdit) error   { return ErrUnsupported }
func (e *turnEditor) Approve(context.Context, Approval) (bool, error) { return false, nil }
func (e *turnEditor) SaveDocuments(_ context.Context, paths []string) ([]string, error) {
	return nil, nil
}

// turnModel is an OpenAI-compatible server for the turn benchmark: each
// turn's first request is answered with 200 words streamed one chunk each
// and a read_file call, the second with a short answer. It discards the
// request body unread (a real server's parsing is not loom's CPU).
func turnModel(b *testing.B) *httptest.Server {
	chunk := func(delta string) string {
		return `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}` + "\n\n"
	}
	var first strings.Builder
	for i := range 200 {
		first.WriteString(chunk(fmt.Sprintf(`{"content":"word%d "}`, i)))
	}
	first.WriteString(chunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"main.go\"}"}}]}`))
	first.WriteString(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":100,"completion_tokens":200,"total_tokens":300}}` + "\n\ndata: [DONE]\n\n")
	second := chunk(`{"content":"The file declares package main; nothing to change."}`) +
		`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":100,"completion_tokens":10,"total_tokens":110}}` + "\n\ndata: [DONE]\n\n"
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r) // the window probe must not take a turn's answer
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		if n.Add(1)%2 == 1 {
			_, _ = io.WriteString(w, first.String())
		} else {
			_, _ = io.WriteString(w, second)
		}
	}))
	b.Cleanup(srv.Close)
	return srv
}

// benchFolder is a folder (symlinks resolved) holding files.
func benchFolder(b testing.TB, files map[string]string) string {
	folder, _ := filepath.EvalSymlinks(b.TempDir())
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(folder, name), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return folder
}

// benchHostOptions are a benchmark host's options: the editor ed, the
// OpenAI-compatible model server at url, auto-commit off, and tune's
// changes to the default configuration (nil: none). The caller sets the
// state directory and whatever else it needs.
func benchHostOptions(ed Editor, url string, tune func(*config.Config)) HostOptions {
	return HostOptions{
		Editor: ed,
		Config: func(string, []config.Override) (config.Config, error) {
			cfg := config.Default()
			cfg.Model.Name = "bench"
			cfg.Hooks.AutoCommit = false
			if tune != nil {
				tune(&cfg)
			}
			return cfg, nil
		},
		Provider: func(config.Config, func(string) string) (llm.Provider, error) {
			return llm.NewOpenAI(llm.OpenAIConfig{BaseURL: url + "/v1", Model: "bench"})
		},
	}
}

// askAndWait asks prompt and waits (a minute at most) until ended says
// the turn ended; it returns the turn and how long it took.
func askAndWait(b testing.TB, s *Conversation, ended <-chan uint64, prompt string) (uint64, time.Duration) {
	start := time.Now()
	turn, err := s.Ask(context.Background(), prompt)
	if err != nil {
		b.Fatal(err)
	}
	select {
	case got := <-ended:
		if got != turn {
			b.Fatalf("turn %d ended, want %d", got, turn)
		}
	case <-time.After(time.Minute):
		b.Fatalf("turn %d did not end", turn)
	}
	return turn, time.Since(start)
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSessionTurnCPU runs a 200-turn conversation through a real
// session, with the request cache (as loom runs: "cached") and, in the
// same run, encoding every message of every request (the reference, as
// before: "uncached"). A turn is what the issue measured: 200 streamed
// words, a read_file call, a short final answer, over local HTTP with the
// OpenAI provider. It reports the process's CPU per turn at turns 1, 50,
// 100 and 200 (each the median of five turns from there: 1-5, 50-54,
// 100-104, 196-200) and the ratio of turn 200 to turn 1 (issue 16 item
// 4: goal ≤ 1.2).
func BenchmarkSessionTurnCPU(b *testing.B) {
	const turns = 200
	srv := turnModel(b)
	for _, mode := range []string{"cached", "uncached"} {
		b.Run(mode, func(b *testing.B) {
			folder := benchFolder(b, map[string]string{"main.go": "package main\n\nfunc main() {}\n"})
			ed := &turnEditor{ended: make(chan uint64, 1)}
			opts := benchHostOptions(ed, srv.URL, nil)
			opts.Provider = func(config.Config, func(string) string) (llm.Provider, error) {
				return llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL + "/v1", Model: "bench",
					EncodeEveryMessage: mode == "uncached"})
			}
			opts.StateDir = b.TempDir()
			h := NewHost(opts)
			defer h.Close()
			s, err := h.AddFolder(folder)
			if err != nil {
				b.Fatal(err)
			}
			var cpu []time.Duration
			for b.Loop() {
				cpu = cpu[:0]
				for range turns {
					start := processCPU()
					askAndWait(b, s, ed.ended, "Look at main.go and tell me what it does.")
					cpu = append(cpu, processCPU()-start)
				}
			}
			at := func(t int) time.Duration {
				d := slices.Clone(cpu[t-1 : t+4])
				slices.Sort(d)
				return d[2]
			}
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			b.ReportMetric(ms(at(1)), "turn1-cpu-ms")
			b.ReportMetric(ms(at(50)), "turn50-cpu-ms")
			b.ReportMetric(ms(at(100)), "turn100-cpu-ms")
			b.ReportMetric(ms(at(196)), "turn200-cpu-ms")
			b.ReportMetric(float64(at(196))/float64(at(1)), "turn200/turn1")
		})
	}
}
