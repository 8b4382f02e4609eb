package jsonrpc

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/loom-lsp/loom-lsp/jsonrpc/fakeeditor"
	"github.com/loom-lsp/loom-lsp/tools/mcp/mcptest"
)

// mcpEchoScript is a model that, for the prompt "echo N.", calls the MCP
// server ev's echo tool, then says "done N".
func mcpEchoScript(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "[[step]]\nmatch.last_user_contains = %q\n  [[step.tool_call]]\n  name = \"ev__echo\"\n  arguments = '{\"message\":\"call %d\"}'\n\n", fmt.Sprintf("echo %d.", i), i)
		fmt.Fprintf(&b, "[[step]]\nmatch.last_role = \"tool\"\ntext = [%q]\n\n", fmt.Sprintf("done %d", i))
	}
	return b.String()
}

// echoTurn asks "echo N." and waits for the turn's end; it returns the
// last status of the turn's ev__echo call.
func (e *env) echoTurn(n int) ToolCallParams {
	e.t.Helper()
	from := len(e.ed.Messages(""))
	res := e.ask(fmt.Sprintf("echo %d.", n))
	e.await(fmt.Sprintf("turn %d ended", n), turnEnded(e.folder, from))
	var last ToolCallParams
	for _, c := range toolCalls(e.t, e.ed.Messages("")[from:], "ev__echo") {
		if c.Turn == res.Turn {
			last = c
		}
	}
	return last
}

// "Always allow this server's tools" is the user's own approval rule
// (loom.addRule {mcpServer}), kept with the command rules in the user's
// state directory: afterwards the tools of a real stdio MCP server under
// approve = "ask" run unasked; loom.rules and loom.status list it;
// removed, the next call is asked again. Nothing is written in the
// workspace (the workspace setting loom.mcp.approve is bound to the
// folder's trust and was held back in a trusted folder).
func TestMCPServerRule(t *testing.T) {
	an := &answerer{}
	e := newEnv(t, envOptions{
		script: mcpEchoScript(3),
		cfg:    loomClient,
		options: map[string]any{"mcp": map[string]any{"servers": map[string]any{
			"ev": map[string]any{"command": mcptest.Find(t).Everything, "approve": "ask"},
		}}},
		hooks: fakeeditor.Hooks{RawShowMessageRequest: an.hook},
	})
	e.await("MCP server ev ready", func(msgs []fakeeditor.Message) bool {
		for _, m := range msgs {
			if strings.Contains(string(m.Params), `MCP server \"ev\" is ready`) {
				return true
			}
		}
		return false
	})
	// Without the rule, the call is asked (and allowed once).
	an.choose = func(approvalAsked) any { return map[string]any{"title": approveAllow} }
	if c := e.echoTurn(0); c.Status != "succeeded" || an.count() != 1 {
		t.Fatalf("turn 0: ev__echo %s after %d approvals (%s %s), want succeeded after one question", c.Status, an.count(), c.Summary, c.Progress)
	}

	var res RulesResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdAddRule, RuleArgs{MCPServer: "ev"}, &res); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.AllowMCPServers, []string{"ev"}) || len(res.AllowCommands) != 0 {
		t.Errorf("rules after adding %+v", res)
	}
	var listed RulesResult
	if err := e.ed.ExecuteCommand(e.ctx, CmdRules, FolderArgs{}, &listed); err != nil || !slices.Equal(listed.AllowMCPServers, []string{"ev"}) {
		t.Errorf("loom.rules = %+v, %v", listed, err)
	}
	var st struct {
		AllowMCPServers []string `json:"allowMcpServers"`
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdStatus, FolderArgs{}, &st); err != nil || !slices.Equal(st.AllowMCPServers, []string{"ev"}) {
		t.Errorf("loom.status allowMcpServers = %v, %v", st.AllowMCPServers, err)
	}
	an.choose = func(approvalAsked) any {
		t.Error("asked under the MCP server rule")
		return map[string]any{"title": approveDeny}
	}
	if c := e.echoTurn(1); c.Status != "succeeded" || an.count() != 1 {
		t.Fatalf("turn 1: ev__echo %s after %d approvals, want succeeded unasked", c.Status, an.count())
	}

	if err := e.ed.ExecuteCommand(e.ctx, CmdRemoveRule, RuleArgs{MCPServer: "ev"}, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.AllowMCPServers) != 0 {
		t.Errorf("rules after removal %+v", res)
	}
	an.choose = func(approvalAsked) any { return map[string]any{"title": approveDeny} }
	if c := e.echoTurn(2); c.Status != "failed" || an.count() != 2 {
		t.Fatalf("turn 2: ev__echo %s after %d approvals, want failed after a second question", c.Status, an.count())
	}

	for _, bad := range []RuleArgs{{MCPServer: "a__b"}, {MCPServer: "no spaces"}, {MCPServer: "ev", Every: true}, {MCPServer: "ev", Prefix: "go"}} {
		if err := e.ed.ExecuteCommand(e.ctx, CmdAddRule, bad, nil); err == nil {
			t.Errorf("loom.addRule %+v accepted", bad)
		}
	}
	if err := e.ed.ExecuteCommand(e.ctx, CmdRemoveRule, RuleArgs{MCPServer: "ev"}, nil); err == nil {
		t.Error("loom.removeRule of a rule no longer there succeeded")
	}
	entries, _ := os.ReadDir(e.folder)
	for _, en := range entries {
		t.Errorf("the workspace holds %s", en.Name())
	}
}
