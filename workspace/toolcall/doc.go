// Package toolcall is the tool call as a value: what a conversation's
// policy lets a call do, decided by a pure function, and (as it moves
// here from package workspace) the batch that runs the calls of one
// model response, each through its stages in one visible order.
//
// # The stages of a call
//
//  1. PreToolUse hooks: they may deny the call, rewrite its input or ask
//     the user (workspace: preToolHooks).
//  2. Policy: Decide(call, policy) says Allow, Approve (an approval rule
//     covers it), Ask (the user decides) or Refuse (with the result the
//     model reads). It is pure: no I/O but the approval rules' reading of
//     a command's paths, no asking, no stepping; the asking is the
//     approver's (workspace: admit, approveBash, approveMCP).
//  3. Run: the tool runs in the sandbox; a command runs inside a
//     command window that attributes the files it changed; a command the
//     sandbox blocked may be escalated (asked again, run outside).
//  4. Review or apply: an edit is proposed (tools.edits = "review") or
//     applied through the editor or the one writer.
//  5. Diagnostics: what the batch's edits introduced is added to the
//     result.
//  6. PostToolUse hooks, then ToolCompleted is stepped on the owner
//     goroutine.
//
// # The policy
//
// Policy is a value: the mode, the batch's read-only flag and sandbox,
// tools.bash, the MCP servers' approve policies, the folder's approval
// rules and allowed servers, trust, and protected names beyond loom's
// own. A conversation copies it when a batch starts (the approval rules
// are read afresh for each call: an answer earlier in the batch may have
// added one). A child conversation (a subagent) is given
// parent.Narrow(asked) — or parent.Inherit() — which is never wider than
// its parent in any part: the more read-only mode, the stricter
// tools.bash and server policy, only the rules and servers the parent's
// cover, trust only if both, both lists of protected names.
//
//	p := parentPolicy.Narrow(toolcall.Policy{Mode: fsm.ModePlan})
//	switch d := toolcall.Decide(call, p); d.Verdict {
//	case toolcall.Refuse: // d.Why is the tool result
//	case toolcall.Ask:    // ask the user (d.Command, d.Exact, d.Prefix)
//	case toolcall.Approve: // step fsm.ApprovalDecided{Approved: true, Why: d.Why}
//	case toolcall.Allow:  // run it (mark it running unless d.Approved)
//	}
//
// # How to add a tool
//
// Write it in package tools (one file, a typed params struct, its
// Mutating flag); the registry offers it and the batch runs it. Only a
// tool that needs a decision of its own (as bash and MCP tools do) adds
// a case to Decide — a pure function of the Call and Policy — with rows
// in TestDecide, and a field to Policy if the decision needs one, with
// its narrowing in Narrow and a row in TestNarrowNeverWidens.
//
// # How to add a stage
//
// A stage is a step of the call between two of the above, in
// workspace/toolrun.go's runHooked, which reads top to bottom in the
// order above. A stage that decides is a pure function here, tested by
// table; one that acts reaches the world only through the conversation's
// ports (approver, editor, writer, hooks, stepper), never by reaching
// into the conversation's fields.
package toolcall
