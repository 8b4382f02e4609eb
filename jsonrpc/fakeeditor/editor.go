// Package fakeeditor is a scriptable LSP client for tests, in the style
// of gopls's fake.Editor: it keeps buffers and versions, sends real
// didOpen/didChange, answers the server's requests (applyEdit,
// showMessageRequest, loom/saveDocuments) by script, records every
// notification, and lets a test wait until an expectation holds.
package fakeeditor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// Config says what the fake editor declares and how it answers.
type Config struct {
	// Loom declares experimental.loom (with saveDocuments).
	Loom bool
	// Thoughts also declares experimental.loom.thoughts: the client shows
	// the model's reasoning (loom/displayMessage of kind "thought").
	Thoughts bool
	// Review also declares experimental.loom.review: the client shows
	// loom/proposedChanges and answers with loom.review.
	Review bool
	// ApplyEdit declares workspace.applyEdit with documentChanges.
	ApplyEdit bool
	// Unversioned, with ApplyEdit, leaves documentChanges out, as Neovim's
	// built-in client does: the server must send unversioned changes.
	Unversioned bool
	// WorkDoneProgress declares window.workDoneProgress.
	WorkDoneProgress bool
	// NoShowMessage leaves window.showMessage out of the capabilities, as
	// Vim's ALE does: the client cannot answer window/showMessageRequest
	// (it never answers one it gets).
	NoShowMessage bool
	// AnswersAnyway, with NoShowMessage, answers window/showMessageRequest
	// although it was not declared, as eglot and lsp-mode do.
	AnswersAnyway bool
	// Annotations declares workspace.workspaceEdit.changeAnnotationSupport
	// (with ApplyEdit): the client confirms edits whose annotation needs
	// it (here, by applying them).
	Annotations bool
	// Folders are the workspace folders (absolute paths).
	Folders []string
	// InitializationOptions is marshalled as initializationOptions.
	InitializationOptions any
	// WorkspaceTrust also declares experimental.loom.workspaceTrust, as
	// the VS Code extension does: its initializationOptions' trust counts.
	WorkspaceTrust bool
	// UserSettings also declares experimental.loom.userSettings, as the
	// VS Code extension does: it answers section loom.user (Settings'
	// "loom.user" entry) with the user's own settings.
	UserSettings bool
	// Settings, when not nil, declares workspace.configuration and
	// answers workspace/configuration with each item's section of it
	// (null when missing); SetSettings replaces them.
	Settings map[string]any
	// ClientName is clientInfo.name; "" means "fakeeditor".
	ClientName string
	// TrustCommand, with Loom, declares experimental.loom.trustCommand:
	// how the user runs loom.trust in this client.
	TrustCommand string
	// InlineDynamic declares textDocument.inlineCompletion with
	// dynamicRegistration (LSP 3.18), as VS Code's extension does: the
	// server registers inline completion with client/registerCapability.
	// The editor answers every client/registerCapability and
	// client/unregisterCapability (they are recorded in Messages).
	InlineDynamic bool
}

// Message is a message the server sent: a notification or a request.
type Message struct {
	Method string
	Params json.RawMessage
	// Received is when the fake editor read the message.
	Received time.Time
}

// Decode decodes the params into v, failing loudly on bad JSON.
func (m Message) Decode(v any) error { return json.Unmarshal(m.Params, v) }

// Editor is the fake editor. Its methods are safe for concurrent use.
type Editor struct {
	cfg  Config
	conn jsonrpc2.Conn

	// Hooks answer the server's requests; a nil hook gets the default.
	// Set them before Initialize.
	Hooks Hooks

	mu       sync.Mutex
	cond     *sync.Cond
	buffers  map[string]*buffer // by path
	messages []Message          // every notification and request, in order
	closed   bool
	initRaw  json.RawMessage // the initialize result as the server sent it
}

// InitializeResultRaw returns the initialize result as the server sent
// it (with what go.lsp.dev's 3.17 types leave out, such as 3.18's
// inlineCompletionProvider).
func (e *Editor) InitializeResultRaw() json.RawMessage {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.initRaw
}

