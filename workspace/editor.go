package workspace

import (
	"context"
	"errors"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
	"github.com/loom-lsp/loom-lsp/tools"
	"github.com/loom-lsp/loom-lsp/tools/cmdrules"
	"github.com/loom-lsp/loom-lsp/workspace/changes"
)

// What the editor is shown of a review and answers (the proposals'
// bookkeeping is changes.Review: Conversation.Review).

// ErrNoProposal is wrapped by a decision's error when no proposal of that
// id waits for the user.
var ErrNoProposal = changes.ErrNoProposal

// ProposalNote is a proposal waiting for the user's review (NoteProposal).
type ProposalNote = changes.ProposalNote

// ReviewDraft is what the user decided so far on a proposal, and the
// comment typed, before the decision is sent.
type ReviewDraft = changes.ReviewDraft

// ReviewResult is what a review decision did.
type ReviewResult = changes.ReviewResult

// AllHunks, as the only element of a decision's accept or reject, stands
// for every hunk of the proposal.
const AllHunks = changes.AllHunks

// ErrUnsupported is returned by an Editor method the client cannot do
// (no applyEdit capability, no loom/saveDocuments, no way to ask). The
// session then falls back: edits go to disk, approval is denied, unsaved
// documents are reported.
var ErrUnsupported = errors.New("not supported by this client")

// CannotAskError is an ErrUnsupported from Editor.Approve that says, in
// the front end's words, why no one can be asked and how to let the
// agent run commands there (a headless run's flag, an editor's setting).
type CannotAskError struct{ Why string }

func (e *CannotAskError) Error() string { return e.Why }

// Unwrap makes a CannotAskError an ErrUnsupported.
func (e *CannotAskError) Unwrap() error { return ErrUnsupported }

// ErrEditRejected is wrapped by Editor.ApplyEdit when the client refused
// the edit, typically because the user typed in the document meanwhile.
var ErrEditRejected = errors.New("the editor rejected the edit")

// Editor is a session's only way out to the user. The LSP, ACP and
// headless front ends implement it. One Editor serves every session of a
// Host: each Notification names its folder.
type Editor interface {
	// Notify shows something to the user. It is called from the session's
	// owner goroutine, in order, and must not block for long.
	Notify(n Notification)
	// ApplyEdit applies an edit to a document open in the editor, checking
	// its version. It returns ErrUnsupported when the client cannot apply
	// edits, or an error wrapping ErrEditRejected when it refused.
	ApplyEdit(ctx context.Context, e DocumentEdit) error
	// Approve asks the user to allow an action (a bash command under the
	// "ask" policy). It returns ErrUnsupported when there is no one to ask.
	Approve(ctx context.Context, a Approval) (bool, error)
	// SaveDocuments asks the client to save the given open documents
	// (absolute paths) and returns those it saved, or ErrUnsupported.
	SaveDocuments(ctx context.Context, paths []string) ([]string, error)
}

// DocumentStore is an optional interface of an Editor whose client holds
// the files the user works on and reads and writes them for the agent
// (ACP's fs/read_text_file and fs/write_text_file). When the Editor has
// it, the tools that work on one named file (read_file, edit_file,
// write_file) read a file that is not open in the overlay through
// ReadDocument, so the model sees the user's unsaved text, and edits are
// written through WriteDocument instead of to disk. Staleness checks and
// the post-tool hook work on those texts as on any other.
type DocumentStore interface {
	// ReadDocument returns the text of the file at path (absolute, inside
	// by.Folder) as the user sees it, unsaved changes included. It returns
	// ErrUnsupported when the client cannot read files; the disk is read
	// instead.
	ReadDocument(ctx context.Context, by DocumentCaller, path string) (string, error)
	// WriteDocument replaces the text of the file at path (absolute,
	// inside by.Folder), creating it if needed. It returns ErrUnsupported
	// when the client cannot write files; the disk is written instead.
	WriteDocument(ctx context.Context, by DocumentCaller, path, text string) error
}

// ReviewPanel is an Editor that shows several proposals at once, each
// decided on its own in any order (a review panel, as in loom's VS Code
// extension): the edits of a tool batch are then proposed together
// rather than one after the other's decision.
type ReviewPanel interface {
	// ReviewsTogether reports whether the client shows proposals side by
	// side now.
	ReviewsTogether() bool
}

// DocumentCaller names who reads or writes a document through the
// editor: the conversation and the tool call that cause it. The
// conversation has notified that call (NoteTool, status pending) before
// the request is made, so a front end that sends both on one connection
// can send the call first.
type DocumentCaller struct {
	Folder       string
	Conversation string
	// CallID is the tool call; "" for none.
	CallID string
}

