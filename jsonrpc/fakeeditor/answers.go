package fakeeditor

import (
	"context"
	"encoding/json"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// answer is how the fake editor answers one kind of the server's
// requests, from the request's raw params.
type answer func(e *Editor, ctx context.Context, params json.RawMessage) (any, error)

// answers are the requests the fake editor answers, by method; any other
// method is not found. An answer that the editor's Config or Hooks do not
// declare is not found either, as in a client without it.
var answers = map[string]answer{
	protocol.MethodWindowWorkDoneProgressCreate: (*Editor).answerProgressCreate,
	protocol.MethodWorkspaceApplyEdit:           (*Editor).answerApplyEdit,
	protocol.MethodWindowShowMessageRequest:     (*Editor).answerShowMessageRequest,
	protocol.MethodWorkspaceConfiguration:       (*Editor).answerConfiguration,
	protocol.MethodClientRegisterCapability:     answerNull,
	protocol.MethodClientUnregisterCapability:   answerNull,
	"loom/diagnostics":                          (*Editor).answerDiagnostics,
	"loom/elicit":                               (*Editor).answerElicit,
	"loom/saveDocuments":                        (*Editor).answerSaveDocuments,
	protocol.MethodWindowShowDocument:           (*Editor).answerShowDocument,
}

func invalidParams(err error) error {
	return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%v", err)
}

// answerNull accepts the request with a null result.
func answerNull(*Editor, context.Context, json.RawMessage) (any, error) { return nil, nil }

func (e *Editor) answerProgressCreate(ctx context.Context, _ json.RawMessage) (any, error) {
	if h := e.Hooks.WorkDoneProgressCreate; h != nil {
		h(ctx)
	}
	return nil, nil
}

func (e *Editor) answerApplyEdit(ctx context.Context, params json.RawMessage) (any, error) {
	var p protocol.ApplyWorkspaceEditParams
	if err := protocol.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(err)
	}
	if h := e.Hooks.BeforeApplyEdit; h != nil {
		h(e, &p)
	}
	return e.applyEdit(ctx, &p), nil
}

// answerShowMessageRequest picks an action: the raw hook's, else the
// hook's, else the first. A client that did not declare showMessage
// never answers, unless it AnswersAnyway.
func (e *Editor) answerShowMessageRequest(ctx context.Context, params json.RawMessage) (any, error) {
	if e.cfg.NoShowMessage && !e.cfg.AnswersAnyway {
		<-ctx.Done() // like ALE: never answered
		return nil, ctx.Err()
	}
	if h := e.Hooks.RawShowMessageRequest; h != nil {
		return h(append(json.RawMessage(nil), params...)), nil
	}
	var p protocol.ShowMessageRequestParams
	if err := protocol.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(err)
	}
	if h := e.Hooks.ShowMessageRequest; h != nil {
		return h(&p), nil
	}
	if len(p.Actions) == 0 {
		return nil, nil
	}
	return &p.Actions[0], nil
}

// answerConfiguration answers each item with its section of the
// settings (null without a section); no settings: not declared.
func (e *Editor) answerConfiguration(ctx context.Context, params json.RawMessage) (any, error) {
	if h := e.Hooks.BeforeConfiguration; h != nil {
		h(ctx)
	}
	var p protocol.ConfigurationParams
	if err := protocol.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(err)
	}
	e.mu.Lock()
	settings := e.cfg.Settings
	e.mu.Unlock()
	if settings == nil {
		return nil, jsonrpc2.ErrMethodNotFound
	}
	out := make([]any, len(p.Items))
	for i, it := range p.Items {
		if it.Section != nil {
			out[i] = settings[*it.Section]
		}
	}
	return out, nil
}

func (e *Editor) answerDiagnostics(_ context.Context, params json.RawMessage) (any, error) {
	h := e.Hooks.Diagnostics
	if h == nil {
		return nil, jsonrpc2.ErrMethodNotFound
	}
	var p struct {
		URI   string `json:"uri"`
		After bool   `json:"after"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(err)
	}
	ds := h(p.URI, p.After)
	if ds == nil {
		ds = []map[string]any{}
	}
	return map[string]any{"diagnostics": ds}, nil
}

func (e *Editor) answerElicit(_ context.Context, params json.RawMessage) (any, error) {
	if e.Hooks.Elicit == nil {
		return nil, jsonrpc2.ErrMethodNotFound
	}
	return e.Hooks.Elicit(params), nil
}

func (e *Editor) answerSaveDocuments(_ context.Context, params json.RawMessage) (any, error) {
	if !e.cfg.Loom {
		return nil, jsonrpc2.ErrMethodNotFound
	}
	var p struct {
		URIs []string `json:"uris"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(err)
	}
	saved := p.URIs
	if h := e.Hooks.SaveDocuments; h != nil {
		saved = h(p.URIs)
	}
	if saved == nil {
		saved = []string{}
	}
	return map[string]any{"saved": saved}, nil
}

func (e *Editor) answerShowDocument(_ context.Context, params json.RawMessage) (any, error) {
	var p struct { // the uri as sent, not normalized by uri.URI
		URI      string `json:"uri"`
		External bool   `json:"external"`
	}
	if err := json.Unmarshal(params, &p); err != nil || e.Hooks.ShowDocument == nil {
		return nil, jsonrpc2.ErrMethodNotFound
	}
	return &protocol.ShowDocumentResult{Success: e.Hooks.ShowDocument(p.URI, p.External)}, nil
}
