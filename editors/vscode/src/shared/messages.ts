// The one message protocol between the extension and its chat webview.
// Both sides import this file (the extension bundle and the webview
// bundle), so a change to a message shows up as a type error on both.
// No imports but the sibling shared files: it must load in the browser
// and under node.
import type { PastedImage } from './images';
import type { ReviewCard, ReviewIntent } from './review';

/** How a tool call stands, as the card shows it. */
export type ToolStatus = 'streaming' | 'pending' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/** An approval asked of the user inside a tool card. */
export interface Approval {
  /** Identifies the pending request (answer with it). */
  id: string;
  /** What is asked (the command, for bash). */
  detail: string;
  /** ask while open; then the answer given (here or in the notification). */
  state: 'ask' | 'allowed' | 'denied';
  /** What "Always allow every command" sets, in words; none when it is not offered. */
  always?: string;
  /** "Always allow `npm test`": the exact command a rule would allow, when the server offers it. */
  exact?: string;
  /** "Always allow commands starting with …": the prefix the server suggests (the user may edit it). */
  prefix?: string;
  /** The rule the user chose, in words, once answered. */
  rule?: string;
}

/**
 * Something attached to a prompt (a chip in the composer and under the
 * prompt), sent as one of loom.ask's context items.
 */
export type ContextItem =
  /** A file or a folder (uri), or a range of a file. */
  | { kind: 'file'; label: string; uri: string; range?: { start: { line: number; character: number }; end: { line: number; character: number } } }
  /** Problems (vscode.languages.getDiagnostics) of a file (uri) or of the workspace. */
  | { kind: 'diagnostics'; label: string; uri?: string; items: DiagnosticItem[] }
  /** A text with a label: a selection, a terminal command's output, the git changes. */
  | { kind: 'text'; label: string; text: string }
  /** An MCP server's resource (uri), or its resource template filled in (template, arguments): read by loom-lsp through the server. */
  | { kind: 'resource'; label: string; server: string; uri?: string; template?: string; arguments?: Record<string, string> };

/** One problem, as loom.ask's diagnostics context carries it. */
export interface DiagnosticItem {
  uri: string;
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  severity: 'error' | 'warning' | 'info' | 'hint';
  message: string;
  source?: string;
  code?: string;
}

/** Token counts of a turn, as the model reported them. */
export interface Usage { prompt: number; completion: number; total: number }

/** One entry of a conversation, as the panel draws it. */
export type Item =
  | {
    kind: 'user'; id: string; text: string; turn?: number;
    /** Typed during a running turn: drawn after it until its own turn starts. */
    queued?: boolean;
    /** A line under the prompt: the problem or the lines a code action sent. */
    context?: string;
    /** The labels of what was attached (chips). */
    chips?: string[];
  }
  | { kind: 'assistant'; id: string; turn: number; text: string }
  /** The model's thinking, shown folded; never part of the answer. */
  | { kind: 'thought'; id: string; turn: number; text: string }
  | {
    kind: 'tool'; id: string; turn: number; callId: string; name: string;
    /** The tool's arguments in words: "bash: npm test", "read_file main.go:10-40". */
    title: string;
    status: ToolStatus;
    /** The output (so far, then the tool's whole result once the turn ends). */
    output: string;
    /** The one-line result the server sent at the end ("exit code 0 (13ms)"). */
    summary?: string;
    diff?: string;
    /** The edited file's path (edit_file / write_file). */
    path?: string;
    approval?: Approval;
    /** A proposed change waiting for (or decided by) the user's review. */
    review?: ReviewCard;
  }
  | { kind: 'commit'; id: string; turn: number; sha: string; message: string; undone?: string }
  | { kind: 'notice'; id: string; level: 'error' | 'warning' | 'info'; text: string; action?: NoticeAction }
  /** The end of a turn: done, cancelled (Stopped), failed, or interrupted (cut by a window reload). */
  | { kind: 'turnEnd'; id: string; turn: number; outcome: string; usage?: Usage }
  /** A plan the model proposes (plan mode), waiting for the user's decision while open. */
  | {
    kind: 'plan'; id: string; turn: number; callId: string;
    /** The plan (Markdown), as proposed. */
    plan: string;
    /** open: waits; accepted / fresh (in a new conversation) / rejected: decided here; closed: the turn ended without a decision. */
    state: 'open' | 'accepted' | 'fresh' | 'rejected' | 'closed';
    /** What was decided, in words ("Built your edited version", "Keep planning: …"). */
    answer?: string;
  }
  /** A subagent (loom/subagent): a child conversation started by the agent call callId, one card per child. */
  | {
    kind: 'subagent'; id: string; turn: number; callId: string;
    /** The child's id among the conversation's children (loom.stopSubagent takes it). */
    child: string;
    /** Its definition's name (researcher, worker, …) and its task. */
    agent: string; task: string;
    /** The model its definition chose among the user's [subagents] models; absent: the conversation's. */
    model?: string;
    state: SubagentState;
    /** What it did last ("read_file succeeded", "waits for your approval: bash …"). */
    activity?: string;
    tokens: number;
    /** Stop was pressed: the card waits for the server to say it stopped. */
    stopping?: boolean;
  };

