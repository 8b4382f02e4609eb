package workspace

import (
	"github.com/loom-lsp/loom-lsp/config"
	"github.com/loom-lsp/loom-lsp/fsm"
)

// Commands in the read-only modes (tools.plan_commands = "read-only").
// The machine lets bash calls through in plan and ask modes only when
// its spec says they run read-only (fsm.ToolSpec.RunsReadOnly), which
// is set only where the sandbox really runs here; such a batch
// (fsm.ExecuteTools.ReadOnly) runs its commands in the sandbox with the
// whole workspace read-only, under tools.bash's approvals as ever, never
// escalated outside the sandbox, and not watched for changed files (it
// can change none).

// toolSpecs is the machine's view of the tools: bash runs read-only in
// the read-only modes when tools.plan_commands says so, commands are not
// denied, and the sandbox is active.
func (s *settings) toolSpecs() map[string]fsm.ToolSpec {
	specs := s.registry.Specs()
	if spec, ok := specs["bash"]; ok && s.cfg.Tools.PlanCommands == config.PlanCommandsReadOnly &&
		s.cfg.Tools.Bash != config.PolicyDeny && s.env.Sandbox.Active() {
		spec.RunsReadOnly = true
		specs["bash"] = spec
	}
	return specs
}

// readOnlyBatch confines a read-only batch's commands: the sandbox with
// the workspace read-only.
func readOnlyBatch(b *batchRun) {
	b.readOnly = true
	b.env.Sandbox = b.env.Sandbox.ReadOnly()
}
