// LoomFeature: the client-side half of experimental.loom. Type-only imports,
// so it loads under plain node for the tests.
import type { ClientCapabilities, FeatureState, ServerCapabilities, StaticFeature } from 'vscode-languageclient/node';
import { experimentalCapability } from './protocol';

/**
 * LoomFeature declares experimental.loom = {saveDocuments: true, thoughts:
 * true, workspaceTrust: true}, which makes loom-lsp send loom/* notifications
 * (the model's thinking included) and loom/saveDocuments, and take VS
 * Code's workspace trust from initializationOptions, and
 * takes the server's loom.* commands out of vscode-languageclient's
 * automatic command registration: the extension registers those command
 * IDs itself (they need a prompt, the selection and the folder), and two
 * registrations of one ID would fail.
 */
export class LoomFeature implements StaticFeature {
  /**
   * Every command the server lists (initialize's executeCommandProvider),
   * taken before the loom.* ones are filtered out: what the server can
   * do (loom.models, loom.setModel, …).
   */
  readonly serverCommands = new Set<string>();

  fillClientCapabilities(caps: ClientCapabilities): void {
    caps.experimental = { ...(caps.experimental as object | undefined), ...experimentalCapability };
  }
  preInitialize(caps: ServerCapabilities): void {
    const p = caps.executeCommandProvider;
    if (p?.commands) {
      for (const c of p.commands) {
        this.serverCommands.add(c);
      }
      // Every loom.* command, not only those of Commands: the extension
      // calls the server's commands itself (sendRequest), and one it also
      // registers (loom.redo, a later loom.newConversation …) would make
      // the client fail to start with "command … already exists".
      p.commands = p.commands.filter((c) => !c.startsWith('loom.'));
    }
  }
  initialize(): void { /* nothing to do */ }
  getState(): FeatureState { return { kind: 'static' }; }
  clear(): void { /* nothing to clear */ }
}
