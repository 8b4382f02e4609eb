package jsonrpc

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/completion/fimtest"
	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
)

// BenchmarkInlineCompletionOverhead measures loom's own time per inline
// completion: a keystroke (didChange) and a textDocument/inlineCompletion
// through the LSP front end, the overlay, the window, masking and the
// HTTP request to a scripted llama.cpp /infill server, minus the time
// the request spent in that server (the model's own time, 2 ms of
// scripted work). Each request misses the cache (the keystroke is not
// what was suggested). It reports the median and the 90th percentile of
// the overhead.
func BenchmarkInlineCompletionOverhead(b *testing.B) {
	srv := fimtest.New()
	defer srv.Close()
	srv.Answer = func(fimtest.Received) string { time.Sleep(2 * time.Millisecond); return "zz" } // the model's time
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	folder, _ := filepath.EvalSymlinks(b.TempDir())
	src := filepath.Join(folder, "bench.go")
	// A realistic file: 400 lines around the cursor.
	var text []byte
	for range 200 {
		text = append(text, "\tx := compute(a, b, c) // some code around the cursor\n"...)
	}
	text = append(text, "\ty := \n"...)
	for range 200 {
		text = append(text, "\tz := compute(a, b, c) // more code after the cursor\n"...)
	}
	if err := os.WriteFile(src, text, 0o644); err != nil {
		b.Fatal(err)
	}
	opts := map[string]any{"hooks": map[string]any{"auto_commit": false}}
	for k, v := range completionOptions("infill", srv.URL) {
		opts[k] = v
	}
	serverEnd, clientEnd := net.Pipe()
	s := newServer(Options{Logger: testLogger(b), Host: hostOptions(b)})
	done := make(chan struct{})
	go func() { defer close(done); s.serve(context.Background(), serverEnd) }()
	ed := fakeeditor.Connect(ctx, clientEnd, fakeeditor.Config{Loom: true, Folders: []string{folder}, InitializationOptions: opts})
	defer func() { _ = ed.Close(); <-done }()
	if _, err := ed.Initialize(ctx); err != nil {
		b.Fatal(err)
	}
	var st map[string]any
	if err := ed.ExecuteCommand(ctx, CmdStatus, FolderArgs{}, &st); err != nil {
		b.Fatal(err)
	}
	if err := ed.OpenFile(ctx, src); err != nil {
		b.Fatal(err)
	}
	lats := make([]time.Duration, 0, b.N)
	col := uint32(6)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		at := protocol.Position{Line: 200, Character: col}
		if err := ed.EditBuffer(ctx, src, protocol.Range{Start: at, End: at}, "a"); err != nil {
			b.Fatal(err)
		}
		col++
		res, err := inlineAt(ctx, ed, src, protocol.Position{Line: 200, Character: col})
		if err != nil || res == nil || len(res.Items) != 1 {
			b.Fatalf("result %+v, %v", res, err)
		}
		lats = append(lats, time.Since(start))
	}
	b.StopTimer()
	model := srv.ModelTimes()
	if len(model) != len(lats) {
		b.Fatalf("%d model requests for %d completions", len(model), len(lats))
	}
	over := make([]time.Duration, len(lats))
	for i := range lats {
		over[i] = lats[i] - model[i]
	}
	slices.Sort(over)
	b.ReportMetric(float64(over[len(over)/2].Microseconds())/1000, "ms-overhead-median")
	b.ReportMetric(float64(over[len(over)*9/10].Microseconds())/1000, "ms-overhead-p90")
}
