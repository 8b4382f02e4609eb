// One folder's conversation as the chat panel shows it: the server's
// notifications (and loom.history, after a reload) turned into items.
// Each method returns the items it changed, which the panel sends on.
// No vscode imports: tested under node.
import { DeltaAssembler } from './assembler';
import type { DisplayMessageParams, HistoryResult, ToolCallParams, ToolView } from './protocol';
import type { Approval, Header, Item, Mode, NoticeAction, PlanStep, SlashCommand, ToolStatus, Usage } from './shared/messages';
import { isBusy, stateWords } from './status';
import { canStop, subagentItemId, subagentState } from './shared/subagents';
import type { SubagentParams } from './wire.gen';

type ToolItem = Extract<Item, { kind: 'tool' }>;
type UserItem = Extract<Item, { kind: 'user' }>;
type PlanItem = Extract<Item, { kind: 'plan' }>;

const toolStatuses: readonly string[] = ['streaming', 'pending', 'running', 'succeeded', 'failed', 'cancelled'];

/** Transcript keeps the items of one folder's conversation. */
export class Transcript {
  /** The conversation in order, without the queued prompts. */
  private readonly main: Item[] = [];
  /** Prompts typed during a turn, drawn after it until their turn starts. */
  private readonly queue: UserItem[] = [];
  private readonly byId = new Map<string, Item>();
  private next = 0;
  /** The assistant item text of a turn goes to, while it is the last item. */
  private openText: Extract<Item, { kind: 'assistant' }> | undefined;
  /** The thought item thinking goes to, while it is the last item. */
  private openThought: Extract<Item, { kind: 'thought' }> | undefined;
  private state = '';
  private turn = 0;
  model = '';
  /** The models the server lists (the header's picker). */
  models: string[] = [];
  /** No model is configured: the panel shows the setup card. */
  setup = false;
  usage: Usage | undefined;
  down = false;
  /**
   * The conversation was drawn from the server (restored from the record
   * kept across a reload, or from loom.history). Until then it holds only
   * what came first (a restarted server's "resumed" notice and the end of
   * the turn the reload cut), which must never replace that record.
   */
  loaded = false;
  /** The server's id of this conversation ("" until it names it). */
  conversation = '';
  /** Its title, as the conversation list says it (the header shows it). */
  title = '';
  /** When something last happened in it here (RFC 3339), if anything did. */
  updated: string | undefined;
  /** tools.edits is "review": the header's toggle is on. */
  reviewEdits = false;
  /** The conversation's mode (loom/mode, loom.status); modes: the server can switch it. */
  mode: Mode = 'agent';
  modes = false;
  /** The todo list the model keeps (loom/plan), whole. */
  plan: PlanStep[] = [];
  /** The folder's custom commands and skills (loom.status), for the slash menu. */
  commands: SlashCommand[] = [];
  /** The reasoning effort in force, whether the conversation chose it, and the efforts offered (none: no picker). */
  effort = '';
  effortChosen = false;
  efforts: string[] = [];

  /**
   * assembler checks the deltas' seq: share one among the conversations
   * of a folder (the server numbers a folder's deltas, not a conversation's).
   */
  constructor(readonly folder: string, readonly name: string, private readonly assembler = new DeltaAssembler()) {}

  /** Everything to draw: the conversation, then the queued prompts. */
  get items(): Item[] {
    return this.queue.length === 0 ? this.main : [...this.main, ...this.queue];
  }

  private add<T extends Item>(item: T): T {
    this.main.push(item);
    this.byId.set(item.id, item);
    this.openText = undefined;
    this.openThought = undefined;
    return item;
  }

  private id(prefix: string): string {
    return `${prefix}${++this.next}`;
  }

  /** The item with id, if any. */
  get(id: string): Item | undefined {
    return this.byId.get(id);
  }

  /** The header: model, state in words, usage. */
  header(): Header {
    return {
      folder: this.folder,
      name: this.name,
      model: this.model,
      state: this.down ? 'not running' : this.reviewing() && this.busy() ? 'waiting for your review'
        : this.busy() && this.main.some((it) => it.kind === 'plan' && it.state === 'open') ? 'waiting for your decision on the plan'
        : stateWords(this.state, this.activeTool(), this.pendingApproval() !== undefined),
      busy: isBusy(this.state),
      usage: this.usage,
      down: this.down,
      models: this.models,
      setup: this.setup,
      conversation: this.conversation,
      title: this.title,
      reviewEdits: this.reviewEdits,
      mode: this.mode,
      modes: this.modes,
      plan: this.plan,
      commands: this.commands,
      effort: this.effort,
      effortChosen: this.effortChosen,
      efforts: this.efforts,
    };
  }

