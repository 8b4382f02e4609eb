// The panel's header: the folder (a picker in a multi-root workspace),
// the model (a picker of the server's models), the state, the tokens of
// the last turn and New.
import type { Header } from '../shared/messages';
import { button, el, formatTokens, post, state } from './dom';
import { drawReviewToggle, reviewToggle } from './reviewtoggle';

const bar = el('header', 'bar');
const folders = el('select', 'folders');
folders.title = 'Workspace folder';
folders.setAttribute('aria-label', 'Workspace folder');
const title = el('div', 'title');
const modelName = el('span', 'model');
const modelPick = el('select', 'model-picker');
modelPick.setAttribute('aria-label', 'Model for this conversation');
modelPick.title = 'The model of this conversation (loom.setModel)';
const effortPick = el('select', 'effort-picker');
effortPick.setAttribute('aria-label', 'Reasoning effort for this conversation');
effortPick.title = 'How hard the model thinks in this conversation (loom.setEffort); default: [model] reasoning_effort';
const stateEl = el('span', 'state');
const usageEl = el('span', 'usage');
title.append(modelName, modelPick, effortPick, stateEl, usageEl);
const newBtn = button('New', 'icon', () => post({ type: 'newConversation' }), 'New conversation (the others stay in the list)');
bar.append(folders, title, reviewToggle, newBtn);

folders.addEventListener('change', () => post({ type: 'pickFolder', folder: folders.value }));
modelPick.addEventListener('change', () => post({ type: 'setModel', model: modelPick.value }));
effortPick.addEventListener('change', () => post({ type: 'setEffort', effort: effortPick.value }));

/** The effort picker: "default (…)" for the configured effort, then each effort. */
function drawEffort(h: Header | undefined): void {
  const list = h?.efforts ?? [];
  effortPick.hidden = list.length === 0;
  if (list.length === 0) {
    return;
  }
  const chosen = h?.effortChosen ? h.effort ?? '' : '';
  const configured = h?.effortChosen ? '' : h?.effort ?? '';
  const def = el('option', undefined, configured ? `effort: default (${configured})` : 'effort: default');
  def.value = '';
  effortPick.replaceChildren(def, ...list.map((e) => {
    const o = el('option', undefined, `effort: ${e}`);
    o.value = e;
    return o;
  }));
  effortPick.value = chosen;
}

/** The header element. */
export const headerBar = bar;

/** Draws h. */
export function drawHeader(h: Header | undefined): void {
  folders.replaceChildren(...state.folders.map((f) => {
    const o = el('option', undefined, f.name);
    o.value = f.path;
    o.selected = f.path === h?.folder;
    return o;
  }));
  folders.hidden = state.folders.length < 2;
  const model = h?.model ?? '';
  const models = h?.models ?? [];
  modelName.textContent = model || 'no model';
  modelName.title = model ? `Model: ${model}` : 'No model configured: set one up in the card below';
  if (models.length > 0) {
    const names = models.includes(model) || !model ? models : [model, ...models];
    modelPick.replaceChildren(...names.map((m) => {
      const o = el('option', undefined, m);
      o.value = m;
      o.selected = m === model;
      return o;
    }));
  }
  // The picker when the server lists models, else the name alone.
  modelPick.hidden = models.length === 0;
  modelName.hidden = models.length > 0;
  drawEffort(h);
  stateEl.textContent = h?.state ?? '';
  stateEl.className = 'state' + (h?.busy ? ' busy' : '') + (h?.down ? ' down' : '');
  usageEl.textContent = h?.usage ? `${formatTokens(h.usage.total)} tokens` : '';
  drawReviewToggle(h);
  usageEl.title = h?.usage ? `Last turn: ${h.usage.prompt} prompt + ${h.usage.completion} completion tokens` : '';
}
