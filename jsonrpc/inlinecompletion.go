package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/loom-lsp/loom-lsp/completion"
	"github.com/loom-lsp/loom-lsp/internal/lsppos"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// LSP 3.18's inline completion, beside go.lsp.dev's 3.17 types.

// MethodInlineCompletion is textDocument/inlineCompletion (LSP 3.18).
const MethodInlineCompletion = "textDocument/inlineCompletion"

// InlineCompletionTriggerKind says how an inline completion was asked
// for.
type InlineCompletionTriggerKind uint32

// The trigger kinds.
const (
	// InlineCompletionInvoked: the user asked explicitly.
	InlineCompletionInvoked InlineCompletionTriggerKind = 1
	// InlineCompletionAutomatic: the editor asked as the user typed.
	InlineCompletionAutomatic InlineCompletionTriggerKind = 2
)

// SelectedCompletionInfo is the item selected in the editor's completion
// widget: an inline completion must extend it.
type SelectedCompletionInfo struct {
	// Range is what the selected item would replace.
	Range protocol.Range `json:"range"`
	// Text is what it would insert.
	Text string `json:"text"`
}

// InlineCompletionContext is the context of an inline completion
// request.
type InlineCompletionContext struct {
	TriggerKind            InlineCompletionTriggerKind `json:"triggerKind"`
	SelectedCompletionInfo *SelectedCompletionInfo     `json:"selectedCompletionInfo,omitempty"`
}

// InlineCompletionParams are textDocument/inlineCompletion's params.
type InlineCompletionParams struct {
	TextDocument protocol.TextDocumentIdentifier `json:"textDocument"`
	Position     protocol.Position               `json:"position"`
	Context      InlineCompletionContext         `json:"context"`
}

// StringValue is a snippet (kind "snippet") as an item's insert text.
type StringValue struct {
	Kind  string `json:"kind"`
	Value string `json:"value"`
}

// InlineCompletionItem is one suggestion. InsertText is a string or a
// StringValue.
type InlineCompletionItem struct {
	InsertText any               `json:"insertText"`
	FilterText string            `json:"filterText,omitempty"`
	Range      *protocol.Range   `json:"range,omitempty"`
	Command    *protocol.Command `json:"command,omitempty"`
}

// InlineCompletionList is textDocument/inlineCompletion's result.
type InlineCompletionList struct {
	Items []InlineCompletionItem `json:"items"`
}

// CmdInlineAccepted records that the user accepted an inline completion
// (the item's command, run by the client on accept), in a local log the
// user can read — never sent anywhere: InlineAcceptedArgs -> null.
const CmdInlineAccepted = "loom.inlineCompletionAccepted"

// InlineAcceptedArgs is loom.inlineCompletionAccepted's argument.
type InlineAcceptedArgs struct {
	URI    string `json:"uri"`
	Chars  int    `json:"chars"`
	Lines  int    `json:"lines"`
	Cached bool   `json:"cached,omitempty"`
}

// inlineCompletions serves LSP 3.18's inline completion for one
// connection: the requests (a path of their own to the FIM model, which
// never waits for or blocks a conversation), the local log of accepted
// items, and the capability — declared at initialize, or registered and
// unregistered with the client as the settings turn completion on and
// off (inlineregister.go).
type inlineCompletions struct {
	host    *workspace.Host
	log     *slog.Logger
	client  inlineClient
	service *completion.Service

	mu sync.Mutex
	// lastErr is the completion model's last error, said once.
	lastErr string
	reg     registration
}

// inlineClient is what inline completion needs of the connection.
type inlineClient interface {
	logMessage(typ protocol.MessageType, text string)
	callClient(ctx context.Context, method string, params, result any) error
	goBackground(fn func())
}

func newInlineCompletions(host *workspace.Host, log *slog.Logger, client inlineClient) *inlineCompletions {
	return &inlineCompletions{host: host, log: log, client: client, service: completion.NewService(nil)}
}

