package jsonrpc

import (
	"context"
	"fmt"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
)

// MCPServerArgs names one MCP server of a folder.
type MCPServerArgs struct {
	URI string `json:"uri,omitempty"`
	// Server is the server's name in the configuration.
	Server string `json:"server"`
}

// MCPLoginResult is loom.mcpLogin's and loom.mcpLogout's reply.
type MCPLoginResult struct {
	Server string `json:"server"`
	// Message says what happened, for the user.
	Message string `json:"message"`
}

// mcpLoginTimeout bounds the wait for the user's browser.
const mcpLoginTimeout = 10 * time.Minute

// runMCPLogin signs in to an HTTP MCP server: the authorization URL opens
// through the client (window/showDocument, external), or, when the client
// cannot, is shown in a message; the reply comes once the browser came
// back to loom's loopback listener.
func (h commandHandler) runMCPLogin(ctx context.Context, a MCPServerArgs) (any, error) {
	s := h.s
	if a.Server == "" {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: server is required", CmdMCPLogin)
	}
	f, err := s.folder(CmdMCPLogin, a.URI)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, mcpLoginTimeout)
	defer cancel()
	res, err := f.MCPLogin(ctx, a.Server, func(ctx context.Context, u string) error {
		yes := true
		var shown protocol.ShowDocumentResult
		err := s.callClient(ctx, protocol.MethodWindowShowDocument, &protocol.ShowDocumentParams{URI: uri.URI(u), External: &yes}, &shown)
		if err != nil || !shown.Success {
			s.showMessage(protocol.MessageTypeInfo, fmt.Sprintf("To sign in to MCP server %q, open this URL in your browser: %s", a.Server, u))
		}
		return nil
	})
	if err != nil {
		return nil, jsonrpc2.NewError(codeRequestFailed, commandError(CmdMCPLogin, err))
	}
	return &MCPLoginResult{Server: a.Server, Message: fmt.Sprintf("signed in to MCP server %q: %d tools, %d prompts, %d resources", a.Server, res.Tools, res.Prompts, res.Resources)}, nil
}

// runMCPLogout forgets the sign-in of an MCP server.
func (h commandHandler) runMCPLogout(_ context.Context, a MCPServerArgs) (any, error) {
	s := h.s
	f, err := s.folder(CmdMCPLogout, a.URI)
	if err != nil {
		return nil, err
	}
	had, err := f.MCPLogout(a.Server)
	if err != nil {
		return nil, jsonrpc2.NewError(codeRequestFailed, commandError(CmdMCPLogout, err))
	}
	msg := fmt.Sprintf("signed out of MCP server %q", a.Server)
	if !had {
		msg = fmt.Sprintf("MCP server %q was not signed in", a.Server)
	}
	return &MCPLoginResult{Server: a.Server, Message: msg}, nil
}