// DocumentEdit is an edit to an open document: apply Edits to the text at
// Version, giving NewText.
type DocumentEdit struct {
	Path    string
	Version int32
	Edits   []tools.TextEdit
	NewText string
}

// Approval is a question to the user.
type Approval struct {
	Folder string
	// Conversation is the id of the conversation that asks.
	Conversation string
	Turn         uint64
	Tool         string
	// CallID is the tool call that asks.
	CallID string
	// Detail is what would run, e.g. the bash command, or an MCP tool's
	// server, name and arguments.
	Detail string
	// Server is the MCP server of an MCP tool call; "" for our own tools.
	Server string
	// Rewritten, when set, is what the model asked for (a command, else
	// the arguments): a PreToolUse hook rewrote the call, and Detail is
	// what runs. Front ends say so.
	Rewritten string
	// Always, when not nil, lets the editor offer "Always allow" (this
	// tool, for the rest of the session): it calls Always when the user
	// picks it, and returns true.
	Always func()
	// Host, for a fetch, is the URL's host: Always then saves it for the
	// folder (the fetch tool reaches it unasked from then on), and front
	// ends say so ("Always allow fetches from host in this folder").
	Host string
	// Exact and Prefix are the approval rules the editor may offer for a
	// bash command ("Always allow `npm test`", "Always allow commands
	// starting with `go test`"); nil when no rule could ever match the
	// command ($(…), eval, sh -c, …) or, for Prefix, when its commands
	// share no prefix.
	Exact, Prefix *cmdrules.Rule
	// Remember, set with Exact, saves the rule the user picked (Exact,
	// Prefix, or Prefix as the user edited it) for the folder, and says
	// so. It returns an error for a rule that could never match; the
	// command itself still runs once, as the user allowed it.
	Remember func(cmdrules.Rule) error
	// Subagent, when set, names the child conversation (a subagent)
	// that asks: Conversation is then the top conversation, whose client
	// asks the user. Front ends say who asks (SubagentInfo.Words).
	Subagent *SubagentInfo
}

// NotificationKind says what a Notification reports.
type NotificationKind string

// The notification kinds, with the fields each one sets.
const (
	// NoteTurnStarted: Text is the prompt.
	NoteTurnStarted NotificationKind = "turn_started"
	// NoteText: Text is a piece of streamed assistant text.
	NoteText NotificationKind = "text"
	// NoteReasoning: Text is a piece of the model's streamed reasoning,
	// to show apart from the answer (it is not part of it, and is never
	// sent back to the model).
	NoteReasoning NotificationKind = "reasoning"
	// NoteRetract: the assistant text shown since the current model
	// request began (the turn's last block of text) is abandoned: the
	// request failed partway and a retry or a resend answers in its
	// place. Front ends drop that text from view; Text is unused.
	NoteRetract NotificationKind = "retract"
	// NoteTool: Tool is a tool call's new status.
	NoteTool NotificationKind = "tool"
	// NoteState: State is the machine's new state name.
	NoteState NotificationKind = "state"
	// NoteError: Text is an error message for the user; ErrorKind says
	// what failed when the model did.
	NoteError NotificationKind = "error"
	// NoteRetry: Delay and Text (the reason) of a scheduled retry; show it
	// with RetryWords.
	NoteRetry NotificationKind = "retry"
	// NoteCommit: Commit is what the post-tool hook committed.
	NoteCommit NotificationKind = "commit"
	// NoteCommandChanges: Changes are files the agent's commands
	// changed, reported and not committed: the user keeps (commits) or
	// discards them.
	NoteCommandChanges NotificationKind = "command_changes"
	// NoteInfo: Text is something worth telling that is not an error
	// (the hook did nothing, the config was reloaded, …).
	NoteInfo NotificationKind = "info"
	// NoteTurnEnded: Outcome and Usage of the turn, and TotalUsage of
	// the conversation so far.
	NoteTurnEnded NotificationKind = "turn_ended"
	// NoteCompacted: the conversation was compacted; Text is the
	// summary, Compaction what it replaced.
	NoteCompacted NotificationKind = "compacted"
	// NoteProposal: Proposal is a change waiting for the user's review
	// (tools.edits = "review"); answer it with Conversation.Review.
	NoteProposal NotificationKind = "proposal"
	// NoteRewound: the conversation was cut back to before turn Turn,
	// whose prompt is Text (back to the input for editing); with Redone,
	// a redo made it whole again.
	NoteRewound NotificationKind = "rewound"
	// NoteDiagnostics: Diagnostics, what a batch of edits did to its
	// files' problems (sent before the call that reports it finishes).
	NoteDiagnostics NotificationKind = "diagnostics"
	// NoteHook: Hook, what an agent hook said (ran, decided, failed, or
	// was held back).
	NoteHook NotificationKind = "hook"
	// NoteSubagent: Subagent, a child conversation of this one started
	// (state running) or ended (completed, failed, cancelled), with its
	// usage at its end.
	NoteSubagent NotificationKind = "subagent"
)

