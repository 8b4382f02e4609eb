package workspace

import (
	"strings"
	"time"

	"github.com/loom-lsp/loom-lsp/fsm"
)

// Note is one thing a conversation, or a folder, reports to the editor,
// as a value of its own type: a closed set (like fsm.Action), one type
// per NotificationKind, each with only the fields its kind sets. A front
// end hands a Note to its NoteHandler with Deliver, and handles each type
// in a method of its own; a new kind is a new type and a new method of
// NoteHandler, which every front end must then implement to compile.
//
// Notification.Typed turns the notification a conversation sends into
// its Note.
type Note interface {
	// Source is who reports it: the folder, the conversation, the turn.
	Source() NoteSource
	deliver(h NoteHandler)
}

// NoteHandler is a front end's handling of each type of Note. Its
// methods run in the order the notes were sent, on the goroutine that
// delivers them.
type NoteHandler interface {
	TurnStarted(TurnStarted)
	TextDelta(TextDelta)
	ReasoningDelta(ReasoningDelta)
	TextRetracted(TextRetracted)
	ToolUpdated(ToolUpdated)
	StateChanged(StateChanged)
	ErrorReported(ErrorReported)
	RetryScheduled(RetryScheduled)
	Committed(Committed)
	CommandsChanged(CommandsChanged)
	InfoReported(InfoReported)
	TurnEnded(TurnEnded)
	Compacted(Compacted)
	ChangeProposed(ChangeProposed)
	Rewound(Rewound)
	DiagnosticsReported(DiagnosticsReported)
	HookReported(HookReported)
	SubagentChanged(SubagentChanged)
	ModeChanged(ModeChanged)
	PlanChanged(PlanChanged)
	PlanProposed(PlanProposed)
	TitleChanged(TitleChanged)
}

// Deliver hands n to h's method for n's type; a nil n is dropped.
func Deliver(n Note, h NoteHandler) {
	if n != nil {
		n.deliver(h)
	}
}

// NoteSource says who reports a Note.
type NoteSource struct {
	Folder string
	// Conversation is the id of the conversation that reports it; "" for
	// a notice of the folder (its configuration, its MCP servers), which
	// concerns all of its conversations.
	Conversation string
	// Turn is the conversation's current (or last) turn; 0 for what the
	// session said outside the machine's turns.
	Turn uint64
	// Subagent is set on every note of a child conversation (then
	// Conversation is the child's id): a front end that does not show
	// children drops those. On SubagentChanged it is the child itself.
	Subagent *SubagentInfo
}

// Source implements Note.
func (s NoteSource) Source() NoteSource { return s }

// TurnStarted: a turn began with Prompt (NoteTurnStarted).
type TurnStarted struct {
	NoteSource
	Prompt string
}

// TextDelta is a piece of streamed assistant text (NoteText).
type TextDelta struct {
	NoteSource
	Text string
}

// ReasoningDelta is a piece of the model's streamed reasoning, to show
// apart from the answer (NoteReasoning).
type ReasoningDelta struct {
	NoteSource
	Text string
}

// TextRetracted: the assistant text shown since the current model
// request began is abandoned; a retry answers in its place (NoteRetract).
// Front ends without a way to drop text say RetractWords.
type TextRetracted struct{ NoteSource }

// ToolUpdated is a tool call's new status (NoteTool); Call is never nil.
type ToolUpdated struct {
	NoteSource
	Call *ToolNote
}

// StateChanged is the machine's new state (NoteState).
type StateChanged struct {
	NoteSource
	State string
	// Usage and TotalUsage are the last turn's and the conversation's
	// usage; TotalUsage is nil but when the session is back to waiting.
	Usage      fsm.Usage
	TotalUsage *fsm.Usage
	// Context is how full the model's context is, after each model
	// response and at a turn's end; nil otherwise.
	Context *ContextUse
}

// ErrorReported is an error message for the user (NoteError).
type ErrorReported struct {
	NoteSource
	Text string
	// Kind says what failed when the model (or the machine) did: the
	// turn's own error; "" for the session's other errors.
	Kind fsm.ErrorKind
	// Trust marks the notice about a folder's ignored settings
	// (config.Config.TrustNotice), which the user answers by trusting.
	Trust bool
	// Visible marks an error the user must see even in a client that
	// shows the session's news in a log.
	Visible bool
}

// NotRun reports whether the error is the notice of a command refused
// because no one could approve it (NotRunWords).
func (e ErrorReported) NotRun() bool { return strings.HasPrefix(e.Text, NotRunWords) }

