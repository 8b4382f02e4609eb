package workspace

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"

	"github.com/loom-lsp/loom-lsp/fsm"

	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/tools/sandbox"
	"github.com/loom-lsp/loom-lsp/workspace/toolcall"
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
		Root:    s.dir,
		Write:   cfg.Tools.SandboxWrite,
		Hide:    cfg.Tools.SandboxHide,
		Unhide:  cfg.Tools.SandboxUnhide,
		Sockets: cfg.Tools.SandboxSockets,
		Network: cfg.Tools.Network.Mode,
		Allow:   cfg.Tools.Network.Allow,

		ReadOnlyTrees: s.host.opts.ReadOnlyTrees,
	}
	if dir, err := s.host.stateDir(); err == nil {
		p.StateDir = dir
	}
	// A folder inside a git directory (a client's cwd of /repo/.git) is
	// git's hooks and configuration: commands never write it.
	p.ReadOnlyRoot = tools.InGitDirectory(s.dir)
	if s.sandbox != nil && reflect.DeepEqual(s.sandbox.Policy(), p) {
		return s.sandbox
	}
	return sandbox.New(p)
}

// sandboxStatus is loom.status's line about the sandbox the
// conversation's commands run in.
func (s *settings) sandboxStatus() string {
	return s.env.Sandbox.Describe()
}

// Escalate offers to rerun a command the sandbox blocked outside it,
// under tools.bash = "ask" only (execute set out.escalate): the user is
// asked once, with the reason, without the worktree lock (the folder's
// other conversations go on meanwhile); the rerun takes it again
// (writeLock). The rerun's result replaces the blocked one and says so;
// the two runs' changed files are reported as one command's. Under
// "allow" nobody is asked (a command that runs unasked never leaves the
// sandbox), and a client that cannot ask leaves the blocked result.
func (r callRun) Escalate(ctx context.Context, c fsm.ToolCall, out toolcall.Outcome, writeLock bool) toolcall.Outcome {
	s, b := r.s, r.b
	blocked := out.Escalate
	out.Escalate = nil
	var args struct {
		Command string `json:"command"`
	}
	_ = json.Unmarshal([]byte(c.Arguments), &args)
	ok, err := s.out.approve(ctx, Approval{
		Folder: s.folder.dir, Turn: b.turn, Tool: "bash outside the sandbox", CallID: c.ID,
		Detail: args.Command + "\n\nThe sandbox blocked it: " + blocked.Blocked + ". Run it again with your full permissions?",
	}, b.approvalTimeout)
	switch {
	case ctx.Err() != nil:
		return toolcall.Outcome{Result: "tool error: cancelled", IsError: true}
	case err != nil:
		// No answer (timeout) or no way to ask: the blocked result stands.
		out.Result += "Nobody approved running it outside the sandbox (" + err.Error() + ").\n"
		return out
	case !ok:
		out.Result += "The user declined to run it outside the sandbox.\n"
		return out
	}
	if !r.Approved(ctx, fsm.ApprovalDecided{Turn: b.turn, CallID: c.ID, Approved: true}) {
		if ctx.Err() != nil {
			return toolcall.Outcome{Result: "tool error: cancelled", IsError: true}
		}
		return out
	}
	again := r.executeLocked(ctx, c, writeLock, true)
	if again.IsError && strings.HasPrefix(again.Result, "tool error: ") {
		return again
	}
	again.Result = "The sandbox blocked the command (" + blocked.Blocked + "); the user approved running it again outside the sandbox, with their full permissions:\n" + again.Result
	again.Summary += " (outside the sandbox)"
	first, _ := out.Command.(*commandRun)
	second, _ := again.Command.(*commandRun)
	again.Command = mergeRuns(first, second)
	return again
}

// mergeRuns reports two runs of one command as one: the files either
// changed, each as it was before the first.
func mergeRuns(first, second *commandRun) *commandRun {
	if first == nil || second == nil {
		if first == nil {
			return second
		}
		return first
	}
	m := &commandRun{command: second.command, scanned: first.scanned || second.scanned, before: map[string]preImage{}}
	for _, r := range []*commandRun{second, first} { // the first run's pre-images win
		for p, pre := range r.before {
			m.before[p] = pre
		}
	}
	seen := map[string]bool{}
	for _, p := range append(append([]string(nil), first.paths...), second.paths...) {
		if !seen[p] {
			seen[p] = true
			m.paths = append(m.paths, p)
		}
	}
	for _, p := range append(append([]string(nil), first.claimed...), second.claimed...) {
		if !seen[p] {
			seen[p] = true
			m.claimed = append(m.claimed, p)
		}
	}
	return m
}
