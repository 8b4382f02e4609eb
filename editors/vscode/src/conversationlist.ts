// The panel header's conversation list, on the extension side: New, open,
// rename and delete through loom-lsp's conversation commands, and the
// list (loom.conversations merged with what runs here) sent to the panel
// whenever it changes. Switching leaves the other conversations running:
// their notifications keep going to their own transcripts (chat.ts).
import * as vscode from 'vscode';
import { Chat, errorText } from './chat';
import type { ConversationInfo } from './conversations';
import { Commands, PanelState } from './protocol';
import type { FromWebview } from './shared/messages';

/** ConversationList answers the panel's conversation messages. */
export class ConversationList {
  constructor(private readonly chat: Chat) {
    chat.conversationList = (m) => this.handle(m);
    chat.onBusyChange = (t) => this.draw(t.folder);
  }

  async handle(msg: FromWebview): Promise<void> {
    switch (msg.type) {
      case 'newConversation':
        await this.create();
        break;
      case 'openConversation':
        await this.open(msg.id);
        break;
      case 'renameConversation':
        await this.rename(msg.id, msg.title);
        break;
      case 'deleteConversation':
        await this.remove(msg.id);
        break;
      case 'listConversations':
        await this.refresh();
        break;
    }
  }

  /**
   * Draws every folder's conversation at startup: the one shown in the
   * last window when the server still has it, else the folder's most
   * recent. One loom.panelState per folder answers everything (when it
   * fails, the parts are asked one by one). Returns each folder's panel
   * state, for the rest of the panel.
   */
  async start(): Promise<Map<string, PanelState>> {
    const states = new Map<string, PanelState>();
    await Promise.all(this.chat.folders().map(async (f) => {
      const st = await this.startFromState(f.path);
      if (st) {
        states.set(f.path, st);
        return;
      }
      await this.refresh(f.path);
      const last = this.chat.kept.rememberedShown(f.path);
      const listed = this.chat.entries(f.path).find((c) => c.id === last);
      if (last && listed && !listed.elsewhere && this.chat.convs.shownId(f.path) !== last) {
        try {
          await this.chat.exec(Commands.openConversation, { uri: uriOf(f.path), id: last });
          this.chat.convs.show(f.path, last);
        } catch { /* the folder's most recent, then */ }
      }
      await this.chat.redraw(f.path);
      this.draw(f.path);
    }));
    return states;
  }

  /** Draws folder from one loom.panelState; undefined when the server cannot answer it. */
  private async startFromState(folder: string): Promise<PanelState | undefined> {
    const last = this.chat.kept.rememberedShown(folder);
    let st: PanelState<ConversationInfo>;
    try {
      st = await this.chat.exec<PanelState<ConversationInfo>>(Commands.panelState, { uri: uriOf(folder), ...(last ? { conversation: last } : {}) });
    } catch {
      return undefined;
    }
    if (!st?.history || !st.status) {
      return undefined;
    }
    this.chat.convs.setList(folder, Array.isArray(st.conversations) ? st.conversations : []);
    if (st.conversation && this.chat.convs.shownId(folder) !== st.conversation) {
      if (!this.chat.convs.adopt(folder, st.conversation)) {
        this.chat.convs.show(folder, st.conversation);
      }
    }
    await this.chat.redrawFromState(folder, st);
    this.draw(folder);
    return st;
  }

  /** Asks the server for folder's list and draws it. */
  async refresh(folder = this.chat.current()): Promise<void> {
    if (!folder || !this.chat.has(Commands.conversations)) {
      return;
    }
    try {
      const list = await this.chat.exec<ConversationInfo[] | null>(Commands.conversations, { uri: uriOf(folder) });
      this.chat.convs.setList(folder, Array.isArray(list) ? list : []);
    } catch { /* keep the last list */ }
    this.draw(folder);
  }

