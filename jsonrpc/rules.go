package jsonrpc

import (
	"context"
	"errors"
	"fmt"

	"go.lsp.dev/jsonrpc2"

	"github.com/loom-lsp/loom-lsp/tools/cmdrules"
)

// The approval rule commands.
const (
	// CmdRules lists the folder's approval rules: FolderArgs -> RulesResult.
	CmdRules = "loom.rules"
	// CmdAddRule adds one: RuleArgs -> RulesResult.
	CmdAddRule = "loom.addRule"
	// CmdRemoveRule removes one: RuleArgs -> RulesResult.
	CmdRemoveRule = "loom.removeRule"
)

// RuleArgs name a folder and one rule (exactly one of Exact, Prefix,
// Every and MCPServer).
type RuleArgs struct {
	URI    string `json:"uri,omitempty"`
	Exact  string `json:"exact,omitempty"`
	Prefix string `json:"prefix,omitempty"`
	// Every is "every command" in this folder: what a client's "Always
	// allow every command" saves once the user confirmed it. It is the
	// user's, kept with the other rules in the user's state directory;
	// neither the repository nor the agent can set it.
	Every bool `json:"every,omitempty"`
	// MCPServer names an MCP server whose tools run without asking in
	// this folder (a client's "Always allow this server's tools"): the
	// user's too, in the same place, instead of a trust-bound workspace
	// setting.
	MCPServer string `json:"mcpServer,omitempty"`
	// Conversation selects one of the folder's conversations by id; ""
	// is the folder's most recent.
	Conversation string `json:"conversation,omitempty"`
}

// RulesResult is a folder's approval rules.
type RulesResult struct {
	Folder        string          `json:"folder"`
	AllowCommands []cmdrules.Rule `json:"allowCommands"`
	// AllowMCPServers names the MCP servers whose tools run unasked.
	AllowMCPServers []string `json:"allowMcpServers"`
}

func (h commandHandler) runRules(_ context.Context, a FolderArgs) (any, error) {
	s := h.s
	sess, err := s.session(CmdRules, a.URI, a.Conversation)
	if err != nil {
		return nil, err
	}
	return s.rulesResult(sess.Folder().Path())
}

func (h commandHandler) runAddRule(_ context.Context, a RuleArgs) (any, error) {
	s := h.s
	sess, err := s.session(CmdAddRule, a.URI, a.Conversation)
	if err != nil {
		return nil, err
	}
	var err2 error
	switch {
	case a.MCPServer != "" && (a.Exact != "" || a.Prefix != "" || a.Every):
		err2 = fmt.Errorf("%w: mcpServer is a rule of its own (no exact, prefix or every with it)", cmdrules.ErrBadRule)
	case a.MCPServer != "":
		err2 = s.host.AddMCPServerRule(sess.Folder().Path(), a.MCPServer)
	default:
		_, err2 = s.host.AddApprovalRule(sess.Folder().Path(), a.rule())
	}
	if err := err2; err != nil {
		if errors.Is(err, cmdrules.ErrBadRule) {
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: %v", CmdAddRule, err)
		}
		return nil, err
	}
	return s.rulesResult(sess.Folder().Path())
}

func (h commandHandler) runRemoveRule(_ context.Context, a RuleArgs) (any, error) {
	s := h.s
	sess, err := s.session(CmdRemoveRule, a.URI, a.Conversation)
	if err != nil {
		return nil, err
	}
	var found bool
	if a.MCPServer != "" {
		found, err = s.host.RemoveMCPServerRule(sess.Folder().Path(), a.MCPServer)
	} else {
		found, err = s.host.RemoveApprovalRule(sess.Folder().Path(), a.rule())
	}
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: no such rule (loom.rules lists them)", CmdRemoveRule)
	}
	return s.rulesResult(sess.Folder().Path())
}

func (s *Server) rulesResult(folder string) (*RulesResult, error) {
	rs, err := s.host.ApprovalRules(folder)
	if err != nil {
		return nil, err
	}
	if rs == nil {
		rs = []cmdrules.Rule{}
	}
	servers, err := s.host.MCPServerRules(folder)
	if err != nil {
		return nil, err
	}
	return &RulesResult{Folder: folder, AllowCommands: rs, AllowMCPServers: append([]string{}, servers...)}, nil
}

func (a RuleArgs) rule() cmdrules.Rule {
	return cmdrules.Rule{Exact: a.Exact, Prefix: a.Prefix, Every: a.Every}
}
