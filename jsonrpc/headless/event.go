package headless

import (
	"encoding/json"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/workspace"
	"github.com/loom-lsp/loom-lsp/workspace/diagnostics"
)

// Event is one line of the JSONL output of `loom-lsp exec`. Every event
// has a Type; the other fields depend on it (schema.json in this package
// is the JSON Schema of every event, and is published in README.md):
//
//	session_started    session_id, folder, resumed, turn (turns so far)
//	turn_started       session_id, folder, turn, prompt
//	message_delta      turn, id, text
//	reasoning_delta    turn, text (the model's reasoning, not the answer)
//	message_completed  turn, id, text (the whole message)
//	message_retracted  turn, id (the message's text is abandoned: the
//	                   request failed partway and a retry, under a new
//	                   id, answers in its place)
//	tool_started       turn, id, name, arguments (a string), args (an object),
//	                   rewritten (a second one: a PreToolUse hook rewrote
//	                   the input, arguments are what runs)
//	tool_progress      turn, id, name, elapsed_ms, message, output_line (bash)
//	tool_completed     turn, id, name, status (succeeded|failed|cancelled),
//	                   summary, output, exit_code (bash), diff (edits)
//	commit             turn, sha, files, message
//	retry_scheduled    turn, delay_ms, reason, kind (as in error)
//	error              turn, message, kind
//	info               turn, message
//	compacted          turn, summary, dropped, tokens
//	proposed_change    turn, id, path, kind, diff, hunks (--edits propose:
//	                   a change not written)
//	turn_completed     turn, outcome (done|failed|cancelled), usage,
//	                   conversation_usage
//	mode               turn, mode (agent|plan|ask): the conversation's mode
//	                   changed (--mode, an accepted plan)
//	plan               turn, plan (the todo list: [{step, status}], status
//	                   pending|in_progress|completed; empty: no list)
//	plan_proposed      turn, id, text (a plan waiting for approval; see
//	                   --plan)
//	subagent_started   turn, id (the agent call), subagent
//	subagent_update    turn, id, subagent, name, status, summary (a tool
//	                   call of the child)
//	subagent_completed turn, id, subagent (with state and usage)
//	worktree_recovered worktree (exec found an orphan worktree)
//	worktree_created   worktree (exec --worktree)
//	worktree_merged    worktree (its work brought back, or reported)
//
// Fields are only ever added. Empty fields are left out.
type Event struct {
	Type      string `json:"type"`
	SessionID string `json:"session_id,omitempty"`
	Folder    string `json:"folder,omitempty"`
	Resumed   *bool  `json:"resumed,omitempty"`
	// Sandbox, in session_started, says how commands are confined
	// (loom.status's sandbox line).
	Sandbox   string          `json:"sandbox,omitempty"`
	Turn      uint64          `json:"turn,omitempty"`
	Prompt    string          `json:"prompt,omitempty"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments string          `json:"arguments,omitempty"`
	Args      json.RawMessage `json:"args,omitempty"`
	// Rewritten marks a second tool_started: a PreToolUse hook rewrote
	// the call's input, and Arguments are what runs.
	Rewritten bool  `json:"rewritten,omitempty"`
	ElapsedMS int64 `json:"elapsed_ms,omitempty"`
	// OutputLine is a running bash command's latest output line (capped
	// at tools.ProgressLineMax bytes, secrets masked).
	OutputLine string  `json:"output_line,omitempty"`
	Status     string  `json:"status,omitempty"`
	Message    string  `json:"message,omitempty"`
	Summary    string  `json:"summary,omitempty"`
	Output     *string `json:"output,omitempty"`
	ExitCode   *int    `json:"exit_code,omitempty"`
	Diff       string  `json:"diff,omitempty"`
	SHA        string  `json:"sha,omitempty"`
	// Hook is what a hook said (hook).
	Hook *workspace.HookNote `json:"hook,omitempty"`
	// Diagnostics are a diagnostics event's new problems.
	Diagnostics []diagnostics.Diagnostic `json:"diagnostics,omitempty"`
	Files       []string                 `json:"files,omitempty"`
	// Notes are a commit's notes for the user (hooks not run, files left
	// uncommitted and why, …).
	Notes []string `json:"notes,omitempty"`
	// Changes are the files the agent's commands changed, reported and
	// not committed (command_changes).
	Changes []workspace.CommandChange `json:"changes,omitempty"`
	DelayMS int64                     `json:"delay_ms,omitempty"`
	Reason  string                    `json:"reason,omitempty"`
	Kind    string                    `json:"kind,omitempty"`
	// Dropped and Tokens tell what a compaction replaced and the
	// conversation's estimated size after it.
	Dropped int        `json:"dropped,omitempty"`
	Tokens  int64      `json:"tokens,omitempty"`
	Outcome string     `json:"outcome,omitempty"`
	Usage   *fsm.Usage `json:"usage,omitempty"`
	// ConversationUsage sums the usage of the whole conversation.
	ConversationUsage *fsm.Usage `json:"conversation_usage,omitempty"`
	// Path and Hunks are a proposed change's file and hunks.
	Path  string      `json:"path,omitempty"`
	Hunks []HunkEvent `json:"hunks,omitempty"`
	// Mode is the conversation's mode (mode).
	Mode string `json:"mode,omitempty"`
	// Plan is the todo list (plan); never left out of a plan event.
	Plan *[]fsm.PlanItem `json:"plan,omitempty"`
	// Subagent names the child conversation (subagent_started,
	// subagent_update, subagent_completed).
	Subagent *workspace.SubagentInfo `json:"subagent,omitempty"`
	// Worktree is the worktree of worktree_created, worktree_merged and
	// worktree_recovered (worktree.go).
	Worktree *WorktreeInfo `json:"worktree,omitempty"`
}

// HunkEvent is one hunk of a proposed_change: its unified diff and the
// 0-based lines [start_line, end_line) of the file it replaces.
type HunkEvent struct {
	ID        string `json:"id"`
	Diff      string `json:"diff"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
}

// ErrorEvent returns the JSONL error event of a failure before any turn
// (a usage or configuration error), kind "usage" or "config".
func ErrorEvent(kind, message string) []byte {
	b, _ := json.Marshal(Event{Type: "error", Kind: kind, Message: message})
	return append(b, '\n')
}

// toolEvent maps a tool note to its JSONL event; ok is false for notes
// that are not sent (a call still streaming, the generic "running"
// progress: tool_progress carries the elapsed time instead).
func toolEvent(n workspace.ToolUpdated) (ev Event, ok bool) {
	t := n.Call
	ev = Event{Turn: n.Turn, ID: t.CallID, Name: t.Name}
	switch t.Status {
	case fsm.ToolPending:
		ev.Type, ev.Arguments, ev.Rewritten = "tool_started", t.Arguments, t.Rewritten
		if json.Valid([]byte(t.Arguments)) {
			ev.Args = json.RawMessage(t.Arguments)
		}
	case fsm.ToolSucceeded, fsm.ToolFailed, fsm.ToolCancelled:
		ev.Type, ev.Status, ev.Summary, ev.Diff = "tool_completed", string(t.Status), t.Detail, t.Diff
		if t.Status != fsm.ToolCancelled {
			out := t.Output
			ev.Output, ev.ExitCode = &out, t.ExitCode
		}
	default:
		return ev, false
	}
	return ev, true
}
