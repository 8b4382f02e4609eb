package jsonrpc

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

var progressSeq atomic.Uint64

// progress is one work-done progress the server created. A nil *progress
// is valid and does nothing (the client does not support progress).
//
// Creating the token is a request to the client, and LSP forbids using
// the token before the client answered it. The answer is awaited on a
// goroutine of its own, never in the outbox: a client slow to answer
// must not hold up the folder's streamed text, tool calls and approvals.
// Until it answers, the progress's begin, reports and end wait in
// pending, in order; if it refuses, they are dropped.
type progress struct {
	s      *Server
	token  protocol.String
	folder string // set for a cancellable (turn) progress
	ended  bool   // owned by the caller (the outbox goroutine)

	mu      sync.Mutex
	created bool  // the client accepted the token: send at once
	refused bool  // the client refused it: drop everything
	pending []any // values waiting for the client's answer
}

// beginProgress creates a work-done progress token and begins it, or
// returns nil when the client does not support progress. It does not
// wait for the client. A cancellable progress cancels the folder's turn
// when the user cancels it.
func (s *Server) beginProgress(folder, title, message string, cancellable bool) *progress {
	s.mu.Lock()
	ok := s.caps.workDoneProgress
	s.mu.Unlock()
	if !ok {
		return nil
	}
	token := protocol.String(fmt.Sprintf("loom-%d", progressSeq.Add(1)))
	p := &progress{s: s, token: token}
	if cancellable {
		p.folder = folder
		s.mu.Lock()
		s.progress[string(token)] = folder
		s.mu.Unlock()
	}
	begin := &protocol.WorkDoneProgressBegin{Kind: "begin", Title: title, Cancellable: &cancellable}
	if message != "" {
		begin.Message = &message
	}
	p.emit(begin)
	s.goBackground(func() {
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.ClientCallTimeout)
		defer cancel()
		err := s.callClient(ctx, protocol.MethodWindowWorkDoneProgressCreate, &protocol.WorkDoneProgressCreateParams{Token: token}, nil)
		p.answered(err)
	})
	return p
}

// emit sends value on the token, or queues it until the client answered
// the token's creation.
func (p *progress) emit(value any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.refused:
	case p.created:
		p.s.sendProgress(p.token, value)
	default:
		p.pending = append(p.pending, value)
	}
}

// answered records the client's answer to the token's creation and sends
// (or drops) what waited for it.
func (p *progress) answered(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.s.log.Debug("work-done progress refused", "err", err)
		p.refused, p.pending = true, nil
		if p.folder != "" {
			p.s.mu.Lock()
			delete(p.s.progress, string(p.token))
			p.s.mu.Unlock()
		}
		return
	}
	p.created = true
	for _, v := range p.pending {
		p.s.sendProgress(p.token, v)
	}
	p.pending = nil
}

func (p *progress) report(message string) {
	if p == nil || p.ended {
		return
	}
	p.emit(&protocol.WorkDoneProgressReport{Kind: "report", Message: &message})
}

func (p *progress) end(message string) {
	if p == nil || p.ended {
		return
	}
	p.ended = true
	if p.folder != "" {
		p.s.mu.Lock()
		delete(p.s.progress, string(p.token))
		p.s.mu.Unlock()
	}
	end := &protocol.WorkDoneProgressEnd{Kind: "end"}
	if message != "" {
		end.Message = &message
	}
	p.emit(end)
}

func (s *Server) sendProgress(token protocol.ProgressToken, value any) {
	raw, err := protocol.Marshal(value)
	if err != nil {
		s.log.Error("marshal progress", "err", err)
		return
	}
	s.notify(context.Background(), protocol.MethodProgress, &protocol.ProgressParams{Token: token, Value: raw})
}

// clientProgress reports on a token the client created (a request's
// workDoneToken): kind is "begin" (message is the title) or "end".
func (s *Server) clientProgress(token protocol.ProgressToken, kind, message string) {
	switch kind {
	case "begin":
		s.sendProgress(token, &protocol.WorkDoneProgressBegin{Kind: "begin", Title: message})
	default:
		s.sendProgress(token, &protocol.WorkDoneProgressEnd{Kind: "end"})
	}
}

// workDoneProgressCancel cancels the turn whose progress the user
// cancelled. It hands the cancel to a goroutine: Session.Cancel waits for
// the session, which must never block the read goroutine.
func (s *Server) workDoneProgressCancel(_ context.Context, raw jsonrpc2.RawMessage) error {
	var p struct {
		Token json.RawMessage `json:"token"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return fmt.Errorf("bad params: %w", err)
	}
	var token string
	if json.Unmarshal(p.Token, &token) != nil {
		return nil // not one of ours: ours are strings
	}
	s.mu.Lock()
	folder, ok := s.progress[token]
	s.mu.Unlock()
	if !ok {
		return nil
	}
	s.goBackground(func() {
		sess, err := s.host.Conversation(folder)
		if err != nil {
			return
		}
		if err := sess.Cancel(s.ctx); err != nil {
			s.log.Debug("cancel from progress", "err", err)
		}
	})
	return nil
}