/** A subagent's state, as loom/subagent says it. */
export type SubagentState = 'running' | 'waiting' | 'done' | 'failed' | 'stopped';

/** A conversation's mode (loom.setMode): agent acts; plan and ask only read. */
export type Mode = 'agent' | 'plan' | 'ask';

/** One item of the todo list the model keeps (loom/plan). */
export interface PlanStep { step: string; status: 'pending' | 'in_progress' | 'completed' }

/** A button a notice may carry (redo: undo the rewind it tells of, until the next prompt). */
export type NoticeAction = 'openSettings' | 'installServer' | 'setup' | 'redo';

/**
 * A file of the changed-files bar above the input: changed by the
 * agent's edits since the user last kept them (undo takes the agent's
 * hunks back), or by a command and not committed (keep commits it,
 * discard restores the last commit's version).
 */
export interface BarFile {
  /** The file, relative to the repository's top (as loom/commit names it). */
  path: string;
  source: 'agent' | 'command';
  /** Lines added and removed by the change (agent: its commits together). */
  added: number;
  removed: number;
  /** The command that changed it (source command). */
  command?: string;
  created?: boolean;
  deleted?: boolean;
  binary?: boolean;
}

/** What the user does in the changed-files bar; no paths: every file of the bar. */
export type BarAction = 'keep' | 'undo' | 'diff';

/** The restore kinds of a checkpoint. */
export type RestoreKind = 'both' | 'files' | 'conversation';

/** What the first-run setup card writes (the user settings loom.model.*). */
export interface SetupChoice {
  provider: string;
  baseUrl: string;
  model: string;
  apiKeyEnv: string;
}

/** A slash command of the composer; custom: the folder's own (a custom command or a skill), sent as a prompt. */
export interface SlashCommand { name: string; args?: string; help: string; custom?: boolean }

/** The panel header of a folder. */
export interface Header {
  folder: string;
  /** The folder's name. */
  name: string;
  model: string;
  /** Plain words: idle, thinking, running bash, waiting for approval, … */
  state: string;
  busy: boolean;
  usage?: Usage;
  /** The server is not running (not found, crashed, …). */
  down?: boolean;
  /** The models the server lists, for the picker (empty: the picker shows the name only). */
  models?: string[];
  /** No model is configured: the panel shows the setup card. */
  setup?: boolean;
  /** The id of the conversation shown ("" until the server names it). */
  conversation?: string;
  /** Its title (the header's conversation button says it). */
  title?: string;
  /** tools.edits is "review" (the header's toggle "Review edits before they apply"). */
  reviewEdits?: boolean;
  /** The conversation's mode; modes: the server switches modes (loom.setMode), the composer shows the selector. */
  mode?: Mode;
  modes?: boolean;
  /** The todo list the model keeps (empty or absent: none shown). */
  plan?: PlanStep[];
  /** The folder's custom commands and user-invocable skills, for the slash menu. */
  commands?: SlashCommand[];
  /** The reasoning effort in force ("" = the server's default); chosen: the conversation's own (loom.setEffort). */
  effort?: string;
  effortChosen?: boolean;
  /** The efforts the picker offers (empty: the server cannot set one per conversation). */
  efforts?: string[];
}

