package jsonrpc

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
	"github.com/loom-lsp/loom-lsp/workspace"
)

type benchEnv struct {
	ctx    context.Context
	ed     *fakeeditor.Editor
	srv    *Server
	folder string
}

func newBenchEnv(b *testing.B, script string) *benchEnv {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	b.Cleanup(cancel)
	folder, _ := filepath.EvalSymlinks(b.TempDir())
	opts := map[string]any{"hooks": map[string]any{"auto_commit": false}}
	if script != "" {
		path := filepath.Join(b.TempDir(), "model.toml")
		if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
			b.Fatal(err)
		}
		opts["model"] = map[string]any{"provider": "script", "script": path}
	}
	serverEnd, clientEnd := net.Pipe()
	s := newServer(Options{Logger: testLogger(b), Host: hostOptions(b)})
	done := make(chan struct{})
	go func() { defer close(done); s.serve(context.Background(), serverEnd) }()
	ed := fakeeditor.Connect(ctx, clientEnd, fakeeditor.Config{Loom: true, Folders: []string{folder}, InitializationOptions: opts})
	b.Cleanup(func() { _ = ed.Close(); <-done })
	if _, err := ed.Initialize(ctx); err != nil {
		b.Fatal(err)
	}
	return &benchEnv{ctx: ctx, ed: ed, srv: s, folder: folder}
}

// BenchmarkStreamEndToEnd streams a scripted model's chunks through a
// session, the outbox and the LSP connection to the fake editor, and
// reports chunks per second.
func BenchmarkStreamEndToEnd(b *testing.B) {
	const chunks = 5000
	var sb strings.Builder
	sb.WriteString("[[step]]\nrepeat = true\ntext = [")
	for i := range chunks {
		fmt.Fprintf(&sb, "%q,", fmt.Sprintf("c%d ", i))
	}
	sb.WriteString("]\n")
	e := newBenchEnv(b, sb.String())
	want := fmt.Sprintf("c%d ", chunks-1)
	turns := 0
	start := time.Now()
	for b.Loop() {
		turns++
		from := len(e.ed.Messages(""))
		if err := e.ed.ExecuteCommand(e.ctx, CmdAsk, AskArgs{Prompt: "go"}, nil); err != nil {
			b.Fatal(err)
		}
		if err := e.ed.Await(e.ctx, "streamed", func(msgs []fakeeditor.Message) bool {
			return turnEnded(e.folder, from)(msgs) && strings.HasSuffix(lastDisplay(msgs), want)
		}); err != nil {
			b.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(chunks*turns)/elapsed.Seconds(), "chunks/s")
	b.ReportMetric(float64(len(e.ed.Messages(MethodDisplayMessage)))/float64(turns), "notifications/turn")
}

func lastDisplay(msgs []fakeeditor.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Method == MethodDisplayMessage {
			var p DisplayMessageParams
			_ = json.Unmarshal(msgs[i].Params, &p)
			return p.Text
		}
	}
	return ""
}

// BenchmarkCoalescingLatency pushes timestamped chunks every 200 µs
// through the server's Editor.Notify (as a session does) and measures at
// the client how long each chunk took beyond the coalescing window:
// p50 and p99 of max(0, received - pushed - 16 ms).
func BenchmarkCoalescingLatency(b *testing.B) {
	e := newBenchEnv(b, "")
	ed := &editor{s: e.srv}
	var added []time.Duration
	for b.Loop() {
		from := len(e.ed.Messages(""))
		const n = 500
		for range n {
			ed.Notify(workspace.Notification{Folder: e.folder, Turn: 1, Kind: workspace.NoteText,
				Text: strconv.FormatInt(time.Now().UnixNano(), 10) + ";"})
			time.Sleep(200 * time.Microsecond) // the producer's pace, not a wait
		}
		if err := e.ed.Await(e.ctx, "all chunks", func(msgs []fakeeditor.Message) bool {
			return strings.Count(allDisplay(msgs[from:]), ";") >= n
		}); err != nil {
			b.Fatal(err)
		}
		for _, m := range e.ed.Messages("")[from:] {
			if m.Method != MethodDisplayMessage {
				continue
			}
			var p DisplayMessageParams
			_ = json.Unmarshal(m.Params, &p)
			for _, ts := range strings.Split(strings.TrimSuffix(p.Text, ";"), ";") {
				ns, _ := strconv.ParseInt(ts, 10, 64)
				d := m.Received.Sub(time.Unix(0, ns)) - DefaultCoalesceWindow
				added = append(added, max(d, 0))
			}
		}
	}
	slices.Sort(added)
	b.ReportMetric(float64(added[len(added)/2].Microseconds()), "p50-added-µs")
	b.ReportMetric(float64(added[len(added)*99/100].Microseconds()), "p99-added-µs")
}

func allDisplay(msgs []fakeeditor.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		if m.Method != MethodDisplayMessage {
			continue
		}
		var p DisplayMessageParams
		_ = json.Unmarshal(m.Params, &p)
		b.WriteString(p.Text)
	}
	return b.String()
}

// BenchmarkStopToTurnEnd measures what a user waits for after Stop: from
// loom.cancel, sent while a slow model streams, to the folder's state back
// at WaitingForUserInput at the editor (the clients' idle). The VS Code
// e2e prints the same from the panel (times.json stopToIdle); this is
// loom's share of it.
func BenchmarkStopToTurnEnd(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("[[step]]\nrepeat = true\npace = \"20ms\"\ntext = [")
	for i := range 2000 {
		fmt.Fprintf(&sb, "%q,", fmt.Sprintf("w%d ", i))
	}
	sb.WriteString("]\n")
	e := newBenchEnv(b, sb.String())
	var total time.Duration
	stops := 0
	for b.Loop() {
		from := len(e.ed.Messages(""))
		if err := e.ed.ExecuteCommand(e.ctx, CmdAsk, AskArgs{Prompt: "tell a long story"}, nil); err != nil {
			b.Fatal(err)
		}
		if err := e.ed.Await(e.ctx, "the story streams", func(msgs []fakeeditor.Message) bool {
			return strings.Contains(lastDisplay(msgs[from:]), "w3 ")
		}); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if err := e.ed.ExecuteCommand(e.ctx, CmdCancel, FolderArgs{}, nil); err != nil {
			b.Fatal(err)
		}
		if err := e.ed.Await(e.ctx, "the turn ends", turnEnded(e.folder, from)); err != nil {
			b.Fatal(err)
		}
		total += time.Since(t0)
		stops++
		if strings.Contains(lastDisplay(e.ed.Messages("")), "w1999 ") {
			b.Fatal("the story ran to its end: Stop did not stop it")
		}
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(stops), "ms/stop")
}
