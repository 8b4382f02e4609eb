// What loom.status says of a conversation beyond its state and model —
// its mode, todo list, pending plan, reasoning effort and custom
// commands — taken into the conversation's transcript. The chat applies
// it at every status; the plan mode's handlers (planmode.ts) draw the
// same fields from the server's notifications.
import type { Status } from './protocol';
import type { Mode } from './shared/messages';
import { customCommands } from './slash';
import type { Transcript } from './transcript';
import { Lists } from './wire.gen';

/** The reasoning efforts the header's picker offers, as the server declares them (wire.gen.ts Lists). */
export const efforts: readonly string[] = Lists.efforts;

/** The modes the selector offers. */
export const modes: readonly Mode[] = ['agent', 'plan', 'ask'];

/** Whether m is a mode the selector knows. */
export function isMode(m: unknown): m is Mode {
  return typeof m === 'string' && (modes as readonly string[]).includes(m);
}

/**
 * Takes loom.status' mode, todo list, pending plan and custom commands
 * into t: a plan card the server no longer waits on is closed, and one
 * it waits on but not drawn (a redraw from loom.history) is added.
 * Returns the plan cards changed.
 */
export function applyPlanStatus(t: Transcript, st: Status, canSwitch: boolean, canSetEffort = false) {
  t.modes = canSwitch;
  t.efforts = canSetEffort ? [...efforts] : [];
  t.mode = isMode(st.mode) ? st.mode : 'agent';
  t.plan = Array.isArray(st.plan) ? st.plan : [];
  t.commands = customCommands(st.commands ?? undefined);
  t.effort = typeof st.effort === 'string' ? st.effort : '';
  t.effortChosen = !!st.effortChosen;
  const pending = st.planProposal;
  const changed = t.closePlans(pending?.callId);
  if (pending && !t.items.some((it) => it.kind === 'plan' && it.callId === pending.callId && it.state === 'open')) {
    changed.push(t.planProposal(st.turn, pending.callId, pending.plan));
  }
  return changed;
}
