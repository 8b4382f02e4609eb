package acp

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
)

// What a session is told about itself (its slash commands) goes out
// after the response that names the session to the client: an update for
// a session id the client has not yet been given is dropped by Zed, and
// JetBrains' client is reported to hang on it. The SDK writes a request's
// response when its handler returns, so the handler cannot send after it;
// a responseWatch, between the SDK and the client's streams, runs what
// waits for a session's response right after that response is written.
// It learns which response is whose from session/new's result (it holds
// the session id) and from the ids of the client's session/load and
// session/resume requests.

// responseWatch runs functions after the response of a session's
// session/new, session/load or session/resume was written.
type responseWatch struct {
	mu      sync.Mutex
	ids     map[string]string   // JSON-RPC id of a load or resume -> its session id
	waiting map[string][]func() // session id -> run after its response
}

func newResponseWatch() *responseWatch {
	return &responseWatch{ids: map[string]string{}, waiting: map[string][]func(){}}
}

// after runs fn once the response naming session id was written (at
// once if the connection is gone: see drop).
func (w *responseWatch) after(id string, fn func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.waiting[id] = append(w.waiting[id], fn)
}

// maxWatchedLine bounds the part of an incoming line kept to learn a
// load or resume request's id: those requests are small; a long prompt is
// not kept.
const maxWatchedLine = 64 << 10

// reader watches what the client sends on r.
func (w *responseWatch) reader(r io.Reader) io.Reader { return &watchReader{r: r, w: w} }

type watchReader struct {
	r    io.Reader
	w    *responseWatch
	line []byte
	long bool // the current line passed maxWatchedLine
}

func (wr *watchReader) Read(p []byte) (int, error) {
	n, err := wr.r.Read(p)
	rest := p[:n]
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		part := rest
		if i >= 0 {
			part = rest[:i]
		}
		if !wr.long {
			if len(wr.line)+len(part) > maxWatchedLine {
				wr.long, wr.line = true, wr.line[:0]
			} else {
				wr.line = append(wr.line, part...)
			}
		}
		if i < 0 {
			break
		}
		if !wr.long {
			wr.w.request(wr.line)
		}
		wr.line, wr.long = wr.line[:0], false
		rest = rest[i+1:]
	}
	return n, err
}

// request learns the id of a session/load or session/resume request.
func (w *responseWatch) request(line []byte) {
	if !bytes.Contains(line, []byte(`"session/load"`)) && !bytes.Contains(line, []byte(`"session/resume"`)) {
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			SessionID string `json:"sessionId"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 || (m.Method != "session/load" && m.Method != "session/resume") {
		return
	}
	w.mu.Lock()
	w.ids[string(m.ID)] = m.Params.SessionID
	w.mu.Unlock()
}

// writer passes what the SDK writes (one whole message per Write) to out
// and, after a response, runs what waits for it.
func (w *responseWatch) writer(out io.Writer) io.Writer { return &watchWriter{out: out, w: w} }

type watchWriter struct {
	out io.Writer
	w   *responseWatch
}

func (ww *watchWriter) Write(b []byte) (int, error) {
	n, err := ww.out.Write(b)
	head := b[:min(len(b), 160)]
	if !bytes.Contains(head, []byte(`"method":`)) && bytes.Contains(head, []byte(`"id":`)) {
		ww.w.response(b)
	}
	return n, err
}

// response runs what waits for the session response b names.
func (w *responseWatch) response(b []byte) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(b, &m) != nil {
		return
	}
	w.mu.Lock()
	sid, isLoad := w.ids[string(m.ID)]
	delete(w.ids, string(m.ID))
	if !isLoad && len(m.Result) > 0 {
		var r struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(m.Result, &r) == nil {
			sid = r.SessionID
		}
	}
	var fns []func()
	if sid != "" {
		fns = w.waiting[sid]
		delete(w.waiting, sid)
	}
	w.mu.Unlock()
	if len(m.Error) > 0 && string(m.Error) != "null" {
		return // the session was not established: nothing to tell
	}
	if len(fns) > 0 {
		// Not on the SDK's writing goroutine (it holds the write lock):
		// the response is out, which is all the order asks for.
		go func() {
			for _, fn := range fns {
				fn()
			}
		}()
	}
}