  /** A plan the model proposes (loom/planProposal): its card, open; the same call's card is reused. */
  planProposal(turn: number, callId: string, plan: string): Item {
    const had = this.main.find((it): it is PlanItem => it.kind === 'plan' && it.callId === callId && callId !== '');
    if (had) {
      had.plan = plan;
      had.state = 'open';
      return had;
    }
    return this.add({ kind: 'plan', id: this.id('p'), turn, callId, plan, state: 'open' });
  }

  /** The open plan card id, decided (state and what was answered, in words). */
  planDecided(id: string, state: PlanItem['state'], answer?: string): Item | undefined {
    const it = this.byId.get(id);
    if (it?.kind !== 'plan' || it.state !== 'open') {
      return undefined;
    }
    it.state = state;
    it.answer = answer;
    return it;
  }

  /**
   * Closes the open plan cards that no longer wait (the server has
   * pending, or none): after a reload, a cancel or the turn's end.
   */
  closePlans(pending?: string): Item[] {
    const changed: Item[] = [];
    for (const it of this.main) {
      if (it.kind === 'plan' && it.state === 'open' && it.callId !== pending) {
        it.state = 'closed';
        changed.push(it);
      }
    }
    return changed;
  }

  /** How many prompts it has (its turns, as drawn). */
  turns(): number {
    return this.main.filter((it) => it.kind === 'user').length;
  }

  private activeTool(): string | undefined {
    for (let i = this.main.length - 1; i >= 0; i--) {
      const it = this.main[i];
      if (it.kind === 'tool' && it.status === 'running') {
        return it.name;
      }
    }
    return undefined;
  }

  /** Whether a tool card's proposed change waits for the user's review. */
  private reviewing(): boolean {
    return this.main.some((it) => it.kind === 'tool' && it.review?.state === 'open');
  }

  /** The tool card whose approval is open, if any. */
  pendingApproval(): ToolItem | undefined {
    return this.main.find((it): it is ToolItem => it.kind === 'tool' && it.approval?.state === 'ask');
  }

  /** Whether a turn is in flight. */
  busy(): boolean {
    return isBusy(this.state);
  }

  /**
   * The user's prompt, shown at once. During a running turn it is queued:
   * drawn after the running answer (never inside it) until its turn starts.
   */
  prompt(text: string, context?: string, chips?: string[], wait = false): UserItem {
    const item: UserItem = { kind: 'user', id: this.id('u'), text, context };
    if (chips?.length) {
      item.chips = chips;
    }
    if (wait || this.busy() || this.queue.length > 0) {
      item.queued = true;
      this.queue.push(item);
      this.byId.set(item.id, item);
      return item;
    }
    return this.add(item);
  }

  /** Records the turn loom.ask answered for a prompt item. */
  asked(item: UserItem, turn: number): Item[] {
    item.turn = turn;
    if (item.queued && !(turn > this.turn && this.busy())) {
      return this.unqueue(item);
    }
    return [item];
  }

  /** A prompt whose ask failed: out of the queue, into the conversation. */
  failed(item: UserItem): Item[] {
    return item.queued ? this.unqueue(item) : [item];
  }

  /** Moves a queued prompt to the end of the conversation: its turn starts. */
  private unqueue(item: UserItem): Item[] {
    const i = this.queue.indexOf(item);
    if (i >= 0) {
      this.queue.splice(i, 1);
    }
    item.queued = false;
    this.add(item);
    return [item];
  }

