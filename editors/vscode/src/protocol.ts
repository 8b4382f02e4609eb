// The loom-lsp wire protocol as this extension uses it. The server side is
// jsonrpc/commands.go and jsonrpc/notify.go of loom-lsp; keep them in step.
import type { SavedRule } from './approval';
import type { ContextItem, Mode, PlanStep } from './shared/messages';
import type { ServerCommand } from './slash';

/** Commands of workspace/executeCommand; each takes one object argument. */
export const Commands = {
  ask: 'loom.ask',
  cancel: 'loom.cancel',
  reset: 'loom.reset',
  status: 'loom.status',
  history: 'loom.history',
  undo: 'loom.undo',
  compact: 'loom.compact',
  models: 'loom.models',
  setModel: 'loom.setModel',
  rules: 'loom.rules',
  /** {uri?, exact?|prefix?|every?|mcpServer?}: saves an approval rule (the user's, outside the repository). */
  addRule: 'loom.addRule',
  /** {uri?, exact?|prefix?|every?|mcpServer?}: removes one. */
  removeRule: 'loom.removeRule',
  rewind: 'loom.rewind',
  /** Registered by the extension itself (review.ts), like the others. */
  redo: 'loom.redo',
  conversations: 'loom.conversations',
  newConversation: 'loom.newConversation',
  openConversation: 'loom.openConversation',
  renameConversation: 'loom.renameConversation',
  deleteConversation: 'loom.deleteConversation',
  /** {uri?, conversation?} -> PanelState: everything the panel draws of a folder, in one request. */
  panelState: 'loom.panelState',
  /** {uri?, conversation?, mode} -> {folder, mode, plan}: switches the conversation's mode. */
  setMode: 'loom.setMode',
  /** {uri?, conversation?, accept, fresh?, plan?, comment?} -> null: answers the plan waiting for approval. */
  decidePlan: 'loom.decidePlan',
  /** {uri?, conversation?, effort} -> {folder, effort, efforts}: the conversation's reasoning effort ("" = configured). */
  setEffort: 'loom.setEffort',
} as const;

/**
 * What every loom.* command takes to select a folder (uri) and one of its
 * conversations (conversation; absent: the folder's most recent).
 */
export interface ConversationArgs { uri?: string; conversation?: string }

/** The server's notification and request methods. */
export const Methods = {
  displayMessage: 'loom/displayMessage',
  toolCall: 'loom/toolCall',
  state: 'loom/state',
  saveDocuments: 'loom/saveDocuments',
  diagnostics: 'loom/diagnostics',
  turnEnded: 'loom/turnEnded',
  commit: 'loom/commit',
  notice: 'loom/notice',
  /** HookParams: what an agent hook said (a line of the conversation). */
  hook: 'loom/hook',
  /** ModeParams: the conversation's mode changed. */
  mode: 'loom/mode',
  /** PlanParams: the todo list, whole. */
  plan: 'loom/plan',
  /** PlanProposalParams: a plan waits for loom.decidePlan. */
  planProposal: 'loom/planProposal',
} as const;

/** loom/mode's params. */
export interface ModeParams { folder: string; conversation?: string; mode: Mode }
/** loom/plan's params: the whole list (empty: none). */
export interface PlanParams { folder: string; conversation?: string; turn: number; items: PlanStep[] | null }
/** loom/planProposal's params: the plan (Markdown) and the propose_plan call. */
export interface PlanProposalParams { folder: string; conversation?: string; turn: number; callId: string; plan: string }

export interface Position { line: number; character: number }
export interface Range { start: Position; end: Position }

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

/** loom.ask's reply. */
export interface AskResult { folder: string; turn: number; conversation?: string }

/**
 * A coalesced delta of streamed text; seq counts a folder's deltas from 1.
 * kind "thought" is the model's thinking (sent because the extension
 * declares experimental.loom.thoughts), never part of the answer.
 */
export interface DisplayMessageParams {
  folder: string; conversation?: string; turn: number; seq: number; text: string; kind?: string;
  /** Replace the turn's last block of answer text by text (a retry after a partial answer): drop the abandoned text. */
  replace?: boolean;
}

/** A tool call's new status. */
export interface ToolCallParams {
  folder: string; conversation?: string;
  turn: number;
  id: string;
  name: string;
  summary: string;
  /** streaming, pending, running, succeeded, failed or cancelled */
  status: string;
  progress?: string;
  diff?: string;
}

export interface StateParams { folder: string; conversation?: string; state: string; turn?: number }

/** The end of a turn: its outcome (done, cancelled, error, …) and token usage. */
export interface TurnEndedParams {
  folder: string;
  conversation?: string;
  turn: number;
  outcome: string;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

/** The auto-commit of a turn's edits. */
export interface CommitParams { folder: string; conversation?: string; turn: number; sha: string; message: string; files?: string[] }

/**
 * What the session did on its own, for the conversation: kind "info"
 * ("compacting the conversation (…)", "resumed the conversation: …") or
 * "compacted" (the summary is in loom.history).
 */
export interface NoticeParams { folder: string; conversation?: string; turn: number; kind: string; text: string }
/** loom/hook's params: text is the line to show; hook the details. */
export interface HookParams {
  folder: string; conversation?: string; turn: number; text: string;
  hook: { event: string; hook: string; callId?: string; decision?: string; reason?: string; context?: string; message?: string; problem?: string; held?: string; stopTurn?: boolean; stopReason?: string; input?: string };
}

export interface SaveDocumentsParams { uris: string[] }
export interface SaveDocumentsResult { saved: string[] }

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
  /** tools.edits in force: "auto" or "review" (absent from an older loom-lsp). */
  edits?: string;
  /** The folder's command rules ("Always allow `npm test`" …). */
  allowCommands?: SavedRule[];
  /** The MCP servers whose tools run unasked in this folder (absent from an older loom-lsp). */
  allowMcpServers?: string[];
  /** The conversation's mode and todo list (absent from an older loom-lsp). */
  mode?: Mode;
  plan?: PlanStep[] | null;
  /** The plan waiting for loom.decidePlan, if any. */
  planProposal?: { callId: string; plan: string };
  /** The folder's custom commands and user-invocable skills. */
  commands?: ServerCommand[] | null;
  /** The reasoning effort in force, and whether the conversation chose it (loom.setEffort). */
  effort?: string;
  effortChosen?: boolean;
}

/** loom.models' reply: the models the server lists, and the conversation's. */
export interface ModelsResult { models: { id: string }[]; current?: string }

export interface HistoryMessage {
  role: string;
  content: string;
  /** A user message's attachments (their labels make the chips again). */
  context?: { kind: string; label?: string; uri?: string }[];
  toolCalls?: { id: string; name: string; arguments: string }[];
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
export interface UndoResult { folder: string; message: string }

/** The experimental client capability that turns on loom/* messages. */
export const experimentalCapability = { loom: { saveDocuments: true, thoughts: true, review: true, workspaceTrust: true, userSettings: true, diagnostics: true } };
