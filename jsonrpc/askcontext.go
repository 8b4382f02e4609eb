package jsonrpc

import (
	"fmt"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/loom-lsp/loom-lsp/tools/mcp"
	"github.com/loom-lsp/loom-lsp/workspace"
)

// AskContextItem is one item of loom.ask's context: a file (or a range
// of it, or a folder), diagnostics, or a labelled text.
type AskContextItem struct {
	// Kind is "file", "diagnostics", "text" or "resource".
	Kind string `json:"kind"`
	// Label is what the chip says; the server makes one when empty.
	Label string `json:"label,omitempty"`
	// URI (file) is the file or folder attached; inside the workspace.
	// URI (resource) is the MCP resource's URI (or Template and
	// Arguments), as loom.mcpResources lists it.
	URI string `json:"uri,omitempty"`
	// Server (resource) is the MCP server's name.
	Server string `json:"server,omitempty"`
	// Template (resource) is a resource template's URI template, filled
	// in with Arguments, a value for each of its variables.
	Template  string            `json:"template,omitempty"`
	Arguments map[string]string `json:"arguments,omitempty"`
	// Range (file), when set, attaches only that range.
	Range *protocol.Range `json:"range,omitempty"`
	// Items (diagnostics) are the problems attached.
	Items []AskDiagnostic `json:"items,omitempty"`
	// Text (text) is the text attached: a terminal's output, git changes…
	Text string `json:"text,omitempty"`
}

// AskDiagnostic is one problem of a diagnostics item.
type AskDiagnostic struct {
	URI      string         `json:"uri"`
	Range    protocol.Range `json:"range"`
	Severity string         `json:"severity,omitempty"`
	Message  string         `json:"message"`
	Source   string         `json:"source,omitempty"`
	Code     any            `json:"code,omitempty"`
}

// HistoryChip is an item attached to a user message, as loom.history
// returns it.
type HistoryChip struct {
	Kind  string `json:"kind"`
	Label string `json:"label"`
	URI   string `json:"uri,omitempty"`
}

// contextItems converts loom.ask's context to the workspace's.
func contextItems(in []AskContextItem) ([]workspace.ContextItem, error) {
	out := make([]workspace.ContextItem, 0, len(in))
	for i, c := range in {
		it := workspace.ContextItem{Kind: c.Kind, Label: c.Label, Text: c.Text}
		switch c.Kind {
		case workspace.ContextFile:
			if c.URI == "" {
				return nil, fmt.Errorf("context[%d]: a file needs its uri", i)
			}
			p, err := uriPath(uri.URI(c.URI))
			if err != nil {
				return nil, fmt.Errorf("context[%d]: bad uri: %v", i, err)
			}
			it.Path = p
			if c.Range != nil {
				r := lspposRange(*c.Range)
				it.Range = &r
			}
		case workspace.ContextDiagnostics:
			if len(c.Items) == 0 {
				return nil, fmt.Errorf("context[%d]: diagnostics need items", i)
			}
			for j, d := range c.Items {
				p, err := uriPath(uri.URI(d.URI))
				if err != nil {
					return nil, fmt.Errorf("context[%d].items[%d]: bad uri: %v", i, j, err)
				}
				code := ""
				if d.Code != nil {
					code = fmt.Sprint(d.Code)
				}
				it.Diagnostics = append(it.Diagnostics, workspace.Diagnostic{Path: p, Range: lspposRange(d.Range),
					Severity: d.Severity, Message: d.Message, Source: d.Source, Code: code})
			}
		case workspace.ContextText:
			if c.Text == "" {
				return nil, fmt.Errorf("context[%d]: a text item needs text", i)
			}
		case workspace.ContextResource:
			if c.Server == "" || (c.URI == "") == (c.Template == "") {
				return nil, fmt.Errorf("context[%d]: a resource needs its server, and its uri or a template with its arguments", i)
			}
			it.Resource = mcp.ResourceRef{Server: c.Server, URI: c.URI, Template: c.Template, Arguments: c.Arguments}
		default:
			return nil, fmt.Errorf("context[%d]: unknown kind %q: want file, diagnostics, text or resource", i, c.Kind)
		}
		out = append(out, it)
	}
	return out, nil
}

// historyChips turns the chips SplitPrompt recovered into the wire's.
func historyChips(chips []workspace.ContextChip) []HistoryChip {
	if len(chips) == 0 {
		return nil
	}
	out := make([]HistoryChip, len(chips))
	for i, c := range chips {
		out[i] = HistoryChip{Kind: c.Kind, Label: c.Label}
		if c.Path != "" {
			out[i].URI = string(pathURI(c.Path))
		} else if c.URI != "" {
			out[i].URI = c.URI // an MCP resource's
		}
	}
	return out
}