  /** A loom/displayMessage delta. */
  delta(p: DisplayMessageParams): { changed: Item[]; gap: boolean } {
    const v = this.assembler.push(p);
    if (v.kind === 'stale') {
      return { changed: [], gap: false };
    }
    const changed = this.startTurn(p.turn);
    if (p.kind === 'thought') {
      let thought = this.openThought;
      if (!thought || thought.turn !== p.turn) {
        thought = this.add({ kind: 'thought', id: this.id('r'), turn: p.turn, text: '' });
        this.openThought = thought;
      }
      thought.text += p.text;
      changed.push(thought);
      return { changed, gap: v.kind === 'gap' };
    }
    if (p.replace) {
      // A retry answers in place of the partial answer: drop it.
      const open = this.openText;
      if (open && open.turn === p.turn) {
        this.assembler.drop(p.folder, p.turn, open.text.length);
        open.text = p.text;
        changed.push(open);
      }
      return { changed, gap: v.kind === 'gap' };
    }
    let item = this.openText;
    if (!item || item.turn !== p.turn) {
      item = this.add({ kind: 'assistant', id: this.id('a'), turn: p.turn, text: '' });
      this.openText = item;
    }
    item.text += p.text;
    changed.push(item);
    return { changed, gap: v.kind === 'gap' };
  }

  /** Moves the queued prompts of turns up to turn into the conversation. */
  private startTurn(turn: number): Item[] {
    if (turn > this.turn) {
      this.turn = turn;
    }
    const changed: Item[] = [];
    for (const it of [...this.queue]) {
      if (it.turn !== undefined && it.turn <= this.turn) {
        changed.push(...this.unqueue(it));
      }
    }
    return changed;
  }

  /**
   * A child's state (loom/subagent), whole: its card, made on the first
   * notification and replaced by each one after.
   */
  subagent(p: SubagentParams): Item {
    const id = subagentItemId(p.child);
    const had = this.byId.get(id);
    const fields = {
      turn: p.turn, callId: p.callId, child: p.child, agent: p.agent, task: p.task, model: p.model || undefined, state: subagentState(p.state),
      activity: p.activity || (had?.kind === 'subagent' ? had.activity : undefined), tokens: p.tokens || (had?.kind === 'subagent' ? had.tokens : 0),
    };
    if (had?.kind === 'subagent') {
      Object.assign(had, fields, { stopping: had.stopping && canStop(fields) });
      return had;
    }
    return this.add({ kind: 'subagent', id, ...fields });
  }

  /** A loom/toolCall status. */
  tool(p: ToolCallParams): Item[] {
    const changed = this.startTurn(p.turn);
    const status = (toolStatuses.includes(p.status) ? p.status : 'running') as ToolStatus;
    // A call is known by its turn and id: model servers reuse ids
    // ("call_1" again after a restart, "call_0" in every response).
    const key = callKey(p.turn, p.id);
    let card = this.byId.get(key) as ToolItem | undefined;
    const view = cardView(p.view, p.summary);
    if (!card) {
      // The approval request may come before the call's first status:
      // the newest open card it made, never an older one (a card an
      // approval made whose call never reported is done by then).
      for (let i = this.main.length - 1; i >= 0 && !card; i--) {
        const it = this.main[i];
        if (it.kind === 'tool' && it.callId === '' && it.name === p.name && !isDone(it.status)) {
          card = it;
        }
      }
      if (card) {
        card.callId = p.id;
        this.byId.set(key, card);
      }
    }
    if (!card) {
      card = this.add<ToolItem>({
        kind: 'tool', id: key, turn: p.turn, callId: p.id, name: p.name,
        title: view.title, path: view.path, status, output: '',
      });
    } else {
      // The arguments come with the pending status (and grow while
      // streaming); later statuses carry none: keep what was said.
      if (p.view && view.title.length >= card.title.length) {
        card.title = view.title;
        card.path = view.path ?? card.path;
      }
      card.status = status;
    }
    // A bare status word ("running") is no output; the last status
    // carries a one-line summary, not the output.
    if (p.progress !== undefined && p.progress !== p.status) {
      if (isDone(status)) {
        card.summary = p.progress;
      } else {
        card.output = p.progress;
      }
    }
    if (p.diff) {
      card.diff = p.diff;
    }
    if ((status === 'succeeded' || status === 'failed' || status === 'cancelled') && card.approval?.state === 'ask') {
      // Answered elsewhere (or the turn ended): the buttons go.
      card.approval.state = status === 'cancelled' || status === 'failed' ? 'denied' : 'allowed';
    }
    changed.push(card);
    return changed;
  }