// Hooks script the answers to the server's requests.
type Hooks struct {
	// ShowDocument answers window/showDocument (whether it was shown)
	// with its uri as sent and its external flag; nil: the method is
	// not found, as in clients without it.
	ShowDocument func(uri string, external bool) bool
	// BeforeApplyEdit runs before an applyEdit is answered, e.g. to type in
	// the buffer so the versioned edit is refused.
	BeforeApplyEdit func(e *Editor, p *protocol.ApplyWorkspaceEditParams)
	// ShowMessageRequest picks an action; default: the first action.
	ShowMessageRequest func(p *protocol.ShowMessageRequestParams) *protocol.MessageActionItem
	// RawShowMessageRequest, when set, answers window/showMessageRequest
	// from its raw params (to read and send back Loom's extra properties),
	// instead of ShowMessageRequest.
	RawShowMessageRequest func(params json.RawMessage) any
	// WorkDoneProgressCreate runs before window/workDoneProgress/create is
	// answered, e.g. to hold the answer back like a slow client.
	WorkDoneProgressCreate func(ctx context.Context)
	// SaveDocuments returns the URIs saved; default: all of them.
	SaveDocuments func(uris []string) []string
	// BeforeConfiguration runs before workspace/configuration is
	// answered, e.g. to hold the answer back like a client that is slow
	// to read its settings (VS Code after a window reload).
	BeforeConfiguration func(ctx context.Context)
	// Diagnostics answers loom/diagnostics (declared when set, with
	// Loom): the file's diagnostics, in LSP's shape.
	Diagnostics func(uri string, after bool) []map[string]any
	// Elicit answers loom/elicit (declared when set, with Loom) from its
	// raw params: an MCP server's form or URL.
	Elicit func(params json.RawMessage) any
}

type buffer struct {
	text    string
	version int32
}

// Connect starts the fake editor on rwc (one end of a pipe whose other
// end the server reads).
func Connect(ctx context.Context, rwc io.ReadWriteCloser, cfg Config) *Editor {
	e := &Editor{cfg: cfg, buffers: map[string]*buffer{}}
	e.cond = sync.NewCond(&e.mu)
	e.conn = jsonrpc2.NewConn(jsonrpc2.NewHeaderStream(rwc))
	e.conn.Go(ctx, e.handle)
	go func() {
		<-e.conn.Done()
		e.mu.Lock()
		e.closed = true
		e.cond.Broadcast()
		e.mu.Unlock()
	}()
	return e
}

// Conn is the raw connection, for tests that send odd messages.
func (e *Editor) Conn() jsonrpc2.Conn { return e.conn }

// Done is closed when the connection has ended.
func (e *Editor) Done() <-chan struct{} { return e.conn.Done() }

// Close closes the connection.
func (e *Editor) Close() error { return e.conn.Close() }

func (e *Editor) record(method string, params []byte) {
	e.mu.Lock()
	e.messages = append(e.messages, Message{Method: strings.Clone(method), Params: append(json.RawMessage(nil), params...), Received: time.Now()})
	e.cond.Broadcast()
	e.mu.Unlock()
}

// SetSettings replaces what workspace/configuration answers (see
// Config.Settings); the caller then notifies didChangeConfiguration.
func (e *Editor) SetSettings(settings map[string]any) {
	e.mu.Lock()
	e.cfg.Settings = settings
	e.mu.Unlock()
}

func (e *Editor) handle(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	e.record(req.Method(), req.Params())
	if !req.IsCall() {
		return nil, nil
	}
	jsonrpc2.Async(ctx)
	answer, ok := answers[req.Method()]
	if !ok {
		return nil, jsonrpc2.ErrMethodNotFound
	}
	return answer(e, ctx, json.RawMessage(req.Params()))
}

// Initialize sends initialize and initialized.
func (e *Editor) Initialize(ctx context.Context) (*protocol.InitializeResult, error) {
	raw, err := e.initializeParams()
	if err != nil {
		return nil, err
	}
	var resRaw json.RawMessage
	if _, err := e.conn.Call(ctx, protocol.MethodInitialize, json.RawMessage(raw), &resRaw); err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.initRaw = resRaw
	e.mu.Unlock()
	var res protocol.InitializeResult
	if err := protocol.Unmarshal(resRaw, &res); err != nil {
		return nil, fmt.Errorf("decode initialize result: %w", err)
	}
	if err := e.conn.Notify(ctx, protocol.MethodInitialized, json.RawMessage(`{}`)); err != nil {
		return nil, err
	}
	return &res, nil
}

