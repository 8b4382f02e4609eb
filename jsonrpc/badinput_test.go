package jsonrpc

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rawClient speaks raw frames to a server over net.Pipe.
type rawClient struct {
	t      *testing.T
	conn   net.Conn
	frames chan map[string]any // read by a goroutine, so the server never blocks writing
	ended  chan error          // receives why reading ended
	exit   chan int
}

func newRawClient(t *testing.T, maxMessage int) *rawClient {
	return newRawClientLogging(t, maxMessage, testLogger(t))
}

// newRawClientLogging is newRawClient with the server logging to log.
func newRawClientLogging(t *testing.T, maxMessage int, log *slog.Logger) *rawClient {
	serverEnd, clientEnd := net.Pipe()
	c := &rawClient{t: t, conn: clientEnd, frames: make(chan map[string]any, 1000), ended: make(chan error, 1), exit: make(chan int, 1)}
	go c.readLoop(bufio.NewReader(clientEnd))
	go func() {
		c.exit <- Serve(context.Background(), serverEnd, Options{Logger: log, Host: hostOptions(t), MaxMessageSize: maxMessage})
	}()
	t.Cleanup(func() {
		clientEnd.Close()
		select {
		case <-c.exit:
		case <-time.After(10 * time.Second):
			t.Error("server did not exit")
		}
	})
	return c
}

func (c *rawClient) write(s string) {
	c.t.Helper()
	_ = c.conn.SetWriteDeadline(time.Now().Add(testTimeout))
	if _, err := io.WriteString(c.conn, s); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

func frame(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }

func (c *rawClient) readLoop(in *bufio.Reader) {
	for {
		m, err := readFrame(in)
		if err != nil {
			c.ended <- err
			return
		}
		c.frames <- m
	}
}

func readFrame(in *bufio.Reader) (map[string]any, error) {
	length := -1
	for {
		line, err := in.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			length, _ = strconv.Atoi(v)
		}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(in, body); err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(body, &m)
}

// errHang is returned by read when nothing came before the deadline.
var errHang = fmt.Errorf("no message and no close before the deadline")

// read returns the next frame, or an error at the end of the connection
// or the deadline.
func (c *rawClient) read() (map[string]any, error) {
	select {
	case m := <-c.frames:
		return m, nil
	case err := <-c.ended:
		c.ended <- err
		return nil, err
	case <-time.After(testTimeout):
		return nil, errHang
	}
}

// response reads until the response with id (nil for a null id).
func (c *rawClient) response(id any) map[string]any {
	c.t.Helper()
	for {
		m, err := c.read()
		if err != nil {
			c.t.Fatalf("waiting for response %v: %v", id, err)
		}
		if _, isReq := m["method"]; isReq {
			continue
		}
		if fmt.Sprint(m["id"]) == fmt.Sprint(id) {
			return m
		}
	}
}

func errCode(m map[string]any) int {
	e, _ := m["error"].(map[string]any)
	if e == nil {
		return 0
	}
	f, _ := e["code"].(float64)
	return int(f)
}

func (c *rawClient) initialize() {
	c.t.Helper()
	c.write(frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{},"processId":null,"rootUri":null}}`))
	if m := c.response(1); errCode(m) != 0 {
		c.t.Fatalf("initialize: %v", m)
	}
	c.write(frame(`{"jsonrpc":"2.0","method":"initialized","params":{}}`))
}

func TestBadInput(t *testing.T) {
	c := newRawClient(t, 1<<20)
	c.initialize()

	// Malformed JSON: a parse error with a null id; the connection goes on.
	c.write(frame(`{"jsonrpc":"2.0","id":2,"method":`))
	if m := c.response(nil); errCode(m) != -32700 {
		t.Errorf("malformed JSON: %v, want ParseError", m)
	}
	// Unknown method.
	c.write(frame(`{"jsonrpc":"2.0","id":3,"method":"no/such"}`))
	if m := c.response(3); errCode(m) != -32601 {
		t.Errorf("unknown method: %v, want MethodNotFound", m)
	}
	// Bad params of a known method.
	c.write(frame(`{"jsonrpc":"2.0","id":4,"method":"workspace/executeCommand","params":{"command":42}}`))
	if m := c.response(4); errCode(m) != -32602 {
		t.Errorf("bad params: %v, want InvalidParams", m)
	}
	// A bad command argument says what is wrong.
	c.write(frame(`{"jsonrpc":"2.0","id":5,"method":"workspace/executeCommand","params":{"command":"loom.ask","arguments":[{"promt":"hi"}]}}`))
	m := c.response(5)
	if errCode(m) != -32602 || !strings.Contains(fmt.Sprint(m["error"]), "promt") {
		t.Errorf("bad argument: %v, want InvalidParams naming the field", m)
	}
	c.write(frame(`{"jsonrpc":"2.0","id":6,"method":"workspace/executeCommand","params":{"command":"loom.ask","arguments":[{"prompt":""}]}}`))
	if m := c.response(6); errCode(m) != -32602 || !strings.Contains(fmt.Sprint(m["error"]), "prompt is required") {
		t.Errorf("empty prompt: %v", m)
	}
	// Bad params of a notification: reported, not fatal.
	c.write(frame(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":7}}`))
	// A huge message (over the 1 MiB limit here): refused, not fatal.
	huge := `{"jsonrpc":"2.0","id":7,"method":"workspace/executeCommand","params":{"command":"loom.ask","arguments":[{"prompt":"` + strings.Repeat("x", 2<<20) + `"}]}}`
	c.write(frame(huge))
	if m := c.response(nil); errCode(m) != -32600 || !strings.Contains(fmt.Sprint(m["error"]), "exceeds the limit") {
		t.Errorf("huge message: %v", m)
	}
	// A non-object body.
	c.write(frame(`[]`))
	if m := c.response(nil); errCode(m) == 0 {
		t.Errorf("empty batch: %v, want an error", m)
	}
	// Still alive.
	c.write(frame(`{"jsonrpc":"2.0","id":8,"method":"shutdown"}`))
	if m := c.response(8); errCode(m) != 0 {
		t.Errorf("shutdown: %v", m)
	}
	c.write(frame(`{"jsonrpc":"2.0","method":"exit"}`))
	select {
	case code := <-c.exit:
		c.exit <- code
		if code != 0 {
			t.Errorf("exit code %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no exit")
	}
}

// A frame whose Content-Length is wrong gets an error or a clean close,
// never a hang.
func TestWrongContentLength(t *testing.T) {
	for _, tc := range []struct{ name, data string }{
		{"too short", "Content-Length: 10\r\n\r\n" + `{"jsonrpc":"2.0","id":2,"method":"shutdown"}` + frame(`{"jsonrpc":"2.0","id":3,"method":"shutdown"}`)},
		{"too long", "Content-Length: 60\r\n\r\n" + `{"jsonrpc":"2.0","id":2,"method":"shutdown"}` + frame(`{"jsonrpc":"2.0","id":3,"method":"shutdown"}`)},
		{"not a number", "Content-Length: ten\r\n\r\n{}"},
		{"no header", "{}\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newRawClient(t, 0)
			c.initialize()
			go func() { _, _ = io.WriteString(c.conn, tc.data) }()
			// Read until an error response or the end of the connection.
			for {
				m, err := c.read()
				if err != nil {
					if err == errHang {
						t.Fatal("hang: neither an error nor a close")
					}
					return // clean close
				}
				if errCode(m) != 0 {
					return
				}
			}
		})
	}
}