  /** Sends folder's list (and the shown conversation's header, for its title) to the panel. */
  draw(folder: string): void {
    this.chat.panel.conversations(folder, this.chat.entries(folder));
    const t = this.chat.transcript(folder);
    t.title = this.chat.convs.title(folder, t.conversation);
    this.chat.panel.header(t.header());
  }

  /** New: a conversation beside the others, which go on running; it is shown. */
  async create(): Promise<void> {
    const folder = this.chat.current();
    if (!folder) {
      return;
    }
    const shown = this.chat.transcript(folder);
    if (shown.conversation !== '' && shown.items.length === 0 && !shown.busy()) {
      // The conversation shown is new already: it is the one to type in.
      this.chat.panel.refresh();
      this.chat.focusInput();
      return;
    }
    try {
      const c = await this.chat.exec<ConversationInfo>(Commands.newConversation, { uri: uriOf(folder) });
      this.show(folder, c.id, true);
      this.chat.focusInput();
      await this.chat.refreshStatus();
    } catch (e) {
      this.chat.notice('error', `Could not start a new conversation: ${errorText(e)}`);
    }
    await this.refresh(folder);
  }

  /**
   * Shows conversation id. One already drawn here is shown as it stands
   * (with what arrived while another was shown); one opened from its
   * journal is drawn from the record kept for a reload, else from
   * loom.history.
   */
  async open(id: string): Promise<void> {
    const folder = this.chat.current();
    if (!folder || id === this.chat.convs.shownId(folder)) {
      return;
    }
    try {
      await this.chat.exec(Commands.openConversation, { uri: uriOf(folder), id });
    } catch (e) {
      this.chat.notice('error', errorText(e));
      await this.refresh(folder);
      return;
    }
    const fresh = this.show(folder, id);
    // Known here only from notifications (a restarted server's "resumed" notice): drawn from the server too.
    if (fresh || !this.chat.transcript(folder).loaded) {
      await this.chat.redraw(folder);
    } else {
      await this.chat.refreshStatus();
    }
    await this.refresh(folder);
  }

  /** Shows id in the panel; returns whether it is new here (to draw from the server). */
  private show(folder: string, id: string, created = false): boolean {
    const { transcript, fresh } = this.chat.convs.show(folder, id);
    if (created) {
      // A new conversation has nothing on the server to draw: it is whole.
      transcript.loaded = true;
    }
    this.chat.kept.rememberShown(folder, id);
    this.chat.panel.refresh();
    return fresh;
  }

  /** Sets conversation id's title ("" goes back to its first prompt's). */
  async rename(id: string, title: string): Promise<void> {
    const folder = this.chat.current();
    if (!folder) {
      return;
    }
    try {
      await this.chat.exec(Commands.renameConversation, { uri: uriOf(folder), id, title: title.trim() });
    } catch (e) {
      this.chat.notice('error', `Could not rename the conversation: ${errorText(e)}`);
    }
    await this.refresh(folder);
  }

  /**
   * Deletes conversation id (the panel asked for confirmation; the
   * server keeps its journal in the trash for a while). When it was the
   * one shown, the next one of the list is shown, or a new one.
   */
  async remove(id: string): Promise<void> {
    const folder = this.chat.current();
    if (!folder) {
      return;
    }
    try {
      await this.chat.exec(Commands.deleteConversation, { uri: uriOf(folder), id });
    } catch (e) {
      this.chat.notice('error', `Could not delete the conversation: ${errorText(e)}`);
      return;
    }
    const wasShown = this.chat.convs.shownId(folder) === id;
    this.chat.convs.remove(folder, id);
    await this.chat.kept.forget(folder, id);
    await this.refresh(folder);
    if (wasShown) {
      const next = this.chat.entries(folder).find((c) => !c.elsewhere);
      if (next) {
        await this.open(next.id);
      } else {
        await this.create();
      }
    }
  }
}

function uriOf(folder: string): string {
  return vscode.Uri.file(folder).toString();
}