  /**
   * An approval request for tool with detail (the command): attached to
   * the open call of that tool with that command, or to a card of its own.
   */
  approval(id: string, tool: string, detail: string, always?: string, rules?: { exact?: string; prefix?: string }): ToolItem {
    let card: ToolItem | undefined;
    for (let i = this.main.length - 1; i >= 0 && !card; i--) {
      const it = this.main[i];
      if (it.kind === 'tool' && it.name === tool && !it.approval && !isDone(it.status)) {
        card = it;
      }
    }
    if (!card) {
      card = this.add<ToolItem>({
        kind: 'tool', id: this.id('p'), turn: this.turn, callId: '', name: tool,
        title: tool === 'bash' ? '$ ' + detail : detail, status: 'pending', output: '',
      });
    }
    if (tool === 'bash' && detail.length + 2 > card.title.length) {
      // The whole command (the call's summary may be cut at 200 characters).
      card.title = '$ ' + detail;
    }
    card.approval = { id, detail, state: 'ask', always, ...rules } satisfies Approval;
    return card;
  }

  /** Records the answer to approval id (and the rule chosen, in words); returns the card, if any. */
  answered(id: string, allowed: boolean, rule?: string): ToolItem | undefined {
    const card = this.main.find((it): it is ToolItem => it.kind === 'tool' && it.approval?.id === id);
    if (card?.approval) {
      card.approval.state = allowed ? 'allowed' : 'denied';
      if (rule) {
        card.approval.rule = rule;
      }
    }
    return card;
  }

  /** A loom/state change. */
  setState(state: string, turn?: number): Item[] {
    this.state = state;
    this.down = false;
    if (turn !== undefined && state !== 'WaitingForUserInput') {
      return this.startTurn(turn);
    }
    return [];
  }

  /** The auto-commit of a turn. */
  commit(turn: number, sha: string, message: string): Item {
    return this.add({ kind: 'commit', id: this.id('c'), turn, sha, message });
  }

  /** The sha of the newest commit not undone, if any. */
  newestCommit(): string | undefined {
    for (let i = this.main.length - 1; i >= 0; i--) {
      const it = this.main[i];
      if (it.kind === 'commit' && !it.undone) {
        return it.sha;
      }
    }
    return undefined;
  }

  /** Marks the commit sha (the newest when absent) as undone with the server's words. */
  undone(message: string, sha?: string): Item | undefined {
    for (let i = this.main.length - 1; i >= 0; i--) {
      const it = this.main[i];
      if (it.kind === 'commit' && !it.undone && (!sha || it.sha === sha)) {
        it.undone = message;
        return it;
      }
    }
    return undefined;
  }

  /** An error, warning or note, shown once: a repeat of the last notice is dropped. */
  notice(level: 'error' | 'warning' | 'info', text: string, action?: NoticeAction): Item | undefined {
    const last = this.main[this.main.length - 1];
    if (last?.kind === 'notice' && last.text === text) {
      return undefined;
    }
    return this.add({ kind: 'notice', id: this.id('n'), level, text, action });
  }

  /** The end of a turn, with its outcome and token usage. */
  turnEnded(turn: number, outcome: string, usage?: Usage): Item[] {
    if (usage && usage.total > 0) {
      this.usage = usage;
    }
    const changed: Item[] = [];
    if (this.main.some((it) => it.kind === 'turnEnd' && it.turn === turn && it.outcome === 'interrupted')) {
      // The restarted server closes the turn a reload cut: already marked.
      return changed;
    }
    for (const it of this.main) {
      if (it.kind === 'tool' && it.turn === turn && !isDone(it.status)) {
        it.status = 'cancelled';
        if (it.approval?.state === 'ask') {
          it.approval.state = 'denied';
        }
        changed.push(it);
      }
    }
    changed.push(...this.closePlans());
    changed.push(this.add({ kind: 'turnEnd', id: this.id('e'), turn, outcome, usage }));
    return changed;
  }

  /** Whether text was lost since the last call (redraw from history). */
  takeGap(): boolean {
    return this.assembler.takeGap(this.folder);
  }

