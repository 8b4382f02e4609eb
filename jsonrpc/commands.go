package jsonrpc

import (
	"go.lsp.dev/protocol"

	"github.com/loom-lsp/loom-lsp/workspace"
)

// The commands of workspace/executeCommand, declared once. Each has an
// argument type below (the command's single argument, a JSON object) and
// an entry in [commands].
const (
	// CmdAsk submits a prompt: AskArgs -> AskResult, at once; the turn
	// streams through notifications.
	CmdAsk = "loom.ask"
	// CmdCancel stops the turn in flight: FolderArgs -> null.
	CmdCancel = "loom.cancel"
	// CmdReset cancels and starts a new conversation: FolderArgs -> null.
	CmdReset = "loom.reset"
	// CmdStatus reports a session: FolderArgs -> workspace.Status.
	CmdStatus = "loom.status"
	// CmdHistory returns the transcript: FolderArgs -> HistoryResult.
	CmdHistory = "loom.history"
	// CmdCompact summarises the conversation now, to free the model's
	// context window: FolderArgs -> null.
	CmdCompact = "loom.compact"
	// CmdUndo takes back one of the session's auto-commits (the newest,
	// or the one named by sha), keeping the user's and later commits'
	// edits, or refuses saying why: UndoArgs -> UndoResult. It waits for
	// the turn in flight to end.
	CmdUndo = "loom.undo"
	// CmdUndoFile takes back the agent's changes to one file (the
	// changed-files bar's per-file Undo): the hunks the session's
	// auto-commits wrote into it, keeping the user's edits and the
	// commits' other files: UndoFileArgs -> UndoResult. It waits for the
	// turn in flight to end.
	CmdUndoFile = "loom.undoFile"
	// CmdCommit commits the agent's commands' changes to paths (keep;
	// they are never auto-committed), or, without paths, makes the
	// auto-commit the daemon's death interrupted (reported on resume):
	// PathsArgs -> UndoResult (what it did).
	CmdCommit = "loom.commit"
	// CmdDiscard puts the commands' changes to paths back as the files
	// were before the command, merging in the user's edits since and
	// refusing a file where they overlap: PathsArgs -> UndoResult (what
	// it did).
	CmdDiscard = "loom.discard"
	// CmdCommandChanges lists the commands' changes reported and not yet
	// kept or discarded: FolderArgs -> CommandChangesResult.
	CmdCommandChanges = "loom.commandChanges"
	// CmdTrust trusts the workspace folder, persistently, so that its
	// .loom.toml may choose the model server, allow commands and change
	// hooks (see config.Trust): FolderArgs -> TrustResult.
	CmdTrust = "loom.trust"
	// CmdMCPLogin signs in to an HTTP MCP server (OAuth), opening the
	// authorization URL through window/showDocument; it replies once the
	// browser came back: MCPServerArgs -> MCPLoginResult.
	CmdMCPLogin = "loom.mcpLogin"
	// CmdMCPLogout forgets an MCP server's sign-in: MCPServerArgs ->
	// MCPLoginResult.
	CmdMCPLogout = "loom.mcpLogout"
	// CmdMCPResources lists the resources and resource templates of the
	// folder's ready MCP servers, which loom.ask's context attaches
	// (kind "resource"): FolderArgs -> MCPResourcesResult.
	CmdMCPResources = "loom.mcpResources"
	// CmdReview decides a proposal (tools.edits = "review"): ReviewArgs
	// -> workspace.ReviewResult, once the accepted hunks are applied.
	CmdReview = "loom.review"
	// CmdProposals lists the proposals waiting for a review: FolderArgs
	// -> ProposalsResult.
	CmdProposals = "loom.proposals"
	// CmdReviewDraft records what the user decided so far on a proposal
	// and the comment typed, so that a reconnecting client (a window
	// reload, which restarts loom-lsp) shows it as the user left it:
	// ReviewDraftArgs -> null.
	CmdReviewDraft = "loom.reviewDraft"
	// CmdCheckpoints lists the turns one can rewind to: FolderArgs ->
	// CheckpointsResult.
	CmdCheckpoints = "loom.checkpoints"
	// CmdRewind goes back to before a turn: RewindArgs ->
	// workspace.RewindResult {restored, kept, conflicts, commit, prompt}.
	CmdRewind = "loom.rewind"
	// CmdRedo undoes the last rewind, until the next prompt: FolderArgs
	// -> workspace.RewindResult.
	CmdRedo = "loom.redo"
)

// FolderArgs selects a session. URI is a file or folder inside the
// workspace folder; empty selects the only folder.
type FolderArgs struct {
	URI string `json:"uri,omitempty"`
	// Conversation selects one of the folder's conversations by id; ""
	// is the folder's most recent.
	Conversation string `json:"conversation,omitempty"`
}

// PathsArgs name files of a folder: loom.commit's and loom.discard's
// arguments.
type PathsArgs struct {
	// URI selects the folder (see FolderArgs).
	URI string `json:"uri,omitempty"`
	// Paths are absolute, or relative to the folder.
	Paths []string `json:"paths,omitempty"`
	// Conversation selects one of the folder's conversations by id; ""
	// is the folder's most recent.
	Conversation string `json:"conversation,omitempty"`
}

