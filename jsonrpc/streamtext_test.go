package jsonrpc

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"pgregory.net/rapid"

	"github.com/loom-lsp/loom-lsp/workspace"
)

// frameSink is the client end of a connection for the streaming tests: it
// signals each frame written, and keeps the last one.
type frameSink struct {
	frames chan struct{}
	last   []byte
	// deadline bounds the whole test's waits (one timer, so that waiting
	// allocates nothing).
	deadline *time.Timer
}

func (s *frameSink) Read([]byte) (int, error) { return 0, io.EOF }
func (s *frameSink) Close() error             { return nil }
func (s *frameSink) Write(b []byte) (int, error) {
	s.last = append(s.last[:0], b...)
	s.frames <- struct{}{}
	return len(b), nil
}

// newStreamingOutbox returns a running outbox of a loom client's server
// whose frames go to a frameSink.
func newStreamingOutbox(tb testing.TB) (*outbox, *frameSink) {
	sink := &frameSink{frames: make(chan struct{}, 1), deadline: time.NewTimer(time.Minute)}
	s := newServer(Options{CoalesceWindow: time.Nanosecond})
	s.stream = newFrameStream(sink, 0, s.log, nil)
	s.conn = jsonrpc2.NewConn(s.stream, jsonrpc2.WithCodec(lspCodec{}))
	s.caps.loom = true
	o := newOutbox(s, "/work/project", "", new(atomic.Uint64))
	go o.run()
	tb.Cleanup(func() { o.close(5 * time.Second); s.cancel(); sink.deadline.Stop() })
	return o, sink
}

func awaitFrame(tb testing.TB, sink *frameSink) {
	select {
	case <-sink.frames:
	case <-sink.deadline.C:
		tb.Fatal("no frame was written within a minute")
	}
}

// BenchmarkCoalescedNotification streams text through a folder's outbox
// to the LSP stream, one loom/displayMessage per op: the push, the
// outbox goroutine, the encoding and the framed write (issue 16 item 3).
// "jsonrpc2" is the reference, in the same run: the same notification
// sent the generic way, through jsonrpc2's Notify, as before.
func BenchmarkCoalescedNotification(b *testing.B) {
	n := workspace.Notification{Kind: workspace.NoteText, Turn: 1, Text: "a streamed chunk of \"text\"\n"}
	b.Run("outbox", func(b *testing.B) {
		o, sink := newStreamingOutbox(b)
		b.ReportAllocs()
		for b.Loop() {
			o.push(n)
			awaitFrame(b, sink)
		}
	})
	b.Run("jsonrpc2", func(b *testing.B) {
		o, sink := newStreamingOutbox(b)
		ctx := context.Background()
		var seq uint64
		b.ReportAllocs()
		for b.Loop() {
			seq++
			o.s.notify(ctx, MethodDisplayMessage, &DisplayMessageParams{Folder: o.folder, Turn: n.Turn, Seq: seq, Text: n.Text})
			awaitFrame(b, sink)
		}
	})
}

// TestStreamedTextAllocatesNothing guards the streaming path's cost: once
// its buffers have grown, a coalesced text notification allocates nothing
// from the push to the framed write.
func TestStreamedTextAllocatesNothing(t *testing.T) {
	o, sink := newStreamingOutbox(t)
	n := workspace.Notification{Kind: workspace.NoteText, Turn: 1, Text: "a streamed chunk of \"text\"\n"}
	allocs := testing.AllocsPerRun(500, func() {
		o.push(n)
		awaitFrame(t, sink)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per streamed notification, want 0", allocs)
	}
	body := string(sink.last[strings.Index(string(sink.last), "\r\n\r\n")+4:])
	var msg struct {
		Method string
		Params DisplayMessageParams
	}
	if err := json.Unmarshal([]byte(body), &msg); err != nil {
		t.Fatal(err)
	}
	if msg.Method != MethodDisplayMessage || msg.Params.Text != n.Text || msg.Params.Seq != 501 || msg.Params.Folder != "/work/project" {
		t.Fatalf("last frame %s", body)
	}
}

// TestDisplayMessageEncoding checks the hand-encoded notification against
// encoding/json: any text (invalid UTF-8 included) and folder decode back
// to what encoding/json would have sent.
func TestDisplayMessageEncoding(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		p := DisplayMessageParams{
			Folder:       rapid.String().Draw(rt, "folder"),
			Conversation: rapid.SampledFrom([]string{"", "loom-0123456789abcdef0123"}).Draw(rt, "conversation"),
			Turn:         rapid.Uint64().Draw(rt, "turn"),
			Seq:          rapid.Uint64().Draw(rt, "seq"),
			Text:         string(rapid.SliceOf(rapid.Byte()).Draw(rt, "text")),
		}
		enc := appendDisplayMessage(nil, p.Folder, p.Conversation, p.Turn, p.Seq, []byte(p.Text))
		var got struct {
			JSONRPC string `json:"jsonrpc"`
			Method  string `json:"method"`
			Params  DisplayMessageParams
		}
		if err := json.Unmarshal(enc, &got); err != nil {
			rt.Fatalf("%s: %v", enc, err)
		}
		ref, _ := json.Marshal(p)
		var want DisplayMessageParams
		if err := json.Unmarshal(ref, &want); err != nil {
			rt.Fatal(err)
		}
		if got.JSONRPC != "2.0" || got.Method != MethodDisplayMessage || got.Params != want {
			rt.Fatalf("encoded %s\ndecodes to %+v, want %+v", enc, got.Params, want)
		}
	})
}