  /**
   * Fills the tool cards' output with the results loom.history has,
   * pairing them from the newest (history may be compacted; ids may be
   * reused by the model server).
   */
  toolResults(h: HistoryResult): Item[] {
    const changed: Item[] = [];
    const cards = new Map<string, ToolItem[]>();
    for (const it of this.main) {
      if (it.kind === 'tool' && it.callId !== '') {
        cards.set(it.callId, [...(cards.get(it.callId) ?? []), it]);
      }
    }
    for (const m of [...(h.messages ?? [])].reverse()) {
      const card = m.role === 'tool' && m.toolCallId ? cards.get(m.toolCallId)?.pop() : undefined;
      if (card && isDone(card.status) && card.output !== m.content) {
        card.output = m.content ?? '';
        changed.push(card);
      }
    }
    return changed;
  }

  /**
   * Replaces everything with loom.history's transcript (but the prompts
   * waiting for the server: see clear).
   */
  redraw(h: HistoryResult): void {
    this.clear();
    this.loaded = true;
    this.openText = undefined;
    this.assembler.clearTexts(this.folder);
    this.assembler.takeGap(this.folder);
    let turn = 0;
    const cards = new Map<string, ToolItem>();
    for (const m of h.messages ?? []) {
      if (isLoomNote(m)) {
        // What loom told the model (files changed on disk, a rewind): a
        // notice, not a prompt of the user, and no turn of its own.
        this.notice('info', m.content.replace(/^\[loom\] /, ''));
        continue;
      }
      if (m.role === 'user') {
        turn++;
        const chips = (m.context ?? []).map((c) => c.label ?? c.uri ?? c.kind).filter((l): l is string => !!l);
        this.add({ kind: 'user', id: this.id('u'), text: m.content, turn, ...(chips.length ? { chips } : {}) });
      } else if (m.role === 'assistant') {
        if (m.content) {
          this.add({ kind: 'assistant', id: this.id('a'), turn, text: m.content });
        }
        for (const tc of m.toolCalls ?? []) {
          const view = cardView(tc.view, tc.arguments);
          const card = this.add<ToolItem>({
            kind: 'tool', id: callKey(turn, tc.id), turn, callId: tc.id, name: tc.name,
            title: view.title, path: view.path, status: 'cancelled', output: '',
          });
          cards.set(tc.id, card);
        }
      } else if (m.role === 'tool') {
        const card = m.toolCallId ? cards.get(m.toolCallId) : undefined;
        if (card) {
          card.output = m.content ?? '';
          card.status = historyStatus(card.output);
          if (/^tool error: denied by the user/.test(card.output)) {
            card.approval = { id: '', detail: '', state: 'denied' };
          }
        }
      }
    }
    this.turn = Math.max(this.turn, turn);
  }

  /**
   * Empties the transcript, but for the prompts typed and not yet taken
   * by the server (queued, no turn): no history holds them, and a prompt
   * the user typed never vanishes.
   */
  private clear(): void {
    const waiting = this.queue.filter((it) => it.turn === undefined);
    this.main.length = 0;
    this.queue.length = 0;
    this.byId.clear();
    for (const it of waiting) {
      this.queue.push(it);
      this.byId.set(it.id, it);
    }
    this.openText = undefined;
    this.openThought = undefined;
  }

  /** What to keep across a window reload (the conversation as drawn, and the turn). */
  saved(): SavedTranscript {
    return { version: 1, turn: this.turn, items: this.main, model: this.model, mode: this.mode };
  }

  /**
   * Draws the record kept before a window reload at once, before
   * loom-lsp answers (preview: the server's loom.history then decides
   * what stays, from the record, not from what came meanwhile). A record
   * whose last turn ended says the conversation was idle. Returns false,
   * drawing nothing, for a record it cannot read.
   */
  preview(saved: SavedTranscript | undefined): boolean {
    if (!saved || saved.version !== 1 || !Array.isArray(saved.items) || saved.items.length === 0) {
      return false;
    }
    this.clear();
    for (const it of saved.items) {
      const item = { ...it } as Item;
      this.main.push(item);
      this.byId.set(item.id, item);
      this.next = Math.max(this.next, Number(/\d+$/.exec(item.id)?.[0] ?? 0));
    }
    this.turn = Math.max(this.turn, saved.turn);
    this.model = typeof saved.model === 'string' ? saved.model : this.model;
    this.mode = saved.mode === 'plan' || saved.mode === 'ask' ? saved.mode : 'agent';
    const lastUser = [...this.main].reverse().find((i): i is UserItem => i.kind === 'user');
    const ended = !lastUser || lastUser.turn === undefined || this.main.some((i) => i.kind === 'turnEnd' && i.turn === lastUser.turn);
    this.state = ended ? 'WaitingForUserInput' : '';
    this.previewed = true;
    return true;
  }

