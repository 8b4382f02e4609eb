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
// Every, MCPServer and FetchHost).
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
	// FetchHost names a host the fetch tool reaches without asking in
	// this folder (a client's "Always allow fetches from this host"):
	// the user's too, in the same place.
	FetchHost string `json:"fetchHost,omitempty"`
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
	// AllowFetchHosts names the hosts the fetch tool reaches unasked.
	AllowFetchHosts []string `json:"allowFetchHosts"`
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
	case a.kinds() > 1:
		err2 = fmt.Errorf("%w: mcpServer and fetchHost are rules of their own (one of exact, prefix, every, mcpServer, fetchHost)", cmdrules.ErrBadRule)
	case a.MCPServer != "":
		err2 = s.host.Rules().AddMCPServer(sess.Folder().Path(), a.MCPServer)
	case a.FetchHost != "":
		err2 = s.host.Rules().AddFetchHost(sess.Folder().Path(), a.FetchHost)
	default:
		_, err2 = s.host.Rules().AddCommand(sess.Folder().Path(), a.rule())
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
	switch {
	case a.MCPServer != "":
		found, err = s.host.Rules().RemoveMCPServer(sess.Folder().Path(), a.MCPServer)
	case a.FetchHost != "":
		found, err = s.host.Rules().RemoveFetchHost(sess.Folder().Path(), a.FetchHost)
	default:
		found, err = s.host.Rules().RemoveCommand(sess.Folder().Path(), a.rule())
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
	rs, err := s.host.Rules().Commands(folder)
	if err != nil {
		return nil, err
	}
	if rs == nil {
		rs = []cmdrules.Rule{}
	}
	servers, err := s.host.Rules().MCPServers(folder)
	if err != nil {
		return nil, err
	}
	hosts, err := s.host.Rules().FetchHosts(folder)
	if err != nil {
		return nil, err
	}
	return &RulesResult{Folder: folder, AllowCommands: rs, AllowMCPServers: append([]string{}, servers...), AllowFetchHosts: append([]string{}, hosts...)}, nil
}

// kinds counts the kinds of rule a names: a command rule (exact, prefix
// or every), an MCP server, a fetch host.
func (a RuleArgs) kinds() int {
	n := 0
	for _, set := range []bool{a.Exact != "" || a.Prefix != "" || a.Every, a.MCPServer != "", a.FetchHost != ""} {
		if set {
			n++
		}
	}
	return n
}

func (a RuleArgs) rule() cmdrules.Rule {
	return cmdrules.Rule{Exact: a.Exact, Prefix: a.Prefix, Every: a.Every}
}
