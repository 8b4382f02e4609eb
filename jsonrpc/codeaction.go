package jsonrpc

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// Prompts of the code actions.
const (
	promptAbout = "Explain this code, and point out anything wrong with it."
	promptFix   = "Fix this problem: %s"
)

// codeAction offers "Ask Loom about this" on a non-empty selection and
// "Ask Loom to fix: …" on each diagnostic. Both are loom.ask commands
// carrying the selection or diagnostic as context.
func (s *Server) codeAction(_ context.Context, raw jsonrpc2.RawMessage) (any, error) {
	var p protocol.CodeActionParams
	if err := decodeParams(protocol.MethodTextDocumentCodeAction, raw, &p); err != nil {
		return nil, err
	}
	docURI := string(p.TextDocument.URI)
	if path, err := uriPath(p.TextDocument.URI); err != nil {
		return []protocol.CodeAction{}, nil
	} else if _, err := s.host.Conversation(path); err != nil {
		return []protocol.CodeAction{}, nil // not in a folder we serve
	}
	wants := func(k protocol.CodeActionKind) bool {
		if len(p.Context.Only) == 0 {
			return true
		}
		return slices.ContainsFunc(p.Context.Only, func(o protocol.CodeActionKind) bool {
			return k == o || strings.HasPrefix(string(k), string(o)+".")
		})
	}
	actions := []protocol.CodeAction{}
	for _, d := range p.Context.Diagnostics {
		if !wants(protocol.CodeActionKindQuickFix) {
			break
		}
		msg := oneLine(diagnosticText(d.Message))
		args := AskArgs{
			Prompt: fmt.Sprintf(promptFix, msg), URI: docURI,
			Selection: &Selection{Range: d.Range, Diagnostic: msg},
		}
		kind := protocol.CodeActionKindQuickFix
		actions = append(actions, protocol.CodeAction{
			Title: "Ask Loom to fix: " + truncate(msg, 60), Kind: &kind,
			Diagnostics: []protocol.Diagnostic{d},
			Command:     askCommand("Ask Loom to fix", args),
		})
	}
	if p.Range.Start != p.Range.End && wants(protocol.CodeActionKindRefactor) {
		kind := protocol.CodeActionKindRefactor
		args := AskArgs{Prompt: promptAbout, URI: docURI, Selection: &Selection{Range: p.Range}}
		actions = append(actions, protocol.CodeAction{
			Title: "Ask Loom about this", Kind: &kind,
			Command: askCommand("Ask Loom about this", args),
		})
	}
	return actions, nil
}

func askCommand(title string, args AskArgs) protocol.Command {
	raw, _ := json.Marshal(args)
	return protocol.Command{Title: title, Command: CmdAsk, Arguments: []protocol.LSPAny{raw}}
}

func diagnosticText(m protocol.InlayHintTooltip) string {
	switch m := m.(type) {
	case protocol.String:
		return string(m)
	case *protocol.MarkupContent:
		return m.Value
	}
	return ""
}
