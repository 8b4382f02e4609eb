package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// memoryBudget is the most a daemon may hold, peak resident memory, while
// a model streams far more than that.
const memoryBudget = 100 << 20

// memoryBinary is the binary the memory tests run: the one built for the
// tests, or LOOM_MEMORY_BIN (to measure another build, e.g. main before a
// change: the tests then report its figures and fail).
func memoryBinary() string {
	if b := os.Getenv("LOOM_MEMORY_BIN"); b != "" {
		return b
	}
	return loomBinary
}

// floodServer streams one answer of total bytes of text (endless when
// total is 0) as fast as the client takes it, in 16 KB chunks. streamed
// counts what it wrote; done is closed when the stream ended (all sent, or
// the client went away).
type floodServer struct {
	*httptest.Server
	streamed atomic.Int64
	done     chan struct{}
}

func newFloodServer(t *testing.T, total int64) *floodServer {
	f := &floodServer{done: make(chan struct{})}
	piece := strings.Repeat("All work and no play makes Jack a dull boy. ", 16*1024/44)
	chunk, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": piece}}}})
	event := []byte("data: " + string(chunk) + "\n\n")
	var once atomic.Bool
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		io.Copy(io.Discard, r.Body)
		if once.Swap(true) {
			// Only the first request floods; later ones answer briefly.
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
			return
		}
		defer close(f.done)
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		for total == 0 || f.streamed.Load() < total {
			if _, err := w.Write(event); err != nil {
				return
			}
			f.streamed.Add(int64(len(piece)))
			if f.streamed.Load()%(256<<10) < int64(len(piece)) {
				fl.Flush()
			}
			if r.Context().Err() != nil {
				return
			}
		}
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(f.Close)
	return f
}

// peakRSS follows a process's peak resident memory (VmHWM) until stop.
type peakRSS struct {
	pid  int
	peak atomic.Int64
	stop chan struct{}
	done chan struct{}
}

func watchRSS(pid int) *peakRSS {
	p := &peakRSS{pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			if n := vmHWM(pid); n > p.peak.Load() {
				p.peak.Store(n)
			}
			select {
			case <-p.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

// end stops following and returns the peak in bytes.
func (p *peakRSS) end() int64 {
	if n := vmHWM(p.pid); n > p.peak.Load() {
		p.peak.Store(n)
	}
	close(p.stop)
	<-p.done
	return p.peak.Load()
}

// vmHWM reads a process's peak resident set size from /proc, 0 when gone.
func vmHWM(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/(1<<20)) }

// TestMemoryStalledClient: an LSP client asks, then stops reading stdout
// while the model streams 200 MB. The daemon's peak memory stays under
// 100 MB: the answer is cut at model.max_answer_bytes with a clear error,
// and what waits for the client is capped (its tail kept, a marker says
// how much was not shown).
func TestMemoryStalledClient(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 200 MB")
	}
	srv := newFloodServer(t, 200<<20)
	dir := testRepo(t)
	c := startServer(t, memoryBinary())
	rss := watchRSS(c.cmd.Process.Pid)
	in := bufio.NewReaderSize(c.conn, 64<<10)
	send := func(msg string) {
		if _, err := io.WriteString(c.conn, lspFrame(msg)); err != nil {
			t.Fatal(err)
		}
	}
	opts, _ := json.Marshal(map[string]any{
		"model": map[string]any{"base_url": srv.URL + "/v1", "name": "m"},
		"agent": map[string]any{"max_retries": 0},
		"hooks": map[string]any{"auto_commit": false},
	})
	uri := "file://" + dir
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":"` + uri + `","capabilities":{"experimental":{"loom":{}}},"workspaceFolders":[{"uri":"` + uri + `","name":"w"}],"initializationOptions":` + string(opts) + `}}`)
	awaitResponse(t, in, 1)
	send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"workspace/executeCommand","params":{"command":"loom.ask","arguments":[{"prompt":"write a lot"}]}}`)
	awaitResponse(t, in, 2)

	// The client stops reading until the model's stream is over.
	select {
	case <-srv.done:
	case <-time.After(90 * time.Second):
		t.Fatalf("the stream did not end: %s streamed", mb(srv.streamed.Load()))
	}
	// Then it reads on, until the answer's error.
	var seen bytes.Buffer
	var marker, cut, shown atomic.Bool
	gotCut := make(chan struct{})
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := in.Read(buf)
			seen.Write(buf[:n])
			s := seen.String()
			if strings.Contains(s, "not shown (the editor was not reading") {
				marker.Store(true)
			}
			if strings.Contains(s, "loom/displayMessage") {
				shown.Store(true)
			}
			if strings.Contains(s, "max_answer_bytes") && !cut.Swap(true) {
				close(gotCut)
			}
			if seen.Len() > 8<<20 {
				seen.Reset()
			}
			if err != nil {
				return
			}
		}
	}()
	select {
	case <-gotCut:
	case <-time.After(30 * time.Second):
	}
	peak := rss.end()
	t.Logf("stalled client: %s streamed, peak RSS %s (budget %s)", mb(srv.streamed.Load()), mb(peak), mb(memoryBudget))
	if peak > memoryBudget {
		t.Errorf("peak RSS %s over %s", mb(peak), mb(memoryBudget))
	}
	if !cut.Load() {
		t.Error("the client never got the max_answer_bytes error")
	}
	if !shown.Load() {
		t.Error("no loom/displayMessage: the client was not taken for a loom client")
	}
	if !marker.Load() {
		t.Error("the client was not told what it did not get while it was not reading")
	}
}

// TestMemoryEndlessStream: a model that streams without end. exec's peak
// memory stays under 100 MB, and the turn ends with the clear
// max_answer_bytes error rather than never.
func TestMemoryEndlessStream(t *testing.T) {
	if testing.Short() {
		t.Skip("streams without end")
	}
	srv := newFloodServer(t, 0)
	dir := testRepo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, memoryBinary(), "exec", "--output", "jsonl", "--no-deltas", "--base-url", srv.URL+"/v1", "--model", "m", "write forever")
	cmd.Dir = dir
	cmd.Env = isolatedEnv(t)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	rss := watchRSS(cmd.Process.Pid)
	err := cmd.Wait()
	peak := rss.end()
	t.Logf("endless stream: %s streamed before the cut, peak RSS %s (budget %s), exit %v", mb(srv.streamed.Load()), mb(peak), mb(memoryBudget), err)
	if ctx.Err() != nil {
		t.Fatalf("exec did not end within 60 s of an endless stream")
	}
	if peak > memoryBudget {
		t.Errorf("peak RSS %s over %s", mb(peak), mb(memoryBudget))
	}
	if !strings.Contains(stdout.String(), "max_answer_bytes") {
		t.Errorf("no max_answer_bytes error:\n%.2000s", stdout.String())
	}
}
