package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/loom-lsp/loom-lsp/workspace"
	"github.com/loom-lsp/loom-lsp/workspace/diagnostics"
)

// MethodDiagnostics is loom/diagnostics, server to client: the problems
// the client's own language servers show in a file. Sent only to a
// client that declared experimental.loom.diagnostics.
const MethodDiagnostics = "loom/diagnostics"

// DiagnosticsParams are loom/diagnostics' params.
type DiagnosticsParams struct {
	// URI is the file's URI, as the client opened it.
	URI string `json:"uri"`
	// After is set when loom just edited the file: the client waits (at
	// most WaitMs) for its language servers to publish the file's
	// diagnostics anew before it answers. Unset, it answers with what it
	// shows (waiting only for a file it had to open to know).
	After  bool  `json:"after"`
	WaitMs int64 `json:"waitMs"`
}

// DiagnosticsResult is loom/diagnostics' result: the file's diagnostics
// in LSP's Diagnostic shape (range, severity, code, source, message), or
// null when the client's language servers do not look at the file (it
// is not open there): loom then asks a language server of its own.
type DiagnosticsResult struct {
	Diagnostics *[]lspDiagnostic `json:"diagnostics"`
	// Late is set when the client's wait (WaitMs, after an edit) ended
	// before its language servers published the file anew: Diagnostics
	// are what it showed before, not an answer about the edit, so loom
	// says the file's diagnostics were not available.
	Late bool `json:"late,omitempty"`
}

type lspDiagnostic struct {
	Range struct {
		Start struct {
			Line      int `json:"line"`
			Character int `json:"character"`
		} `json:"start"`
	} `json:"range"`
	Severity int    `json:"severity,omitempty"`
	Code     any    `json:"code,omitempty"`
	Source   string `json:"source,omitempty"`
	Message  string `json:"message"`
}

var _ workspace.DiagnosticsSource = (*editor)(nil)

// Diagnostics asks the client for the file's diagnostics with
// loom/diagnostics, when it declared experimental.loom.diagnostics.
func (e *editor) Diagnostics(ctx context.Context, _ workspace.DocumentCaller, path string, after bool) ([]diagnostics.Diagnostic, error) {
	s := e.s
	s.mu.Lock()
	ok := s.caps.diagnostics
	s.mu.Unlock()
	if !ok {
		return nil, workspace.ErrUnsupported
	}
	params := DiagnosticsParams{URI: string(s.clientURI(path)), After: after}
	if dl, ok := ctx.Deadline(); ok {
		// The client's wait ends before ours, so that its answer arrives.
		params.WaitMs = max(0, time.Until(dl).Milliseconds()-200)
	}
	var res DiagnosticsResult
	if err := s.callClient(ctx, MethodDiagnostics, params, &res); err != nil {
		if errors.Is(err, jsonrpc2.ErrMethodNotFound) {
			return nil, workspace.ErrUnsupported
		}
		return nil, fmt.Errorf("%s: %w: %v", MethodDiagnostics, diagnostics.ErrUnavailable, err)
	}
	if res.Diagnostics == nil {
		return nil, workspace.ErrDiagnosticsUnknown
	}
	if after && res.Late {
		return nil, fmt.Errorf("%w: the editor's language server did not answer in time", diagnostics.ErrUnavailable)
	}
	out := make([]diagnostics.Diagnostic, 0, len(*res.Diagnostics))
	for _, d := range *res.Diagnostics {
		item := diagnostics.Diagnostic{
			Path: path, Line: d.Range.Start.Line + 1, Col: d.Range.Start.Character + 1,
			Severity: diagnostics.Severity(d.Severity), Source: d.Source, Message: d.Message,
		}
		switch c := d.Code.(type) {
		case string:
			item.Code = c
		case float64:
			item.Code = strconv.FormatFloat(c, 'f', -1, 64)
		}
		out = append(out, item)
	}
	return out, nil
}
