package jsonrpc

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
)

func TestInitializeAdvertises(t *testing.T) {
	e := newEnv(t, envOptions{noInit: true, cfg: fakeeditor.Config{Loom: true}})
	res, err := e.ed.Initialize(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	caps := res.Capabilities
	for _, c := range []string{CmdAsk, CmdCancel, CmdReset, CmdStatus, CmdHistory, CmdUndo} {
		if !slices.Contains(caps.ExecuteCommandProvider.Commands, c) {
			t.Errorf("executeCommandProvider lacks %s: %v", c, caps.ExecuteCommandProvider.Commands)
		}
	}
	sync, ok := caps.TextDocumentSync.(*protocol.TextDocumentSyncOptions)
	if !ok || sync.Change == nil || *sync.Change != protocol.TextDocumentSyncKindIncremental {
		t.Errorf("textDocumentSync = %#v, want incremental", caps.TextDocumentSync)
	}
	if caps.CodeActionProvider == nil {
		t.Error("no codeActionProvider")
	}
	if caps.Workspace == nil || caps.Workspace.WorkspaceFolders == nil || !*caps.Workspace.WorkspaceFolders.Supported {
		t.Error("workspace folders not advertised")
	}
	// A second initialize is refused.
	err = e.ed.Call(e.ctx, protocol.MethodInitialize, &protocol.InitializeParams{}, nil)
	if !errors.Is(err, jsonrpc2.ErrInvalidRequest) {
		t.Errorf("second initialize: %v, want InvalidRequest", err)
	}
}

func TestRequestBeforeInitialize(t *testing.T) {
	e := newEnv(t, envOptions{noInit: true})
	err := e.ed.ExecuteCommand(e.ctx, CmdStatus, nil, nil)
	var we *jsonrpc2.Error
	if !errors.As(err, &we) || we.Code != jsonrpc2.ServerNotInitialized {
		t.Fatalf("err = %v, want ServerNotInitialized", err)
	}
}

func TestShutdownThenExit(t *testing.T) {
	e := newEnv(t, envOptions{})
	if err := e.ed.Shutdown(e.ctx); err != nil {
		t.Fatal(err)
	}
	// Requests after shutdown get InvalidRequest.
	err := e.ed.ExecuteCommand(e.ctx, CmdStatus, nil, nil)
	if !errors.Is(err, jsonrpc2.ErrInvalidRequest) {
		t.Fatalf("after shutdown: %v, want InvalidRequest", err)
	}
	if err := e.ed.Exit(e.ctx); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, e); code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
}

func TestExitWithoutShutdown(t *testing.T) {
	e := newEnv(t, envOptions{})
	if err := e.ed.Exit(e.ctx); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, e); code != 1 {
		t.Fatalf("exit code %d, want 1", code)
	}
}

func TestEndOfInputExitsCleanly(t *testing.T) {
	e := newEnv(t, envOptions{})
	_ = e.ed.Close()
	if code := waitExit(t, e); code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
}

func waitExit(t *testing.T, e *env) int {
	t.Helper()
	select {
	case code := <-e.exit:
		e.exit <- code // for the cleanup
		return code
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not exit")
		return -1
	}
}

func TestCancelRequestNumericID(t *testing.T) {
	started := make(chan struct{})
	routes["test/block"] = route{call: func(_ *Server, ctx context.Context, _ jsonrpc2.RawMessage) (any, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	t.Cleanup(func() { delete(routes, "test/block") })
	e := newEnv(t, envOptions{})
	errc := make(chan error, 1)
	go func() { errc <- e.ed.Call(e.ctx, "test/block", nil, nil) }()
	select {
	case <-started:
	case <-e.ctx.Done():
		t.Fatal("request never started")
	}
	// The fake editor's ids are numbers from 1: initialize was 1, so
	// test/block is 2.
	if err := e.ed.Notify(e.ctx, protocol.MethodCancelRequest, rawJSON(`{"id":2}`)); err != nil {
		t.Fatal(err)
	}
	err := <-errc
	var we *jsonrpc2.Error
	if !errors.As(err, &we) || we.Code != protocol.CodeRequestCancelled {
		t.Fatalf("err = %v, want RequestCancelled", err)
	}
}

func TestPanicIsRecovered(t *testing.T) {
	routes["test/panic"] = route{call: func(*Server, context.Context, jsonrpc2.RawMessage) (any, error) { panic("boom") }}
	routes["test/panicNote"] = route{notify: func(*Server, context.Context, jsonrpc2.RawMessage) error { panic("bang") }}
	t.Cleanup(func() { delete(routes, "test/panic"); delete(routes, "test/panicNote") })
	e := newEnv(t, envOptions{})
	err := e.ed.Call(e.ctx, "test/panic", nil, nil)
	var we *jsonrpc2.Error
	if !errors.As(err, &we) || we.Code != jsonrpc2.InternalError {
		t.Fatalf("err = %v, want InternalError", err)
	}
	if err := e.ed.Notify(e.ctx, "test/panicNote", nil); err != nil {
		t.Fatal(err)
	}
	e.await("panic reported", hasMethod(protocol.MethodWindowLogMessage, "bang"))
	// The connection still works.
	var st map[string]any
	if err := e.ed.ExecuteCommand(e.ctx, CmdStatus, nil, &st); err != nil {
		t.Fatalf("status after panics: %v", err)
	}
}
