// Package toolcall is the tool call as a value: what a conversation's
// policy lets a call do, decided by a pure function (Decide), and the
// batch that runs the calls of one model response (Batch), each through
// its stages in one visible order (Batch.run), acting only through
// narrow ports (Ports). Package workspace builds a conversation's batch
// (Conversation.newBatch, workspace/toolrun.go) and serves the ports
// (its callRun); it imports this package, never the other way.
//
// # The stages of a call
//
//  1. PreToolUse hooks (Hooks.PreToolUse): they may deny the call,
//     rewrite its input or ask the user.
//  2. Policy (Batch.admit): Decide(call, policy) says Allow, Approve (an
//     approval rule covers it), Ask (the user decides: Approver) or
//     Refuse (with the result the model reads); then the call is marked
//     running (Stepper). Decide is pure: no asking, no stepping, no I/O
//     but the approval rules' reading of a command's paths.
//  3. Run (Runner.Run): the tool runs in the sandbox; a command inside a
//     command window that attributes the files it changed; an edit is
//     applied through the editor or the one writer (or, under review,
//     computed only). A command the sandbox blocked may be escalated
//     (Runner.Escalate: asked again, run outside).
//  4. Review (Reviewer.Review): an edit computed under review is
//     proposed, a command's changes join the review.
//  5. Diagnostics (Diagnostics.AfterCall): what the batch's edits
//     introduced is added to the result of its last edit.
//  6. PostToolUse hooks (Hooks.PostToolUse), then the completion
//     (Stepper.Complete: ToolCompleted on the owner goroutine).
//
// Batch.Run orders the calls: consecutive read-only calls in parallel,
// each mutating call alone, in request order; under review with
// Together, edits of different files are proposed together.
//
// # The ports
//
//   - Hooks: PreToolUse, PostToolUse.
//   - Approver: Tool (what the registry says), Rules (the approval rules
//     as they are now), AskCommand, AskServer.
//   - Stepper: Running, Approved, Complete — the only way to the machine.
//   - Runner: Run, Escalate — the sandbox, the command window, the
//     editor and the writer.
//   - Reviewer: Review, Settle.
//   - Diagnostics: Prime, BeforeEdit, AfterCall.
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
// Batch.run, which reads top to bottom in the order above. A stage that
// decides is a pure function here, tested by table (as Decide). One that
// acts gets a port: a small interface in batch.go, a field of Ports, and
// its implementation on workspace's callRun (workspace/toolrun.go) — a
// test of the batch can serve it with a fake. It never reaches into the
// conversation's fields, and it steps the machine only through Stepper.
package toolcall
