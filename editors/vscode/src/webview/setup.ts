// The first-run setup card: shown in the panel while no model is
// configured. A server preset fills the base URL and the key's variable;
// "List models" asks the server for its models; Save writes the user
// settings loom.model.*, and the card goes once the server has a model.
import type { SetupChoice } from '../shared/messages';
import { button, el, post } from './dom';

interface Preset { name: string; baseUrl: string; apiKeyEnv: string }

/** The model servers people start with (all OpenAI-compatible). */
export const presets: readonly Preset[] = [
  { name: 'Ollama (this machine)', baseUrl: 'http://localhost:11434/v1', apiKeyEnv: '' },
  { name: 'LM Studio (this machine)', baseUrl: 'http://localhost:1234/v1', apiKeyEnv: '' },
  { name: 'llama.cpp server (this machine)', baseUrl: 'http://localhost:8080/v1', apiKeyEnv: '' },
  { name: 'vLLM (this machine)', baseUrl: 'http://localhost:8000/v1', apiKeyEnv: '' },
  { name: 'OpenAI', baseUrl: 'https://api.openai.com/v1', apiKeyEnv: 'OPENAI_API_KEY' },
  { name: 'OpenRouter', baseUrl: 'https://openrouter.ai/api/v1', apiKeyEnv: 'OPENROUTER_API_KEY' },
  { name: 'Another OpenAI-compatible server', baseUrl: '', apiKeyEnv: '' },
];

const card = el('section', 'setup');
card.setAttribute('aria-label', 'Set up a model');
const server = el('select', 'setup-server');
const baseUrl = el('input', 'setup-base-url');
const model = el('input', 'setup-model');
const list = el('datalist');
const keyEnv = el('input', 'setup-key-env');
const note = el('div', 'setup-note');
note.setAttribute('role', 'status');

function field(label: string, input: HTMLElement, id: string, hint?: string): HTMLElement {
  const row = el('div', 'setup-row');
  const l = el('label', undefined, label);
  l.htmlFor = id;
  input.id = id;
  row.append(l, input);
  if (hint) {
    const h = el('div', 'hint', hint);
    h.id = id + '-hint';
    input.setAttribute('aria-describedby', h.id);
    row.append(h);
  }
  return row;
}

server.replaceChildren(...presets.map((p, i) => {
  const o = el('option', undefined, p.name);
  o.value = String(i);
  return o;
}));
list.id = 'setup-models';
model.setAttribute('list', list.id);
model.placeholder = 'e.g. qwen2.5-coder';
baseUrl.placeholder = 'http://localhost:11434/v1';
keyEnv.placeholder = 'none';
for (const i of [baseUrl, model, keyEnv]) {
  i.spellcheck = false;
}
const apply = () => {
  const p = presets[Number(server.value)];
  baseUrl.value = p.baseUrl;
  keyEnv.value = p.apiKeyEnv;
};
server.addEventListener('change', apply);
apply();
const listBtn = button('List models', 'secondary setup-list', () => {
  note.textContent = 'Asking the server for its models…';
  post({ type: 'listModels', baseUrl: baseUrl.value, apiKeyEnv: keyEnv.value });
});
const saveBtn = button('Save', 'primary setup-save', () => {
  if (baseUrl.value.trim() === '' || model.value.trim() === '') {
    note.textContent = 'Give the base URL and the model.';
    (baseUrl.value.trim() === '' ? baseUrl : model).focus();
    return;
  }
  const choice: SetupChoice = { provider: 'openai', baseUrl: baseUrl.value, model: model.value, apiKeyEnv: keyEnv.value };
  note.textContent = 'Saved to your user settings (loom.model.*); connecting…';
  post({ type: 'setup', choice });
});
const modelRow = field('Model', model, 'setup-model');
modelRow.append(listBtn, list);
card.append(
  el('h2', undefined, 'Set up a model'),
  el('p', undefined, 'Loom talks to any OpenAI-compatible model server. Choose yours; this is saved in your user settings.'),
  field('Server', server, 'setup-server'),
  field('Base URL', baseUrl, 'setup-base-url'),
  modelRow,
  field('API key variable', keyEnv, 'setup-key-env', 'The name of the environment variable that holds the key (never the key itself); empty for a local server.'),
  saveBtn, note,
);

/** The setup card element. */
export const setupCard = card;

/** Shows the models a server listed (or why none). */
export function setupModels(models: string[], error?: string): void {
  list.replaceChildren(...models.map((m) => {
    const o = el('option');
    o.value = m;
    return o;
  }));
  if (error) {
    note.textContent = `Could not list the models: ${error}`;
  } else {
    note.textContent = `${models.length} model(s): pick one in the Model field.`;
    if (!model.value && models.length > 0) {
      model.value = models[0];
    }
  }
}