// CommandChangesResult is loom.commandChanges' reply.
type CommandChangesResult struct {
	Folder  string          `json:"folder"`
	Changes []CommandChange `json:"changes"`
}

// UndoArgs are loom.undo's arguments.
type UndoArgs struct {
	// URI selects the folder (see FolderArgs).
	URI string `json:"uri,omitempty"`
	// SHA names the auto-commit to take back (full or abbreviated, at
	// least 4 hex digits); "" takes back the newest.
	SHA string `json:"sha,omitempty"`
	// Conversation selects one of the folder's conversations by id; ""
	// is the folder's most recent.
	Conversation string `json:"conversation,omitempty"`
}

// UndoFileArgs are loom.undoFile's arguments.
type UndoFileArgs struct {
	// URI selects the folder (see FolderArgs).
	URI string `json:"uri,omitempty"`
	// Path is the file, absolute or relative to the folder; required.
	Path string `json:"path"`
	// Commits name the auto-commits (full or abbreviated shas) whose
	// changes to Path are taken back; empty: those of the latest turn
	// that changed it.
	Commits []string `json:"commits,omitempty"`
	// Conversation selects one of the folder's conversations by id; ""
	// is the folder's most recent.
	Conversation string `json:"conversation,omitempty"`
}

// AskArgs are loom.ask's arguments.
type AskArgs struct {
	// Prompt is the user's message; required.
	Prompt string `json:"prompt"`
	// URI selects the folder (see FolderArgs), and is the document the
	// selection is in.
	URI string `json:"uri,omitempty"`
	// Selection, if set, is added to the prompt as context: the text of
	// Range in URI (read from the open buffer, or disk), or Text when set.
	Selection *Selection `json:"selection,omitempty"`
	// Context are items attached to the prompt (files, ranges, folders,
	// diagnostics, labelled texts); the server writes them into the
	// message, and loom.history returns them as chips.
	Context []AskContextItem `json:"context,omitempty"`
	// Conversation selects one of the folder's conversations by id; ""
	// is the folder's most recent.
	Conversation string `json:"conversation,omitempty"`
	// Images are pictures attached to the prompt: file paths, absolute
	// or relative to the folder (see "Images in prompts").
	Images []string `json:"images,omitempty"`
}

// Selection is a range of a document given to the model as context.
type Selection struct {
	// Range is in LSP positions (0-based line, UTF-16 character).
	Range protocol.Range `json:"range"`
	// Text is the selected text; empty means read it from the document.
	Text string `json:"text,omitempty"`
	// Diagnostic is the message of a diagnostic at Range ("Ask Loom to
	// fix"), if any.
	Diagnostic string `json:"diagnostic,omitempty"`
}

// AskResult is loom.ask's reply.
type AskResult struct {
	// Folder is the session's workspace folder (a path).
	Folder string `json:"folder"`
	// Turn is the turn the prompt runs as; the notifications of the turn
	// carry it.
	Turn uint64 `json:"turn"`
	// Conversation is the id of the conversation it runs in.
	Conversation string `json:"conversation,omitempty"`
}

// HistoryResult is loom.history's reply.
type HistoryResult struct {
	Folder   string           `json:"folder"`
	Messages []HistoryMessage `json:"messages"`
	// Children are the subagents the conversation started, oldest
	// first, each as its last loom/subagent said and with its
	// transcript: a client redraws its cards (lines) from them.
	Children []SubagentHistory `json:"children,omitempty"`
}

// SubagentHistory is a child of the conversation in loom.history: its
// state (SubagentParams; an ended child's Activity is absent) and its
// transcript, as loom.history gives a conversation's.
type SubagentHistory struct {
	SubagentParams
	Messages []HistoryMessage `json:"messages"`
}

// HistoryMessage is one message of the transcript.
type HistoryMessage struct {
	Role       string            `json:"role"`
	Content    string            `json:"content"`
	ToolCalls  []HistoryToolCall `json:"toolCalls,omitempty"`
	ToolCallID string            `json:"toolCallId,omitempty"`
	// Context (user messages) are the items attached to the prompt;
	// Content is then the prompt as typed.
	Context []HistoryChip `json:"context,omitempty"`
	// Note marks a user-role message that is loom's own note to the model
	// (files changed on disk, a rewind, a hook's note, the compacted
	// summary): no prompt of the user, and no turn; show it as a notice.
	Note bool `json:"note,omitempty"`
}

// HistoryToolCall is one tool call of an assistant message.
type HistoryToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	// View is how the call shows, worded by the server.
	View workspace.ToolView `json:"view"`
}

// UndoResult is loom.undo's reply.
type UndoResult struct {
	Folder string `json:"folder"`
	// Message says what was reverted.
	Message string `json:"message"`
}

// TrustResult is loom.trust's reply.
type TrustResult struct {
	// Folder is the workspace folder now trusted.
	Folder string `json:"folder"`
}

// commandNames lists the commands initialize advertises.
func commandNames() []string {
	names := make([]string, 0, len(commands))
	for _, c := range commandList {
		names = append(names, c.name)
	}
	return names
}
