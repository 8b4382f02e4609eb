package jsonrpc

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// route is the handler of one method: notify for a notification, call
// or receive for a request. A method has exactly one of them.
type route struct {
	// notify runs inline on the read goroutine, in wire order. It must not
	// wait for a session or the client.
	notify func(s *Server, ctx context.Context, params jsonrpc2.RawMessage) error
	// call runs released from the read goroutine (jsonrpc2.Async); its ctx
	// is cancelled by $/cancelRequest and at teardown.
	call func(s *Server, ctx context.Context, params jsonrpc2.RawMessage) (any, error)
	// receive is a request in two parts: the first runs inline on the read
	// goroutine, in wire order (what the request is about, taken as the
	// editor sent it: a snapshot, its place among its kind; it must not
	// wait), and returns the second, which runs released like call.
	receive func(s *Server, params jsonrpc2.RawMessage) (func(ctx context.Context) (any, error), error)
}

// routes lists every method the server handles, with the file that
// implements it.
var routes map[string]route

func init() {
	routes = map[string]route{
		// lifecycle.go
		protocol.MethodInitialize:  {call: (*Server).initialize},
		protocol.MethodInitialized: {notify: (*Server).initialized},
		protocol.MethodShutdown:    {call: (*Server).shutdown},
		protocol.MethodExit:        {notify: (*Server).exit},
		protocol.MethodSetTrace:    {notify: ignoreNotification},
		// textsync.go
		protocol.MethodTextDocumentDidOpen:   {notify: (*Server).didOpen},
		protocol.MethodTextDocumentDidChange: {notify: (*Server).didChange},
		protocol.MethodTextDocumentDidClose:  {notify: (*Server).didClose},
		protocol.MethodTextDocumentDidSave:   {notify: (*Server).didSave},
		protocol.MethodTextDocumentWillSave:  {notify: ignoreNotification},
		// folders.go
		protocol.MethodWorkspaceDidChangeWorkspaceFolders: {notify: (*Server).didChangeWorkspaceFolders},
		// configuration.go
		protocol.MethodWorkspaceDidChangeConfiguration: {notify: (*Server).didChangeConfiguration},
		// execute.go
		protocol.MethodWorkspaceExecuteCommand: {call: (*Server).executeCommand},
		// codeaction.go
		protocol.MethodTextDocumentCodeAction: {call: (*Server).codeAction},
		// progress.go
		protocol.MethodWindowWorkDoneProgressCancel: {notify: (*Server).workDoneProgressCancel},
		// inlinecompletion.go
		MethodInlineCompletion: {receive: func(s *Server, raw jsonrpc2.RawMessage) (func(context.Context) (any, error), error) {
			return s.inline.receive(raw)
		}},
		// dispatch.go
		protocol.MethodCancelRequest: {notify: (*Server).cancelRequest},
	}
}

func ignoreNotification(*Server, context.Context, jsonrpc2.RawMessage) error { return nil }

// handle is the connection's jsonrpc2.Handler.
func (s *Server) handle(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	if !req.IsCall() {
		s.handleNotification(ctx, req)
		// Never fail the connection because of one notification.
		return nil, nil
	}
	return s.handleCall(ctx, req)
}

func (s *Server) handleNotification(ctx context.Context, req *jsonrpc2.Request) {
	method := req.Method()
	defer func() {
		if r := recover(); r != nil {
			s.reportPanic(strings.Clone(method), r)
		}
	}()
	rt, ok := routes[method]
	if !ok || rt.notify == nil {
		// Unknown notifications are ignored, as LSP requires ($/ ones
		// silently, others with a debug log).
		if !strings.HasPrefix(method, "$/") {
			s.log.Debug("ignored an unknown notification", "method", method)
		}
		return
	}
	s.mu.Lock()
	state := s.state
	s.mu.Unlock()
	if method != protocol.MethodExit && method != protocol.MethodCancelRequest && state != lcInitialized {
		s.log.Debug("dropped a notification outside the initialized state", "method", method)
		return
	}
	if err := rt.notify(s, ctx, req.Params()); err != nil {
		method := strings.Clone(method)
		s.log.Warn("notification failed", "method", method, "err", err)
		s.logMessage(protocol.MessageTypeError, fmt.Sprintf("loom-lsp: %s: %v", method, err))
	}
}