// Call sends a request; params and result are JSON-marshalled with
// protocol's codec when they are protocol types.
func (e *Editor) Call(ctx context.Context, method string, params, result any) error {
	raw, err := marshal(params)
	if err != nil {
		return err
	}
	var out json.RawMessage
	if _, err := e.conn.Call(ctx, method, raw, &out); err != nil {
		return err
	}
	if result == nil {
		return nil
	}
	return protocol.Unmarshal(out, result)
}

// Notify sends a notification.
func (e *Editor) Notify(ctx context.Context, method string, params any) error {
	raw, err := marshal(params)
	if err != nil {
		return err
	}
	return e.conn.Notify(ctx, method, raw)
}

func marshal(v any) (json.RawMessage, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return v, nil
	}
	b, err := protocol.Marshal(v)
	return json.RawMessage(b), err
}

// ExecuteCommand runs workspace/executeCommand with one argument.
func (e *Editor) ExecuteCommand(ctx context.Context, command string, arg, result any) error {
	p := &protocol.ExecuteCommandParams{Command: command}
	if arg != nil {
		raw, err := json.Marshal(arg)
		if err != nil {
			return err
		}
		p.Arguments = []protocol.LSPAny{raw}
	}
	var out json.RawMessage
	if err := e.Call(ctx, protocol.MethodWorkspaceExecuteCommand, p, &out); err != nil {
		return err
	}
	if result == nil {
		return nil
	}
	return json.Unmarshal(out, result)
}

// Shutdown sends shutdown.
func (e *Editor) Shutdown(ctx context.Context) error {
	return e.Call(ctx, protocol.MethodShutdown, nil, nil)
}

// Exit sends exit.
func (e *Editor) Exit(ctx context.Context) error {
	return e.conn.Notify(ctx, protocol.MethodExit, nil)
}

// Messages returns what the server sent so far whose method is method
// ("" for all).
func (e *Editor) Messages(method string) []Message {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Message
	for _, m := range e.messages {
		if method == "" || m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// Await waits until cond holds on the messages received so far, or ctx
// ends, or the connection ends; the error then lists what was received.
// cond runs with the editor locked: it must use its argument, not call
// the editor's methods.
func (e *Editor) Await(ctx context.Context, what string, cond func(msgs []Message) bool) error {
	stop := context.AfterFunc(ctx, func() {
		e.mu.Lock()
		e.cond.Broadcast()
		e.mu.Unlock()
	})
	defer stop()
	e.mu.Lock()
	defer e.mu.Unlock()
	for {
		if cond(e.messages) {
			return nil
		}
		if ctx.Err() != nil || e.closed {
			why := "deadline"
			if e.closed && ctx.Err() == nil {
				why = "connection closed"
			}
			return fmt.Errorf("%s: never met (%s); received:\n%s", what, why, summarize(e.messages))
		}
		e.cond.Wait()
	}
}

func summarize(msgs []Message) string {
	var b strings.Builder
	for _, m := range msgs {
		p := string(m.Params)
		if len(p) > 200 {
			p = p[:200] + "…"
		}
		fmt.Fprintf(&b, "  %s %s\n", m.Method, p)
	}
	return b.String()
}

// withInlineDynamic adds capabilities.textDocument.inlineCompletion =
// {dynamicRegistration: true} to initialize's params (go.lsp.dev's 3.17
// types have no field for it).
func withInlineDynamic(params []byte) ([]byte, error) {
	var p map[string]any
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	caps, _ := p["capabilities"].(map[string]any)
	if caps == nil {
		caps = map[string]any{}
		p["capabilities"] = caps
	}
	td, _ := caps["textDocument"].(map[string]any)
	if td == nil {
		td = map[string]any{}
		caps["textDocument"] = td
	}
	td["inlineCompletion"] = map[string]any{"dynamicRegistration": true}
	return json.Marshal(p)
}
