// The one message protocol between the extension and its chat webview.
// Both sides import this file (the extension bundle and the webview
// bundle), so a change to a message shows up as a type error on both.
// No imports: it must load in the browser and under node.

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
  /** What "Always allow in this workspace" sets, in words; none when it is not offered. */
  always?: string;
}

/** Token counts of a turn, as the model reported them. */
export interface Usage { prompt: number; completion: number; total: number }

/** One entry of a conversation, as the panel draws it. */
export type Item =
  | { kind: 'user'; id: string; text: string; turn?: number; queued?: boolean; context?: string }
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
  }
  | { kind: 'commit'; id: string; turn: number; sha: string; message: string; undone?: string }
  | { kind: 'notice'; id: string; level: 'error' | 'warning' | 'info'; text: string; action?: NoticeAction }
  | { kind: 'turnEnd'; id: string; turn: number; outcome: string; usage?: Usage };

/** A button a notice may carry. */
export type NoticeAction = 'openSettings' | 'installServer';

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
}

/** Messages from the extension to the webview. */
export type ToWebview =
  /** Everything to draw: on open, on folder switch, after a redraw. */
  | { type: 'snapshot'; folders: { path: string; name: string }[]; header: Header; items: Item[] }
  /** An item is new or changed (matched by id). */
  | { type: 'upsert'; folder: string; item: Item }
  | { type: 'header'; header: Header }
  /** Put text in the input box (a code action's prompt to edit). */
  | { type: 'fill'; text: string };

/** Messages from the webview to the extension. */
export type FromWebview =
  | { type: 'ready' }
  | { type: 'send'; text: string }
  | { type: 'stop' }
  | { type: 'reset' }
  | { type: 'pickFolder'; folder: string }
  | { type: 'approve'; id: string; answer: 'allow' | 'deny' | 'always' }
  | { type: 'copy'; text: string }
  | { type: 'insert'; text: string }
  | { type: 'openDiff'; itemId: string }
  | { type: 'openFile'; path: string }
  | { type: 'undo'; sha?: string }
  | { type: 'action'; action: NoticeAction };
