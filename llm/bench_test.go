package llm

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
)

const benchChunks = 100_000

// benchBody is benchChunks small text chunks in the OpenAI wire shape.
func benchBody() []byte {
	var b bytes.Buffer
	for i := range benchChunks {
		fmt.Fprintf(&b, `data: {"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_eb9dce56a8","choices":[{"index":0,"delta":{"content":" tok%d"},"logprobs":null,"finish_reason":null}]}`+"\n\n", i%100)
	}
	b.WriteString(`data: {"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// BenchmarkStream100kChunks decodes and emits 100,000 text chunks served
// over local HTTP, and in the same run reads the same bytes with a bare
// bufio.Scanner, reporting throughput, allocations per chunk and the
// provider/scanner time ratio.
func BenchmarkStream100kChunks(b *testing.B) {
	body := benchBody()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(body)
	}))
	defer srv.Close()
	p, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1", Model: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	req := simpleReq(1)
	var provTime, scanTime time.Duration
	var allocs uint64
	var ms runtime.MemStats
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for b.Loop() {
		runtime.ReadMemStats(&ms)
		a0, t0 := ms.Mallocs, time.Now()
		deltas, done := 0, false
		p.Stream(context.Background(), req, func(ev fsm.Event) {
			switch ev.(type) {
			case fsm.LlmTextDelta:
				deltas++
			case fsm.LlmCompleted:
				done = true
			}
		})
		provTime += time.Since(t0)
		runtime.ReadMemStats(&ms)
		allocs += ms.Mallocs - a0
		if deltas != benchChunks || !done {
			b.Fatalf("%d deltas, done %v", deltas, done)
		}

		t1 := time.Now()
		resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{}`))
		if err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		lines := 0
		for sc.Scan() {
			if len(sc.Bytes()) > 0 {
				lines++
			}
		}
		resp.Body.Close()
		scanTime += time.Since(t1)
		if lines != benchChunks+2 {
			b.Fatalf("scanner saw %d data lines", lines)
		}
	}
	n := float64(b.N) * benchChunks
	b.ReportMetric(n/provTime.Seconds(), "chunks/s")
	b.ReportMetric(float64(allocs)/n, "allocs/chunk")
	b.ReportMetric(n/scanTime.Seconds(), "scanner-chunks/s")
	b.ReportMetric(provTime.Seconds()/scanTime.Seconds(), "provider/scanner")
}

// BenchmarkScriptTextChunks measures the scripted provider, used by the
// offline demo and the session benchmarks.
func BenchmarkScriptTextChunks(b *testing.B) {
	text := make([]string, 1000)
	for i := range text {
		text[i] = " tok"
	}
	s, err := NewScript("bench", Step{Repeat: true, Text: text})
	if err != nil {
		b.Fatal(err)
	}
	req := simpleReq(1)
	b.ReportAllocs()
	for b.Loop() {
		s.Stream(context.Background(), req, func(fsm.Event) {})
	}
	b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "chunks/s")
}
