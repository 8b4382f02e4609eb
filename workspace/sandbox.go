package workspace

import (
	"context"
	"encoding/json"
	"reflect"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/tools"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/tools/sandbox"
)

// sandboxFor returns the sandbox commands run in under cfg: nil when
// tools.sandbox = "off". The session's current sandbox is kept when the
// policy did not change, so that what it says once (no Landlock here)
// is said once, and MCP servers are not restarted by a reload.
func (s *Folder) sandboxFor(cfg config.Config) *sandbox.Sandbox {
	if cfg.Tools.Sandbox == config.SandboxOff {
		return nil
	}
	p := sandbox.Policy{
		Root:    s.folder,
		Write:   cfg.Tools.SandboxWrite,
		Hide:    cfg.Tools.SandboxHide,
		Network: cfg.Tools.Network.Mode,
		Allow:   cfg.Tools.Network.Allow,
	}
	if s.sandbox != nil && reflect.DeepEqual(s.sandbox.Policy(), p) {
		return s.sandbox
	}
	return sandbox.New(p)
}

// sandboxStatus is loom.status's line about the sandbox the
// conversation's commands run in.
func (s *Session) sandboxStatus() string {
	return s.env.Sandbox.Describe()
}

// escalate offers to rerun a command the sandbox blocked outside it,
// under tools.bash = "ask" only: the user is asked once, with the
// reason; the rerun's result replaces the blocked one and says so. Under
// "allow" nobody is asked (a command that runs unasked never leaves the
// sandbox), and a client that cannot ask leaves the blocked result.
func (s *Session) escalate(ctx context.Context, b *batchRun, c fsm.ToolCall, tool tools.Tool, env tools.Env, res tools.Result) (tools.Result, error) {
	if b.bash != config.PolicyAsk || env.Sandbox == nil {
		return res, nil
	}
	var args struct {
		Command string `json:"command"`
	}
	_ = json.Unmarshal([]byte(c.Arguments), &args)
	ok, err := s.approve(ctx, Approval{
		Folder: s.folder, Turn: b.turn, Tool: "bash outside the sandbox", CallID: c.ID,
		Detail: args.Command + "\n\nThe sandbox blocked it: " + res.Blocked + ". Run it again with your full permissions?",
	}, b.approvalTimeout)
	switch {
	case ctx.Err() != nil:
		return res, ctx.Err()
	case err != nil:
		// No answer (timeout) or no way to ask: the blocked result stands.
		res.Text += "Nobody approved running it outside the sandbox (" + err.Error() + ").\n"
		return res, nil
	case !ok:
		res.Text += "The user declined to run it outside the sandbox.\n"
		return res, nil
	}
	if !s.decideApproval(ctx, fsm.ApprovalDecided{Turn: b.turn, CallID: c.ID, Approved: true}) {
		return res, ctx.Err()
	}
	env.Sandbox = nil
	again, err := tool.Run(ctx, &env, json.RawMessage(c.Arguments))
	if err != nil {
		return again, err
	}
	again.Text = "The sandbox blocked the command (" + res.Blocked + "); the user approved running it again outside the sandbox, with their full permissions:\n" + again.Text
	again.Summary += " (outside the sandbox)"
	return again, nil
}