/** One conversation of the header's list. */
export interface ConversationEntry {
  id: string;
  title: string;
  /** When it was last used (RFC 3339); the panel says it relative to now. */
  updated?: string;
  turns: number;
  /** A turn is in flight in it. */
  running: boolean;
  /** It waits for an approval. */
  waiting?: boolean;
  /** The one shown. */
  current: boolean;
  /** Open in another loom process: read-only here. */
  elsewhere?: boolean;
}

/** Messages from the extension to the webview. */
export type ToWebview =
  /** Everything to draw: on open, on folder switch, after a redraw. */
  | { type: 'snapshot'; folders: { path: string; name: string }[]; header: Header; items: Item[] }
  /** An item is new or changed (matched by id) in a folder's conversation. */
  | { type: 'upsert'; folder: string; conversation?: string; item: Item }
  /** The folder's conversations, for the header's list. */
  | { type: 'conversations'; folder: string; items: ConversationEntry[] }
  | { type: 'header'; header: Header }
  /** Put text in the input box (a code action's prompt to edit). */
  | { type: 'fill'; text: string; ifText?: string }
  /** Add chips to the composer (the answer to attach). */
  | { type: 'chips'; items: ContextItem[] }
  /** Focus the input (Ctrl+Alt+L). */
  | { type: 'focus' }
  /** The models a server lists, for the setup card (or why not). */
  | { type: 'setupModels'; models: string[]; error?: string }
  /** The changed-files bar of a folder (empty: hidden). */
  | { type: 'filesBar'; folder: string; files: BarFile[] };

/** Messages from the webview to the extension. */
export type FromWebview =
  | { type: 'ready' }
  | { type: 'send'; text: string; context?: ContextItem[]; images?: PastedImage[] }
  /** Switch the shown conversation's mode (the composer's selector). */
  | { type: 'setMode'; mode: Mode }
  /** Answer plan card itemId: accept (fresh: in a new conversation; plan: the user's edited version) or reject (comment: the model revises). */
  | { type: 'decidePlan'; itemId: string; accept: boolean; fresh?: boolean; plan?: string; comment?: string }
  /** Stop the turn; by: 'escape' when the Escape key asked (a waiting review is then kept). */
  | { type: 'stop'; by?: 'escape' }
  /** Stop one subagent (its card's itemId) of the shown conversation; the parent's turn goes on. */
  | { type: 'stopSubagent'; itemId: string }
  /** Open the attach quick pick (@, # or the Attach button); what: a direct choice. */
  | { type: 'attach'; what?: 'selection' | 'problems' | 'files' | 'terminal' | 'git' }
  | { type: 'setModel'; model: string }
  /** The conversation's reasoning effort ("" = back to [model] reasoning_effort). */
  | { type: 'setEffort'; effort: string }
  | { type: 'slash'; name: string; args: string }
  | { type: 'setup'; choice: SetupChoice }
  /** List the models of a server (the setup card's model field). */
  | { type: 'listModels'; baseUrl: string; apiKeyEnv: string }
  | { type: 'reset' }
  /** Start a conversation beside the others (loom.newConversation). */
  | { type: 'newConversation' }
  /** Show conversation id (loom.openConversation); the others go on running. */
  | { type: 'openConversation'; id: string }
  | { type: 'renameConversation'; id: string; title: string }
  /** Delete conversation id (the panel asked for confirmation). */
  | { type: 'deleteConversation'; id: string }
  /** Ask for the list again (the list is being opened). */
  | { type: 'listConversations' }
  | { type: 'pickFolder'; folder: string }
  /** always: every command (after the card's confirmation); exact / prefix: a rule. */
  | { type: 'approve'; id: string; answer: 'allow' | 'deny' | 'always' | 'exact' | 'prefix'; prefix?: string }
  | { type: 'copy'; text: string }
  | { type: 'insert'; text: string }
  | { type: 'openDiff'; itemId: string }
  | { type: 'openFile'; path: string }
  /** Undo a commit (its sha; the newest when absent). */
  | { type: 'undo'; sha?: string }
  /** The edit card and the header's review toggle (src/shared/review.ts). */
  | { type: 'review'; intent: ReviewIntent }
  | { type: 'action'; action: NoticeAction }
  /** The changed-files bar: keep, undo (discard, for a command's change) or open the diff of paths (all when absent). */
  | { type: 'bar'; action: BarAction; paths?: string[] }
  /** Restore checkpoint on a prompt (its item id). */
  | { type: 'restore'; itemId: string; restore: RestoreKind };
