// The loom-lsp wire protocol as this extension uses it: the generated wire
// types (wire.gen.ts, made by `go generate ./jsonrpc` from loom-lsp's Go
// wire types; a Go test fails when it drifts), and the types this
// extension narrows further (modes, plans, the panel's state).
import type { SavedRule } from './approval';
import type { ContextItem, Mode, PlanStep } from './shared/messages';
import type { ServerCommand } from './slash';
import type { CompletionStatus } from './wire.gen';

export { Commands, Methods } from './wire.gen';
export type {
  AskResult, CommitParams, DisplayMessageParams, ElicitParams, ElicitResult, NoticeParams, PlanProposalParams, Position, Range, SaveDocumentsParams,
  SaveDocumentsResult, StateParams, ToolCallParams, ToolView, TurnEndedParams, UndoResult,
} from './wire.gen';
import type { HistoryToolCall, Range } from './wire.gen';

/**
 * What every loom.* command takes to select a folder (uri) and one of its
 * conversations (conversation; absent: the folder's most recent).
 */
export interface ConversationArgs { uri?: string; conversation?: string }

/** loom/mode's params. */
export interface ModeParams { folder: string; conversation?: string; mode: Mode }
/** loom/plan's params: the whole list (empty: none). */
export interface PlanParams { folder: string; conversation?: string; turn: number; items: PlanStep[] | null }

/** loom.ask's argument. */
export interface AskArgs {
  prompt: string;
  uri?: string;
  selection?: { range: Range; text?: string; diagnostic?: string };
  /** What the user attached in the composer (files, problems, texts). */
  context?: ContextItem[];
  /** The conversation it goes to (absent: the folder's most recent). */
  conversation?: string;
  /** Pictures: paths of files the server reads (PNG, JPEG, GIF, WebP). */
  images?: string[];
}

/** loom/hook's params: text is the line to show; hook the details. */
export interface HookParams {
  folder: string; conversation?: string; turn: number; text: string;
  hook: { event: string; hook: string; callId?: string; decision?: string; reason?: string; context?: string; message?: string; problem?: string; held?: string; stopTurn?: boolean; stopReason?: string; input?: string };
}

/** loom.status's reply (workspace.Status). */
export interface Status {
  folder: string;
  state: string;
  turn: number;
  model: string;
  queued: string[] | null;
  lastCommit?: string;
  configError?: string;
  messages: number;
  /** The id of the conversation it describes. */
  conversationId?: string;
  /** tools.edits in force: "auto" or "review". */
  edits?: string;
  /** The folder's command rules ("Always allow `npm test`" …). */
  allowCommands?: SavedRule[];
  /** The MCP servers whose tools run unasked in this folder. */
  allowMcpServers?: string[];
  /** The conversation's mode and todo list. */
  mode?: Mode;
  plan?: PlanStep[] | null;
  /** The plan waiting for loom.decidePlan, if any. */
  planProposal?: { callId: string; plan: string };
  /** The folder's custom commands and user-invocable skills. */
  commands?: ServerCommand[] | null;
  /** The reasoning effort in force, and whether the conversation chose it (loom.setEffort). */
  effort?: string;
  effortChosen?: boolean;
  /** The folder's inline completion model; absent when completion is off there. */
  completion?: CompletionStatus;
}

/** loom.models' reply: the models the server lists, and the conversation's. */
export interface ModelsResult { models: { id: string }[]; current?: string }

export interface HistoryMessage {
  role: string;
  content: string;
  /** A user message's attachments (their labels make the chips again). */
  context?: { kind: string; label?: string; uri?: string }[];
  /** The calls, each with the server's words for its card (view). */
  toolCalls?: HistoryToolCall[];
  toolCallId?: string;
  /** A user-role message that is loom's own note to the model (files changed on disk, a rewind): no prompt, no turn. */
  note?: boolean;
}
export interface HistoryResult { folder: string; messages: HistoryMessage[] }

/**
 * loom.panelState's reply: a folder's conversation list, and of the
 * conversation drawn (the one asked for, else the folder's most recent)
 * its status, history, proposals waiting for review and commands'
 * changes. The proposals and changes are typed where they are used.
 */
export interface PanelState<Conversation = unknown, Proposal = unknown, Change = unknown> {
  folder: string;
  conversation: string;
  conversations: Conversation[];
  status: Status;
  history: HistoryResult;
  proposals: Proposal[];
  commandChanges: Change[];
}

/**
 * The experimental client capability that turns on loom/* messages;
 * trustCommand is how the user runs loom.trust here, which the server's
 * notice about a folder's ignored settings names.
 */
export const experimentalCapability = {
  loom: {
    saveDocuments: true, thoughts: true, review: true, workspaceTrust: true, userSettings: true, diagnostics: true, elicit: true,
    trustCommand: '"Loom: Trust this Folder" from the Command Palette',
  },
};