// RetryScheduled: the model request failed with Reason and is retried
// after Delay (NoteRetry); show it with Words.
type RetryScheduled struct {
	NoteSource
	Delay  time.Duration
	Reason string
	Kind   fsm.ErrorKind
}

// Words says the retry for people.
func (r RetryScheduled) Words() string { return RetryWords(r.Delay, r.Reason) }

// Committed is what the post-tool hook committed (NoteCommit); Commit is
// never nil.
type Committed struct {
	NoteSource
	Commit *CommitNote
}

// CommandsChanged are files the agent's commands changed, reported and
// not committed: the user keeps (commits) or discards them
// (NoteCommandChanges).
type CommandsChanged struct {
	NoteSource
	Changes []CommandChange
}

// InfoReported is something worth telling that is not an error
// (NoteInfo).
type InfoReported struct {
	NoteSource
	Text string
	// Visible marks what the user must see (the auto-commit's notes): a
	// client that shows information only in a log shows this one as a
	// message.
	Visible bool
}

// TurnEnded says how a turn ended and what it used (NoteTurnEnded).
type TurnEnded struct {
	NoteSource
	Outcome fsm.TurnOutcome
	Usage   fsm.Usage
	// TotalUsage is the conversation's usage so far.
	TotalUsage *fsm.Usage
}

// Compacted: the conversation was compacted into Summary (NoteCompacted).
type Compacted struct {
	NoteSource
	Summary string
	// Compaction is what it replaced; nil when unknown.
	Compaction *CompactionNote
}

// ChangeProposed is a change waiting for the user's review
// (NoteProposal); answer it with Conversation.Review.
type ChangeProposed struct {
	NoteSource
	Proposal ProposalNote
}

// Rewound: the conversation was cut back to before Turn, whose Prompt
// goes back to the input; with Redone, a redo made it whole again
// (NoteRewound).
type Rewound struct {
	NoteSource
	Prompt string
	Redone bool
}

// DiagnosticsReported is what a batch of edits did to its files'
// problems (NoteDiagnostics); Diagnostics is never nil.
type DiagnosticsReported struct {
	NoteSource
	Diagnostics *DiagnosticsNote
}

// HookReported is what an agent hook said (NoteHook); Hook is never nil.
type HookReported struct {
	NoteSource
	Hook *HookNote
}

// SubagentChanged: a child conversation of this one started (state
// running) or ended (completed, failed, cancelled), with its usage at its
// end (NoteSubagent). The child is Source().Subagent, never nil.
type SubagentChanged struct{ NoteSource }

// ModeChanged is the conversation's new mode (NoteMode).
type ModeChanged struct {
	NoteSource
	Mode fsm.Mode
}

// PlanChanged is the todo list as it is now, empty for none (NotePlan).
type PlanChanged struct {
	NoteSource
	Plan []fsm.PlanItem
}

// PlanProposed is a plan the model proposes, waiting for the user's
// decision (Conversation.DecidePlan); CallID names the call
// (NotePlanProposal).
type PlanProposed struct {
	NoteSource
	Plan   string
	CallID string
}

// TitleChanged is the conversation's title (NoteTitle).
type TitleChanged struct {
	NoteSource
	Title string
}

func (n TurnStarted) deliver(h NoteHandler)         { h.TurnStarted(n) }
func (n TextDelta) deliver(h NoteHandler)           { h.TextDelta(n) }
func (n ReasoningDelta) deliver(h NoteHandler)      { h.ReasoningDelta(n) }
func (n TextRetracted) deliver(h NoteHandler)       { h.TextRetracted(n) }
func (n ToolUpdated) deliver(h NoteHandler)         { h.ToolUpdated(n) }
func (n StateChanged) deliver(h NoteHandler)        { h.StateChanged(n) }
func (n ErrorReported) deliver(h NoteHandler)       { h.ErrorReported(n) }
func (n RetryScheduled) deliver(h NoteHandler)      { h.RetryScheduled(n) }
func (n Committed) deliver(h NoteHandler)           { h.Committed(n) }
func (n CommandsChanged) deliver(h NoteHandler)     { h.CommandsChanged(n) }
func (n InfoReported) deliver(h NoteHandler)        { h.InfoReported(n) }
func (n TurnEnded) deliver(h NoteHandler)           { h.TurnEnded(n) }
func (n Compacted) deliver(h NoteHandler)           { h.Compacted(n) }
func (n ChangeProposed) deliver(h NoteHandler)      { h.ChangeProposed(n) }
func (n Rewound) deliver(h NoteHandler)             { h.Rewound(n) }
func (n DiagnosticsReported) deliver(h NoteHandler) { h.DiagnosticsReported(n) }
func (n HookReported) deliver(h NoteHandler)        { h.HookReported(n) }
func (n SubagentChanged) deliver(h NoteHandler)     { h.SubagentChanged(n) }
func (n ModeChanged) deliver(h NoteHandler)         { h.ModeChanged(n) }
func (n PlanChanged) deliver(h NoteHandler)         { h.PlanChanged(n) }
func (n PlanProposed) deliver(h NoteHandler)        { h.PlanProposed(n) }
func (n TitleChanged) deliver(h NoteHandler)        { h.TitleChanged(n) }