// RetractWords is how front ends without a way to drop text say that
// the partial answer shown above was abandoned for a retry.
const RetractWords = "(retrying; the partial answer above is discarded)"

// CompactionNote tells what a compaction did.
type CompactionNote struct {
	// Dropped counts the messages the summary replaced.
	Dropped int
	// Tokens estimates the conversation after it.
	Tokens int64
}

// Notification is one thing a conversation, or a folder, reports to the
// editor.
type Notification struct {
	Folder string
	// Conversation is the id of the conversation that reports it; "" for
	// a notice of the folder (its configuration, its MCP servers), which
	// concerns all of its conversations.
	Conversation string
	Turn         uint64
	Kind         NotificationKind
	Text         string
	Tool         *ToolNote
	State        string
	Delay        time.Duration
	Commit       *CommitNote
	Outcome      fsm.TurnOutcome
	Usage        fsm.Usage
	// TotalUsage is the conversation's usage (NoteTurnEnded, and
	// NoteState when the session is back to waiting), since it began or
	// was last reset.
	TotalUsage *fsm.Usage
	// ErrorKind classifies a NoteError that came from the model, and the
	// error a NoteRetry retries.
	ErrorKind fsm.ErrorKind
	// Trust marks the NoteError whose Text is the notice about a folder's
	// ignored settings (config.Config.TrustNotice), for a front end that
	// shows it in the conversation.
	Trust bool
	// Compaction is set on NoteCompacted.
	Compaction *CompactionNote
	// Changes is set on NoteCommandChanges.
	Changes []CommandChange
	// Proposal is set on NoteProposal.
	Proposal *ProposalNote
	// Diagnostics is set on NoteDiagnostics.
	Diagnostics *DiagnosticsNote
	// Hook is set on NoteHook.
	Hook *HookNote
	// Redone is set on a NoteRewound that a redo undid.
	Redone bool
	// Plan is the todo list (NotePlan).
	Plan []fsm.PlanItem
	// Context is how full the model's context is, on NoteState (after
	// each model response and at a turn's end).
	Context *ContextUse
	// Subagent is set on NoteSubagent, and on every notification of a
	// child conversation (then Conversation is the child's id): a front
	// end that does not show children drops those.
	Subagent *SubagentInfo
	// Visible marks a NoteInfo the user must see (the auto-commit's
	// notes): a client that shows information only in a log shows this
	// one as a message.
	Visible bool
}

// UsageStatus is the token usage a status reports: of the last (or
// current) turn, and of the whole conversation since it began or was last
// reset (compactions included). Cached and reasoning tokens are left out
// when the server never reported them.
type UsageStatus struct {
	Turn         fsm.Usage `json:"turn"`
	Conversation fsm.Usage `json:"conversation"`
}

// ToolNote is the status of one tool call.
type ToolNote struct {
	CallID    string
	Name      string
	Status    fsm.ToolStatus
	Detail    string
	Arguments string
	// Rewritten marks a pending call shown again because a PreToolUse
	// hook rewrote its input: Arguments are what runs, not what the
	// model asked for.
	Rewritten bool
	// Diff is the unified diff of an edit, once it is applied.
	Diff string
	// Output is the tool's whole result, as the model reads it (capped
	// the same way), once the call has finished (the other fields are
	// one-line summaries).
	Output string
	// ExitCode is a finished bash command's exit status; nil otherwise.
	ExitCode *int
	// Edit is the applied edit's file and full texts, with Diff.
	Edit *EditNote
}

// EditNote is what an applied edit changed: the file (absolute path)
// and its whole text before and after. OldText is empty for a new file.
type EditNote struct {
	Path             string
	OldText, NewText string
	Created          bool
}

// CommitNote describes an auto-commit.
type CommitNote struct {
	SHA     string
	Files   []string
	Message string
	// Notes are what the user must know besides: hooks not run and why,
	// staged changes kept or merged, files left uncommitted and why,
	// what is left to do. Each is a sentence for people.
	Notes []string
}
