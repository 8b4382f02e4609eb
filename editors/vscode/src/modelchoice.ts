// The model and the reasoning effort of a conversation, as the panel
// chooses them: the header's model picker and "/model" (loom.setModel),
// the effort picker (loom.setEffort), the first-run setup card (the user
// settings loom.model.*), the server's model list (loom.models, asked
// once per model in use) and, while loom.status says no model, the setup
// card shown, loom.status asked again and the prompt that failed for want
// of a model put back once one is set.
import * as vscode from 'vscode';
import { Commands, ConversationArgs, ModelsResult, Status } from './protocol';
import type { NoticeAction, SetupChoice } from './shared/messages';
import type { Transcript } from './transcript';

/** What the model choice needs from the chat. */
export interface ModelHost {
  /** The folder shown. */
  current(): string | undefined;
  /** The transcript of folder's shown conversation. */
  transcript(folder: string): Transcript;
  /** The arguments that select t's conversation. */
  argsFor(t: Transcript): ConversationArgs;
  /** Runs a loom.* command on the server. */
  exec<T>(command: string, args: object): Promise<T>;
  /** Whether the server lists command. */
  has(command: string): boolean;
  /** Says something in the shown conversation. */
  notice(level: 'error' | 'warning' | 'info', text: string, action?: NoticeAction): void;
  /** Asks loom.status of every folder again and draws it. */
  refreshStatus(): Promise<void>;
  /** The panel, whose input gets the prompt back. */
  readonly panel: { fill(text: string): void };
}

/** ModelChoice switches a conversation's model and effort and keeps its model list. */
export class ModelChoice {
  /** Per folder: the prompt that failed for want of a model, put back once one is set. */
  private readonly unsentPrompts = new Map<string, string>();
  /** The model in use when each transcript's model list was asked. */
  private readonly listedFor = new WeakMap<Transcript, string>();
  private rechecks = 0;
  private recheckTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly host: ModelHost) {}

  /** A prompt of folder failed for want of a model: it comes back into the input once one is set. */
  unsent(folder: string, prompt: string): void {
    this.unsentPrompts.set(folder, prompt);
  }

  /**
   * Takes loom.status' model into t: with none, the setup card (and
   * loom.status asked again); once there is one, the prompt that waited
   * for it, and the server's model list for the picker.
   */
  async apply(t: Transcript, st: Status): Promise<void> {
    const wasSetup = t.setup;
    t.setup = st.model === '' || /\bmodel\b|base_url/.test(st.configError ?? '');
    if (t.setup) {
      // No model: no picker (the setup card asks), and a new list once one is set.
      t.models = [];
      this.listedFor.delete(t);
      this.recheck();
    }
    if (wasSetup && !t.setup) {
      const prompt = this.unsentPrompts.get(t.folder);
      this.unsentPrompts.delete(t.folder);
      if (prompt && t.folder === this.host.current()) {
        this.host.panel.fill(prompt);
      }
    }
    // The list is asked once per model in use (not at every turn's end:
    // each ask is a request to the model server).
    if (this.host.has(Commands.models) && !t.setup && (t.models.length === 0 || this.listedFor.get(t) !== st.model)) {
      this.listedFor.set(t, st.model);
      try {
        const r = await this.host.exec<ModelsResult>(Commands.models, this.host.argsFor(t));
        t.models = (r?.models ?? []).map((m) => m.id).filter((id) => typeof id === 'string');
      } catch {
        t.models = [];
      }
    }
  }

  /** The settings changed: loom.status is asked again (and again while it says no model). */
  async settingsChanged(): Promise<void> {
    this.rechecks = 0;
    await this.host.refreshStatus();
  }

  /**
   * Asks loom.status again a few times (0.5 s … 8 s) while it says no
   * model: the server applies a settings change on its own goroutines,
   * so a status asked right after may still be the old one.
   */
  private recheck(): void {
    if (this.recheckTimer || this.rechecks >= 5) {
      return;
    }
    const delay = 500 * 2 ** this.rechecks++;
    this.recheckTimer = setTimeout(() => {
      this.recheckTimer = undefined;
      void this.host.refreshStatus();
    }, delay);
  }

  /**
   * Writes the setup card's choice to the user settings (loom.model.*);
   * the configuration change reaches the server and loom.status then says
   * the model, which takes the card away.
   */
  async setup(choice: SetupChoice): Promise<void> {
    const loom = vscode.workspace.getConfiguration('loom');
    const g = vscode.ConfigurationTarget.Global;
    try {
      await loom.update('model.provider', choice.provider || 'openai', g);
      await loom.update('model.baseUrl', choice.baseUrl.trim(), g);
      await loom.update('model.name', choice.model.trim(), g);
      await loom.update('model.apiKeyEnv', choice.apiKeyEnv.trim(), g);
    } catch (e) {
      this.host.notice('error', `Could not save the model settings: ${errorText(e)}`);
    }
  }

  /** The arguments that select the shown conversation of folder. */
  private argsOfShown(folder: string): ConversationArgs {
    return this.host.argsFor(this.host.transcript(folder));
  }

  /** Switches the current conversation's model (loom.setModel). */
  async setModel(model: string): Promise<void> {
    const folder = this.host.current();
    if (!folder || model.trim() === '') {
      return;
    }
    if (!this.host.has(Commands.setModel)) {
      this.host.notice('error', 'This loom-lsp cannot switch models per conversation; set loom.model.name in Settings.');
      return;
    }
    try {
      // loom-lsp says the switch in the conversation (loom/notice).
      await this.host.exec(Commands.setModel, { ...this.argsOfShown(folder), model: model.trim() });
    } catch (e) {
      this.host.notice('error', errorText(e));
    }
    await this.host.refreshStatus();
  }

  /** Sets the current conversation's reasoning effort (loom.setEffort; "" = back to the configured one). */
  async setEffort(effort: string): Promise<void> {
    const folder = this.host.current();
    if (!folder) {
      return;
    }
    try {
      // loom-lsp says the change in the conversation (loom/notice).
      await this.host.exec(Commands.setEffort, { ...this.argsOfShown(folder), effort });
    } catch (e) {
      this.host.notice('error', errorText(e));
    }
    await this.host.refreshStatus();
  }

  /** Asks the user for a model from the server's list (/model without a name). */
  async pickModel(): Promise<void> {
    const folder = this.host.current();
    const t = folder ? this.host.transcript(folder) : undefined;
    const models = t?.models ?? [];
    const pick = models.length > 0
      ? await vscode.window.showQuickPick(models.map((m) => ({ label: m, description: m === t?.model ? 'current' : undefined })),
        { placeHolder: 'The model for this conversation' })
      : undefined;
    if (pick) {
      await this.setModel(pick.label);
    } else if (models.length === 0) {
      this.host.notice('info', 'The model server lists no models; type /model NAME.');
    }
  }
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