  /** Drawn by preview() and not yet from the server. */
  previewed = false;

  /**
   * Draws the conversation kept before a window reload, when it is still
   * the server's (its last prompt is the last user message of
   * loom.history); returns false, drawing nothing, when it is not (a new
   * conversation, another client went on). A turn the reload cut (no end)
   * gets an "interrupted" end; its unfinished cards are cancelled.
   */
  restore(saved: SavedTranscript | undefined, h: HistoryResult, live = false): boolean {
    if (!saved || saved.version !== 1 || !Array.isArray(saved.items) || saved.items.length === 0) {
      return false;
    }
    const users = (h.messages ?? []).filter((m) => m.role === 'user' && !isLoomNote(m));
    const lastSaved = [...saved.items].reverse().find((i): i is UserItem => i.kind === 'user');
    const lastSent = users[users.length - 1]?.content;
    if (!lastSaved || lastSent === undefined || !sameP(lastSaved.text, lastSent)) {
      return false;
    }
    this.clear();
    this.loaded = true;
    for (const it of saved.items) {
      const item = { ...it } as Item;
      this.main.push(item);
      this.byId.set(item.id, item);
      const n = Number(/\d+$/.exec(item.id)?.[0] ?? 0);
      this.next = Math.max(this.next, n);
    }
    this.turn = Math.max(this.turn, saved.turn);
    const lastTurn = lastSaved.turn;
    const ended = lastTurn === undefined || this.main.some((i) => i.kind === 'turnEnd' && i.turn === lastTurn);
    // live: the server still runs that turn (it took up a review that waits): nothing was cut.
    if (!ended && !live) {
      for (const it of this.main) {
        if (it.kind === 'tool' && it.turn === lastTurn && !isDone(it.status)) {
          it.status = 'cancelled';
          if (it.approval?.state === 'ask') {
            it.approval.state = 'denied';
          }
        }
      }
      this.add({ kind: 'turnEnd', id: this.id('e'), turn: lastTurn, outcome: 'interrupted' });
    }
    this.toolResults(h);
    return true;
  }
}

/** What a Transcript keeps across a window reload (workspaceState). */
export interface SavedTranscript {
  version: 1; turn: number; items: Item[];
  /** The model and mode the header said (drawn before loom-lsp answers after a reload). */
  model?: string;
  mode?: Mode;
}

/**
 * Whether a prompt as shown is the message loom.history has for it: the
 * same, or the start of it (the server adds the diagnostic, the
 * selection, the attached context).
 */
function sameP(shown: string, sent: string): boolean {
  const a = shown.trim();
  const b = sent.trim();
  return a === b || b.startsWith(a) || b.includes(a);
}

/** The item id of call id of turn. */
function callKey(turn: number, id: string): string {
  return `t${turn}-${id}`;
}

/** A tool call's status, as its result in loom.history says it. */
function historyStatus(result: string): ToolStatus {
  if (/^tool error: cancelled/.test(result)) {
    return 'cancelled';
  }
  return /^tool error/.test(result) ? 'failed' : 'succeeded';
}

function isDone(s: ToolStatus): boolean {
  return s === 'succeeded' || s === 'failed' || s === 'cancelled';
}

/**
 * Whether a user message of loom.history is loom's own note to the model
 * ("[loom] changed on disk since you read them: …" after a command, a
 * rewind's note, the compaction's summary), not a prompt the user typed:
 * drawn as a notice, never as a prompt, nor counted as a turn. loom-lsp
 * marks them (note).
 */
export function isLoomNote(m: { role: string; content?: string; note?: boolean }): boolean {
  return m.role === 'user' && m.note === true;
}

/** A tool card's words, as the server worded the call (its label, and the file it reads or edits). */
function cardView(view: ToolView | undefined, summary: string): { title: string; path?: string } {
  return view ? { title: view.label, path: view.file || undefined } : { title: summary };
}