func (s *Server) handleCall(ctx context.Context, req *jsonrpc2.Request) (result any, err error) {
	method := req.Method()
	rt, ok := routes[method]
	if err := s.gate(method); err != nil {
		return nil, err
	}
	if !ok || (rt.call == nil && rt.receive == nil) {
		return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "method not found: %q", method)
	}
	if method == protocol.MethodInitialize {
		// initialize runs inline, in wire order, so that a request sent
		// right behind it (in the same write) finds the server
		// initialized. It never blocks, so it is not cancellable; it must
		// not keep ctx, which is recycled when it returns.
		return s.initializeInline(req.Params())
	}
	if method == protocol.MethodShutdown {
		// Recorded on receipt, in wire order, before the handler is
		// released: an exit sent right behind shutdown (in the same write)
		// must find it, or the process would exit 1.
		s.mu.Lock()
		s.state = lcShutdown
		s.mu.Unlock()
	}
	call := rt.call
	if rt.receive != nil {
		rest, err := s.receiveInline(method, req.Params())
		if err != nil {
			return nil, err
		}
		call = func(_ *Server, ctx context.Context, _ jsonrpc2.RawMessage) (any, error) { return rest(ctx) }
	}
	// Register for $/cancelRequest before releasing the read goroutine, so
	// a cancel that follows on the wire finds the request.
	id := req.ID()
	rctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	s.inflight[id] = cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.inflight, id)
		s.mu.Unlock()
		cancel()
	}()
	jsonrpc2.Async(ctx)
	method = req.Method() // owned now: Async cloned the request
	defer func() {
		if r := recover(); r != nil {
			s.reportPanic(method, r)
			result, err = nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "%s: internal error: %v", method, r)
		}
	}()
	result, err = call(s, rctx, req.Params())
	if err != nil && rctx.Err() != nil && ctx.Err() == nil {
		// Cancelled by the client.
		return nil, protocol.ErrRequestCancelled
	}
	if err != nil {
		s.log.Debug("request failed", "method", method, "err", err)
	}
	return result, err
}

// initializeInline runs initialize on the read goroutine, recovering a
// panic into an error response.
func (s *Server) initializeInline(params jsonrpc2.RawMessage) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.reportPanic(protocol.MethodInitialize, r)
			result, err = nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "initialize: internal error: %v", r)
		}
	}()
	return s.initialize(s.ctx, params)
}

// receiveInline runs a request's first part (route.receive) on the read
// goroutine, recovering a panic into an error response.
func (s *Server) receiveInline(method string, params jsonrpc2.RawMessage) (rest func(context.Context) (any, error), err error) {
	defer func() {
		if r := recover(); r != nil {
			s.reportPanic(method, r)
			rest, err = nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "%s: internal error: %v", method, r)
		}
	}()
	return routes[method].receive(s, params)
}

// gate checks a request against the lifecycle.
func (s *Server) gate(method string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.state == lcShutdown:
		return jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "%s: the server is shut down", method)
	case s.state == lcNew && method != protocol.MethodInitialize:
		return jsonrpc2.Errorf(jsonrpc2.ServerNotInitialized, "%s: the server is not initialized", method)
	}
	return nil
}

func (s *Server) reportPanic(method string, r any) {
	s.log.Error("handler panicked", "method", method, "panic", r, "stack", string(debug.Stack()))
	s.logMessage(protocol.MessageTypeError, fmt.Sprintf("loom-lsp: internal error in %s: %v", method, r))
}

// cancelRequest handles $/cancelRequest: it cancels the context of the
// request it names (a number or a string id).
func (s *Server) cancelRequest(_ context.Context, params jsonrpc2.RawMessage) error {
	var p struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return fmt.Errorf("bad params: %w", err)
	}
	var id jsonrpc2.ID
	var n int64
	var str string
	switch {
	case json.Unmarshal(p.ID, &n) == nil:
		id = jsonrpc2.NewNumberID(n)
	case json.Unmarshal(p.ID, &str) == nil:
		id = jsonrpc2.NewStringID(str)
	default:
		return fmt.Errorf("bad id %s: want a number or a string", p.ID)
	}
	s.mu.Lock()
	cancel := s.inflight[id]
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return nil
}

// decodeParams decodes a request's params, or returns an InvalidParams
// error saying what is wrong.
func decodeParams(method string, params jsonrpc2.RawMessage, v any) error {
	if len(params) == 0 {
		return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: missing params", method)
	}
	if err := protocol.Unmarshal(params, v); err != nil {
		return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: invalid params: %v", method, err)
	}
	return nil
}