// Typed returns n as its Note, or nil for an unknown kind or one whose
// payload is missing (a NoteTool without Tool, …), which no front end
// can show.
func (n Notification) Typed() Note {
	typer := typers[n.Kind]
	if typer == nil {
		return nil
	}
	return typer(n, NoteSource{Folder: n.Folder, Conversation: n.Conversation, Turn: n.Turn, Subagent: n.Subagent})
}

// typers build each kind's Note.
var typers = map[NotificationKind]func(n Notification, src NoteSource) Note{
	NoteTurnStarted: func(n Notification, src NoteSource) Note { return TurnStarted{src, n.Text} },
	NoteText:        func(n Notification, src NoteSource) Note { return TextDelta{src, n.Text} },
	NoteReasoning:   func(n Notification, src NoteSource) Note { return ReasoningDelta{src, n.Text} },
	NoteRetract:     func(n Notification, src NoteSource) Note { return TextRetracted{src} },
	NoteTool: func(n Notification, src NoteSource) Note {
		if n.Tool == nil {
			return nil
		}
		return ToolUpdated{src, n.Tool}
	},
	NoteState: func(n Notification, src NoteSource) Note {
		return StateChanged{src, n.State, n.Usage, n.TotalUsage, n.Context}
	},
	NoteError: func(n Notification, src NoteSource) Note {
		return ErrorReported{src, n.Text, n.ErrorKind, n.Trust, n.Visible}
	},
	NoteRetry: func(n Notification, src NoteSource) Note { return RetryScheduled{src, n.Delay, n.Text, n.ErrorKind} },
	NoteCommit: func(n Notification, src NoteSource) Note {
		if n.Commit == nil {
			return nil
		}
		return Committed{src, n.Commit}
	},
	NoteCommandChanges: func(n Notification, src NoteSource) Note { return CommandsChanged{src, n.Changes} },
	NoteInfo:           func(n Notification, src NoteSource) Note { return InfoReported{src, n.Text, n.Visible} },
	NoteTurnEnded: func(n Notification, src NoteSource) Note {
		return TurnEnded{src, n.Outcome, n.Usage, n.TotalUsage}
	},
	NoteCompacted: func(n Notification, src NoteSource) Note { return Compacted{src, n.Text, n.Compaction} },
	NoteProposal: func(n Notification, src NoteSource) Note {
		if n.Proposal == nil {
			return nil
		}
		return ChangeProposed{src, *n.Proposal}
	},
	NoteRewound: func(n Notification, src NoteSource) Note { return Rewound{src, n.Text, n.Redone} },
	NoteDiagnostics: func(n Notification, src NoteSource) Note {
		if n.Diagnostics == nil {
			return nil
		}
		return DiagnosticsReported{src, n.Diagnostics}
	},
	NoteHook: func(n Notification, src NoteSource) Note {
		if n.Hook == nil {
			return nil
		}
		return HookReported{src, n.Hook}
	},
	NoteSubagent: func(n Notification, src NoteSource) Note {
		if n.Subagent == nil {
			return nil
		}
		return SubagentChanged{src}
	},
	NoteMode: func(n Notification, src NoteSource) Note { return ModeChanged{src, fsm.Mode(n.Text)} },
	NotePlan: func(n Notification, src NoteSource) Note { return PlanChanged{src, n.Plan} },
	NotePlanProposal: func(n Notification, src NoteSource) Note {
		callID := ""
		if n.Tool != nil {
			callID = n.Tool.CallID
		}
		return PlanProposed{src, n.Text, callID}
	},
	NoteTitle: func(n Notification, src NoteSource) Note { return TitleChanged{src, n.Text} },
}
