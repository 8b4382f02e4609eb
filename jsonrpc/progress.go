package jsonrpc

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

var progressSeq atomic.Uint64

// progress is one work-done progress the server created. A nil *progress
// is valid and does nothing (the client does not support progress).
type progress struct {
	s      *Server
	token  protocol.String
	folder string // set for a cancellable (turn) progress
	ended  bool
}

// beginProgress creates a work-done progress token and begins it, or
// returns nil when the client does not support progress or refused the
// token. A cancellable progress cancels the folder's turn when the user
// cancels it.
func (s *Server) beginProgress(folder, title, message string, cancellable bool) *progress {
	s.mu.Lock()
	ok := s.caps.workDoneProgress
	s.mu.Unlock()
	if !ok {
		return nil
	}
	token := protocol.String(fmt.Sprintf("loom-%d", progressSeq.Add(1)))
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.ClientCallTimeout)
	defer cancel()
	if err := s.callClient(ctx, protocol.MethodWindowWorkDoneProgressCreate, &protocol.WorkDoneProgressCreateParams{Token: token}, nil); err != nil {
		s.log.Debug("work-done progress refused", "err", err)
		return nil
	}
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
	s.sendProgress(token, begin)
	return p
}

func (p *progress) report(message string) {
	if p == nil || p.ended {
		return
	}
	p.s.sendProgress(p.token, &protocol.WorkDoneProgressReport{Kind: "report", Message: &message})
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
	p.s.sendProgress(p.token, end)
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
		sess, err := s.host.Session(folder)
		if err != nil {
			return
		}
		if err := sess.Cancel(s.ctx); err != nil {
			s.log.Debug("cancel from progress", "err", err)
		}
	})
	return nil
}
