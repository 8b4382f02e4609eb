package workspace

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/llm"
)

// BenchmarkSubagentStart measures a child's start: from the parent's
// model response that calls the agent tool to the child's first model
// request (the spawn transition, a conversation with its journal and
// settings, its prompt), reported as start-ns; then the memory of an
// idle child (one waiting for its model), as idle-heap-bytes and
// idle-goroutines per child, over four children at once (the default
// running cap).
func BenchmarkSubagentStart(b *testing.B) {
	const idle = 4
	var mu sync.Mutex
	var calledAt time.Time
	var starts []time.Duration
	var holdIdle atomic.Bool
	hold := make(chan struct{})
	holding := make(chan struct{}, idle)
	model := funcProvider(func(ctx context.Context, req llm.Request, emit func(fsm.Event)) {
		task := childTask(req)
		_, isResult := lastToolResult(req)
		switch {
		case task == "" && !isResult:
			n := 1
			if holdIdle.Load() {
				n = idle
			}
			calls := make([]fsm.ToolCall, n)
			for i := range calls {
				calls[i] = agentCall(fmt.Sprintf("a%d", i), "researcher", fmt.Sprintf("task %d", i))
			}
			mu.Lock()
			calledAt = time.Now()
			mu.Unlock()
			respond(req, emit, "", calls...)
		case task == "":
			respond(req, emit, "done")
		default:
			mu.Lock()
			starts = append(starts, time.Since(calledAt))
			mu.Unlock()
			if holdIdle.Load() {
				holding <- struct{}{}
				select {
				case <-hold:
				case <-ctx.Done():
					return
				}
			}
			respond(req, emit, "found")
		}
	})
	h := newTestHost(b, model, nil)
	s, err := h.AddFolder(gitRepo(b, map[string]string{"a.go": "package a\n"}))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		turn, err := s.Ask(ctx, "one")
		if err != nil {
			b.Fatal(err)
		}
		h.editor.turnEndedIn(b, s.ID(), turn)
	}
	b.StopTimer()
	var sum time.Duration
	for _, d := range starts {
		sum += d
	}
	b.ReportMetric(float64(sum.Nanoseconds())/float64(max(len(starts), 1)), "start-ns")

	holdIdle.Store(true)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	g0 := runtime.NumGoroutine()
	turn, err := s.Ask(ctx, "many")
	if err != nil {
		b.Fatal(err)
	}
	for range idle {
		<-holding
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	g1 := runtime.NumGoroutine()
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/idle, "idle-heap-bytes")
	b.ReportMetric(float64(g1-g0)/idle, "idle-goroutines")
	close(hold)
	h.editor.turnEndedIn(b, s.ID(), turn)
}