// receive takes a textDocument/inlineCompletion as the editor sent it,
// in wire order: the open buffer's text at that moment and the request's
// place among the document's requests. A request the editor sent later
// for the same document supersedes it (answered null) — even when its
// handler happens to run first; $/cancelRequest cancels it
// (RequestCancelled). The returned part asks the model.
func (ic *inlineCompletions) receive(raw jsonrpc2.RawMessage) (func(context.Context) (any, error), error) {
	var p InlineCompletionParams
	if err := decodeParams(MethodInlineCompletion, raw, &p); err != nil {
		return nil, err
	}
	path, err := uriPath(p.TextDocument.URI)
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: %v", MethodInlineCompletion, err)
	}
	setup, ok := ic.host.CompletionFor(path)
	if !ok {
		return answerNull, nil
	}
	text, _, open := ic.host.Overlay().Document(path)
	if !open {
		return answerNull, nil
	}
	pos := lsppos.Position{Line: p.Position.Line, Character: p.Position.Character}
	replace := protocol.Range{Start: p.Position, End: p.Position}
	lead := ""
	if sel := p.Context.SelectedCompletionInfo; sel != nil {
		// Complete as if the selected item were inserted, and extend it.
		if text, pos, err = applySelected(text, sel); err != nil {
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: selectedCompletionInfo: %v", MethodInlineCompletion, err)
		}
		replace, lead = sel.Range, sel.Text
	}
	in := completion.Input{Name: setup.Name, Text: text, Pos: pos, Config: setup.Config, Key: setup.Key, Redact: ic.host.Redact}
	ticket := ic.service.Admit(path)
	return func(ctx context.Context) (any, error) {
		return ic.complete(ctx, ticket, in, p.TextDocument.URI, replace, lead)
	}, nil
}

func answerNull(context.Context) (any, error) { return nil, nil }

// complete asks the model for the request received as ticket and in, and
// answers with an item replacing replace by lead and the suggestion.
func (ic *inlineCompletions) complete(ctx context.Context, ticket completion.Ticket, in completion.Input, doc uri.URI,
	replace protocol.Range, lead string) (any, error) {
	sug, err := ic.service.Complete(ctx, ticket, in)
	switch {
	case errors.Is(err, completion.ErrSuperseded):
		return nil, nil
	case err != nil && ctx.Err() != nil:
		return nil, err // cancelled by the client
	case err != nil:
		ic.failed(err)
		return nil, nil
	case sug.Text == "":
		return &InlineCompletionList{Items: []InlineCompletionItem{}}, nil
	}
	insert := lead + sug.Text
	accepted, err := json.Marshal(InlineAcceptedArgs{URI: string(doc), Chars: len([]rune(insert)),
		Lines: strings.Count(insert, "\n") + 1, Cached: sug.Cached})
	if err != nil {
		return nil, err
	}
	return &InlineCompletionList{Items: []InlineCompletionItem{{
		InsertText: insert,
		Range:      &replace,
		Command:    &protocol.Command{Title: "Accepted", Command: CmdInlineAccepted, Arguments: []protocol.LSPAny{accepted}},
	}}}, nil
}

// applySelected returns text with the selected completion item inserted
// and the position after it.
func applySelected(text string, sel *SelectedCompletionInfo) (string, lsppos.Position, error) {
	start, end, err := lsppos.Span(text, lspposRange(sel.Range))
	if err != nil {
		return "", lsppos.Position{}, err
	}
	out := text[:start] + sel.Text + text[end:]
	return out, lsppos.PositionOf(out, start+len(sel.Text)), nil
}

// failed tells the user once per distinct error that the completion
// model failed (in the client's log, not a popup: it may fail at every
// keystroke).
func (ic *inlineCompletions) failed(err error) {
	msg := ic.host.Redact(err.Error())
	ic.mu.Lock()
	same := ic.lastErr == msg
	ic.lastErr = msg
	ic.mu.Unlock()
	ic.log.Warn("inline completion failed", "err", msg)
	if !same {
		ic.client.logMessage(protocol.MessageTypeWarning, "loom-lsp: inline completion: "+msg)
	}
}

// accepted appends the accept to the completion log in the state
// directory (loom.inlineCompletionAccepted).
func (ic *inlineCompletions) accepted(_ context.Context, a InlineAcceptedArgs) (any, error) {
	path, err := ic.host.CompletionLogPath()
	if err != nil {
		return nil, err
	}
	line, err := json.Marshal(struct {
		Time  string `json:"time"`
		Event string `json:"event"`
		InlineAcceptedArgs
	}{time.Now().UTC().Format(time.RFC3339), "accepted", a})
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("completion log: %w", err)
	}
	defer f.Close()
	_, err = f.Write(append(line, '\n'))
	return nil, err
}
