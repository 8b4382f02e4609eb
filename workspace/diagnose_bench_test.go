package workspace

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/internal/goplstest"
)

// diagEditModel answers each turn's first request with a read and an edit of
// main.go that breaks it (odd turns) or fixes it (even turns), and the
// second with a short answer. Only chat completions count as requests:
// the folder's window probe (GET /v1/models and the like, asked on a
// worker while the first turn starts) is answered 404, as a server
// without those endpoints does — counted, it took the first turn's edit
// about one run in ten, and that turn ended "Done." with no edit.
func diagEditModel(b testing.TB) *httptest.Server {
	chunk := func(delta string) string {
		return `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}` + "\n\n"
	}
	end := func(reason string) string {
		return `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"` + reason + `"}]}` + "\n\ndata: [DONE]\n\n"
	}
	call := func(i int, id, name, args string) string {
		return chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":%q,"type":"function","function":{"name":%q,"arguments":%q}}]}`, i, id, name, args))
	}
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		k := n.Add(1)
		if k%2 == 0 {
			_, _ = io.WriteString(w, chunk(`{"content":"Done."}`)+end("stop"))
			return
		}
		old, new := `println(\"hi\")`, `println(x)`
		if (k/2)%2 == 1 {
			old, new = new, old
		}
		_, _ = io.WriteString(w, call(0, "r", "read_file", `{"path":"main.go"}`)+
			call(1, "e", "edit_file", `{"path":"main.go","old_string":"`+old+`","new_string":"`+new+`"}`)+end("tool_calls"))
	}))
	b.Cleanup(srv.Close)
	return srv
}

// BenchmarkDiagnosticsTurn measures a turn with an edit (a read and an
// edit of main.go, the answer) with diagnostics off and with loom's own
// warm gopls, interleaved in one run: turn-ms of each, and their ratio
// (issue 36's goal: ≤ 1.3 on a tool round trip). The model answers at
// once, so the ratio is the worst case: with a real model, the model's
// seconds come on top of both.
func BenchmarkDiagnosticsTurn(b *testing.B) {
	gopls := goplstest.Path(b)
	// The sandbox hides loom's state directories from commands; inside
	// the temp dir they would keep go list (in gopls) from making its
	// work dir there (the sandbox grants around a hidden path entry by
	// entry).
	b.Setenv("XDG_STATE_HOME", stateDirOutsideTmp(b))
	off, on := startDiagRun(b, gopls, config.DiagnosticsOff), startDiagRun(b, gopls, config.DiagnosticsAuto)
	turn := func(r *diagRun) time.Duration { return r.turn(b) }
	// Warm up: gopls starts and loads the module.
	for range 2 {
		turn(off)
		turn(on)
	}
	n := 0
	for b.Loop() {
		off.total += turn(off)
		on.total += turn(on)
		n++
	}
	if on.ed.reports.Load() < int64(n) || off.ed.reports.Load() != 0 {
		b.Fatalf("diagnostics reports: %d with gopls over %d turns, %d off", on.ed.reports.Load(), n+2, off.ed.reports.Load())
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(n) }
	b.ReportMetric(ms(off.total), "off-turn-ms")
	b.ReportMetric(ms(on.total), "gopls-turn-ms")
	b.ReportMetric(float64(on.total)/float64(off.total), "ratio")
}

// diagRun is a folder whose model edits main.go each turn.
type diagRun struct {
	s     *Conversation
	ended chan uint64
	total time.Duration
	ed    *diagCountEditor
}

// startDiagRun opens a Go module folder with loom's own gopls (diag:
// tools.diagnostics) and a model that breaks and fixes main.go turn by
// turn.
func startDiagRun(b testing.TB, gopls, diag string) *diagRun {
	srv := diagEditModel(b)
	folder := benchFolder(b, map[string]string{"go.mod": "module m\n\ngo 1.22\n", "main.go": "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"})
	ed := &diagCountEditor{turnEditor: turnEditor{ended: make(chan uint64, 1)}}
	opts := benchHostOptions(ed, srv.URL, func(cfg *config.Config) {
		cfg.Tools.Diagnostics = diag
		cfg.Tools.LanguageServers = map[string]config.LanguageServer{"gopls": {Command: []string{gopls}, Extensions: []string{".go"}}}
	})
	opts.StateDir = stateDirOutsideTmp(b)
	h := NewHost(opts)
	b.Cleanup(h.Close)
	s, err := h.AddFolder(folder)
	if err != nil {
		b.Fatal(err)
	}
	return &diagRun{s: s, ended: ed.ended, ed: ed}
}

// turn asks for an edit and waits for the turn's end.
func (r *diagRun) turn(b testing.TB) time.Duration {
	_, d := askAndWait(b, r.s, r.ended, "edit main.go")
	return d
}

// diagCountEditor counts the diagnostics reports besides telling when a
// turn ended.
type diagCountEditor struct {
	turnEditor
	reports atomic.Int64
}

func (e *diagCountEditor) Notify(n Notification) {
	if n.Kind == NoteDiagnostics {
		e.reports.Add(1)
	}
	e.turnEditor.Notify(n)
}

// stateDirOutsideTmp is a state directory outside the temp dir: the
// sandbox hides loom's state directory from commands, and one inside the
// temp dir would keep them (go list in gopls) from making new entries
// there.
func stateDirOutsideTmp(b testing.TB) string {
	base, err := os.UserCacheDir()
	if err != nil {
		b.Skip("no cache directory for the state dir")
	}
	dir, err := os.MkdirTemp(base, "loom-bench-state-")
	if err != nil {
		b.Skip(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// TestStatusNamesLanguageServers: loom.status names the language server
// loom started for the folder's diagnostics, once an edit needed it.
func TestStatusNamesLanguageServers(t *testing.T) {
	gopls := goplstest.Path(t)
	t.Setenv("XDG_STATE_HOME", stateDirOutsideTmp(t))
	r := startDiagRun(t, gopls, config.DiagnosticsAuto)
	if st, err := r.s.Status(context.Background()); err != nil || len(st.LanguageServers) != 0 {
		t.Fatalf("before any edit: %v, %v", st.LanguageServers, err)
	}
	r.turn(t)
	st, err := r.s.Status(context.Background())
	if err != nil || len(st.LanguageServers) != 1 || st.LanguageServers[0] != "gopls" {
		t.Fatalf("after an edit: %v, %v", st.LanguageServers, err)
	}
}
