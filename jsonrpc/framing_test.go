package jsonrpc

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
)

// syncBuffer is a bytes.Buffer safe for the server's logger and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A malformed Content-Length header gets an error response and an error
// in the log, and the server reads on from the next frame; a huge one is
// refused at once, without waiting for bytes the client may never send.
func TestBadContentLengthResynchronises(t *testing.T) {
	for _, tc := range []struct{ name, bad, logged string }{
		{"not a number", "Content-Length: ten\r\n\r\n{}", "malformed frame header"},
		{"negative", "Content-Length: -5\r\n\r\n{}", "malformed frame header"},
		{"missing", "Content-Type: application/json\r\n\r\n{}", "malformed frame header"},
		{"no header at all", "{}\r\n\r\n", "malformed frame header"},
		{"header line too long", strings.Repeat("x", 10<<10) + "\r\n\r\n", "malformed frame header"},
		// Declared, never sent: the answer must not wait for the bytes.
		{"huge", "Content-Length: 99999999999\r\n\r\n", "refused an oversized message"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs syncBuffer
			c := newRawClientLogging(t, 1<<20, slog.New(slog.NewTextHandler(&logs, nil)))
			c.initialize()
			c.write(tc.bad)
			m := c.response(nil)
			if code := errCode(m); code != int(jsonrpc2.ParseError) && code != int(jsonrpc2.InvalidRequest) {
				t.Fatalf("bad header answered %v, want a parse or invalid-request error", m)
			}
			if !strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), tc.logged) {
				t.Errorf("log does not report the bad header as an error:\n%s", logs.String())
			}
			// The stream resynchronises at the next frame.
			c.write(frame(`{"jsonrpc":"2.0","id":9,"method":"shutdown"}`))
			if m := c.response(9); errCode(m) != 0 {
				t.Fatalf("shutdown after the bad header: %v", m)
			}
			c.write(frame(`{"jsonrpc":"2.0","method":"exit"}`))
			select {
			case code := <-c.exit:
				c.exit <- code
				if code != 0 {
					t.Errorf("exit code %d, want 0", code)
				}
			case <-time.After(testTimeout):
				t.Fatal("no exit")
			}
		})
	}
}

// Input that ends inside malformed input or inside a frame ends the
// server with status 1 and an error in the log, never silently with 0.
func TestInputEndingInBadFrameExitsNonZero(t *testing.T) {
	for _, tc := range []struct {
		tail    string
		answers bool // the server answers the bad header before the end
	}{{"Content-Length: ten\r\n\r\n{}", true}, {"Content-Length: 50\r\n\r\n{\"jsonrpc\"", false}} {
		tail := tc.tail
		var logs syncBuffer
		c := newRawClientLogging(t, 0, slog.New(slog.NewTextHandler(&logs, nil)))
		c.initialize()
		c.write(tail)
		if tc.answers {
			c.response(nil) // read, so the server's answer does not meet a closed pipe
		}
		_ = c.conn.Close()
		select {
		case code := <-c.exit:
			c.exit <- code
			if code != 1 {
				t.Errorf("%q then end of input: exit %d, want 1", tail, code)
			}
		case <-time.After(testTimeout):
			t.Fatal("no exit")
		}
		if !strings.Contains(logs.String(), "level=ERROR") {
			t.Errorf("%q: no error logged:\n%s", tail, logs.String())
		}
	}
}

// bytesConn is an io.ReadWriteCloser reading from fixed input and
// discarding what is written.
type bytesConn struct{ io.Reader }

func (bytesConn) Write(p []byte) (int, error) { return len(p), nil }
func (bytesConn) Close() error                { return nil }

// FuzzFrameStream feeds arbitrary bytes, then one well-formed frame, to the
// Content-Length framing. It must never panic or hang, must only return
// messages that decode, and must end at the end of input with EOF or
// ErrLostFrames. When the prefix is itself well framed, the last frame
// must arrive.
func FuzzFrameStream(f *testing.F) {
	for _, seed := range []string{
		"",
		"Content-Length: ten\r\n\r\n{}",
		"Content-Length: 99999999999\r\n\r\n",
		"{}\r\n\r\n",
		"content-length: 2\r\n\r\n{}",
		"Content-Length: 3\r\n\r\n{}",
		frame(`{"jsonrpc":"2.0","method":"x"}`),
		"\r\n\r\nContent-Length: 5\r\nContent-Type: x\r\n\r\n[1,2]",
	} {
		f.Add([]byte(seed))
	}
	last := frame(`{"jsonrpc":"2.0","id":"last","method":"end"}`)
	f.Fuzz(func(t *testing.T, prefix []byte) {
		in := append(append([]byte(nil), prefix...), last...)
		s := newFrameStream(bytesConn{bytes.NewReader(in)}, 1<<10, slog.New(slog.DiscardHandler), nil)
		gotLast := false
		for i := 0; ; i++ {
			if i > len(in)+1 {
				t.Fatalf("more messages than bytes: the stream does not advance")
			}
			msg, _, err := s.Read(context.Background())
			if err != nil {
				if err != io.EOF && !isLost(err) {
					t.Fatalf("read ended with %v, want EOF or lost frames", err)
				}
				break
			}
			if r, ok := msg.(*jsonrpc2.Call); ok && r.Method() == "end" {
				gotLast = true
			}
		}
		if wellFramed(prefix) && !gotLast {
			t.Fatalf("the frame after well-framed input was lost; input %q", in)
		}
	})
}

func isLost(err error) bool {
	return err != nil && (strings.Contains(err.Error(), ErrLostFrames.Error()) || err == io.ErrUnexpectedEOF)
}

// wellFramed reports whether b is a sequence of frames with exactly one
// valid Content-Length header each and the bodies they declare.
func wellFramed(b []byte) bool {
	for len(b) > 0 {
		var n int
		rest, ok := bytes.CutPrefix(b, []byte("Content-Length: "))
		if !ok {
			return false
		}
		end := bytes.Index(rest, []byte("\r\n\r\n"))
		if end < 0 {
			return false
		}
		if _, err := fmt.Sscanf(string(rest[:end]), "%d", &n); err != nil || fmt.Sprint(n) != string(rest[:end]) || n <= 0 {
			return false
		}
		rest = rest[end+4:]
		if len(rest) < n {
			return false
		}
		b = rest[n:]
	}
	return true
}
