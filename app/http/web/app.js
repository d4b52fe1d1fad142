// @ts-check
// The web page's script: a plain ES module, type-checked by tsc (allowJs) and served as it is. It talks to the public
// API like any client: /openapi.json for the operations and their forms, /upload, the operation with
// `Request-Type: requestId`, /request-status for progress, /resource for previews and downloads.

/**
 * @typedef {{ field: string, required: boolean, extensions?: string[] }} InputMeta
 * @typedef {{
 *   type?: string | string[], enum?: unknown[], items?: Schema, properties?: Record<string, Schema>, required?: string[],
 *   description?: string, default?: unknown, minimum?: number, maximum?: number, exclusiveMinimum?: number,
 *   maxLength?: number, examples?: unknown[], anyOf?: Schema[], 'x-input'?: InputMeta
 * }} Schema
 * @typedef {{ path: string, tag: string, summary: string, description: string, schema: Schema }} Op
 * @typedef {{ id: string, name: string, type?: string, size?: number }} StoredFile
 * @typedef {{ read: () => unknown }} Reader
 */

import { api, byId, extension, h, ids, runJob, size } from './lib.js';
import { initWorkbench } from './workbench.js';

const KEY = 'quire.apiKey';
const FILES = 'quire.files';
const PREVIEW_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/bmp'];
const MAX_PREVIEWS = 12;

const ui = {
  key: byId('api-key', HTMLInputElement),
  search: byId('op-search', HTMLInputElement),
  count: byId('op-count', HTMLElement),
  list: byId('op-list', HTMLElement),
  drop: byId('drop', HTMLElement),
  pick: byId('file-pick', HTMLInputElement),
  stored: byId('stored', HTMLElement),
  form: byId('op-form', HTMLFormElement),
  formHeading: byId('form-h', HTMLElement),
  desc: byId('op-desc', HTMLElement),
  inputs: byId('op-inputs', HTMLElement),
  fields: byId('op-fields', HTMLElement),
  run: byId('run', HTMLButtonElement),
  progressBox: byId('progress-box', HTMLElement),
  progress: byId('progress', HTMLProgressElement),
  status: byId('status', HTMLElement),
  error: byId('error', HTMLElement),
  result: byId('result', HTMLElement),
  resultHeading: byId('result-h', HTMLElement),
  outputs: byId('outputs', HTMLElement),
  json: byId('result-json', HTMLElement),
};

/** @type {Op[]} */
const ops = [];
/** @type {Op | undefined} */
let current;
/** @type {StoredFile[]} */
let stored = readStored();
/** Ids the next operation takes by default: the last upload, or the result chosen with "Use as input". */
let chosen = stored.length ? [stored[stored.length - 1].id] : [];
/** What the form sends: the inputs' id fields and the parameters, each read from its control. */
/** @type {Map<string, Reader>} */
const inputReaders = new Map();
/** @type {Map<string, Reader>} */
const fieldReaders = new Map();
/** The id field of the operation's main input: the file a batch or a pipeline step feeds in. */
let mainInput = '';

/** @returns {StoredFile[]} */
function readStored() {
  try {
    const v = JSON.parse(sessionStorage.getItem(FILES) ?? '[]');
    return Array.isArray(v) ? v : [];
  } catch {
    return [];
  }
}

/** @param {unknown} err */
function showError(err) {
  ui.error.textContent = err instanceof Error ? err.message : String(err);
}

/**
 * Descriptions are written for /docs, in Markdown: `code` spans become <code>, the rest stays text.
 * @param {string} text
 */
const rich = (text) => text.split('`').map((part, i) => (i % 2 ? h('code', {}, [part]) : part));

/** @param {string} name */
const label = (name) => name.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());

// ---- Operations: the list, grouped by OpenAPI tag as /docs groups them, filtered as one types.

async function loadOperations() {
  const doc = await api('/openapi.json');
  for (const [path, item] of Object.entries(doc.paths)) {
    const post = item.post;
    const schema = post?.requestBody?.content?.['application/json']?.schema;
    if (!schema || post.tags?.[0] === 'Resources') continue;
    ops.push({ path, tag: post.tags?.[0] ?? 'Other', summary: post.summary ?? path, description: post.description ?? '', schema });
  }
  /** @type {Map<string, Op[]>} */
  const groups = new Map();
  for (const op of ops) groups.set(op.tag, [...(groups.get(op.tag) ?? []), op]);
  for (const [tag, members] of groups) {
    const fieldset = h('fieldset', {}, [h('legend', {}, [tag])]);
    for (const op of members) {
      const radio = h('input', { type: 'radio', name: 'op', value: op.path, id: `op-${op.path.slice(1)}` });
      radio.addEventListener('change', () => selectOperation(op));
      fieldset.append(
        h('label', { 'data-search': `${op.summary} ${op.path} ${op.tag} ${op.description}`.toLowerCase() }, [
          radio,
          h('span', {}, [op.summary]),
          h('code', {}, [op.path]),
        ]),
      );
    }
    ui.list.append(fieldset);
  }
  filterOperations();
  selectFromHash();
  window.addEventListener('hashchange', selectFromHash);
}

/** `/#/png` opens that operation: links to the page can name one. */
function selectFromHash() {
  const wanted = ops.find((o) => `#${o.path}` === location.hash);
  if (!wanted || wanted === current) return;
  byId(`op-${wanted.path.slice(1)}`, HTMLInputElement).checked = true;
  selectOperation(wanted);
}

function filterOperations() {
  const words = ui.search.value.toLowerCase().split(/\s+/).filter(Boolean);
  let shown = 0;
  for (const fieldset of ui.list.querySelectorAll('fieldset')) {
    let any = false;
    for (const lbl of fieldset.querySelectorAll('label')) {
      const match = words.every((w) => (lbl.dataset.search ?? '').includes(w));
      lbl.hidden = !match;
      any ||= match;
      if (match) shown++;
    }
    fieldset.hidden = !any;
  }
  ui.count.textContent = words.length ? `${shown} of ${ops.length} operations match` : `${ops.length} operations`;
}

// ---- The form of one operation, generated from its request schema.

/** @param {Op} op */
function selectOperation(op) {
  current = op;
  history.replaceState(null, '', `#${op.path}`);
  ui.formHeading.textContent = `${op.summary} (${op.path})`;
  ui.desc.replaceChildren(...rich(op.description));
  ui.run.disabled = false;
  renderInputs();
  renderFields();
}

/** @param {Schema} s */
const inputMeta = (s) => s['x-input'];

function renderInputs() {
  ui.inputs.replaceChildren();
  inputReaders.clear();
  if (!current) return;
  let first = true;
  for (const [idField, s] of Object.entries(current.schema.properties ?? {})) {
    const meta = inputMeta(s);
    if (!meta) continue;
    // The chosen files go to the main (first) input; secondary ones (an image to add, form data...) are picked by hand.
    const preset = first ? chosen : [];
    if (first) mainInput = idField;
    first = false;
    const many = s.type === 'array';
    const files = stored.filter((f) => !meta.extensions?.length || meta.extensions.includes(extension(f.name)));
    const legend = h('legend', {}, [label(meta.field), meta.required ? h('span', { class: 'req' }, [' (required)']) : '']);
    const helpId = `in-${idField}-help`;
    const kinds = meta.extensions?.length ? ` (${meta.extensions.map((e) => `.${e}`).join(' ')})` : '';
    const help = files.length
      ? `${many ? 'Files, in list order,' : 'A file'} from the stored files${kinds}.`
      : `No suitable stored file yet${kinds}: upload one above.`;
    const fieldset = h('fieldset', { class: 'field', 'aria-describedby': helpId }, [legend, h('p', { class: 'help', id: helpId }, [help])]);
    if (many) {
      const boxes = files.map((f) => {
        const box = h('input', { type: 'checkbox', value: f.id, checked: preset.includes(f.id) });
        fieldset.append(h('label', {}, [box, ` ${f.name}`]));
        return box;
      });
      inputReaders.set(idField, { read: () => boxes.filter((b) => b.checked).map((b) => b.value) });
    } else {
      const id = `in-${idField}`;
      const pick = preset.find((c) => files.some((f) => f.id === c)) ?? (preset.length ? files[files.length - 1]?.id : undefined);
      const select = h('select', { id, required: meta.required }, [h('option', { value: '' }, [meta.required ? 'Choose a file' : 'None'])]);
      for (const f of files) select.append(h('option', { value: f.id, selected: f.id === pick }, [f.name]));
      fieldset.append(h('label', { for: id }, ['Stored file']), select);
      inputReaders.set(idField, { read: () => select.value });
    }
    ui.inputs.append(fieldset);
  }
}

/**
 * The `type` field of merges orders uploads against ids; the page sends every input by id, so it has no meaning here.
 * @param {Schema} s
 */
const isUploadOrder = (s) => s.type === 'array' && JSON.stringify(s.items?.enum) === '["file","id"]';

function renderFields() {
  ui.fields.replaceChildren();
  fieldReaders.clear();
  if (!current) return;
  const required = new Set(current.schema.required ?? []);
  for (const [name, s] of Object.entries(current.schema.properties ?? {})) {
    if (inputMeta(s) || isUploadOrder(s)) continue;
    ui.fields.append(field(name, s, required.has(name)));
  }
}

/**
 * One control per parameter: enums as selects, two-state switches as switches, numbers with their bounds,
 * lists of choices as check boxes, free lists one per line, structured values as JSON text.
 * @param {string} name
 * @param {Schema} s
 * @param {boolean} required
 * @returns {HTMLElement}
 */
function field(name, s, required) {
  const id = `f-${name}`;
  const helpId = `${id}-help`;
  const help = [s.description ?? ''];
  const req = required ? h('span', { class: 'req' }, [' (required)']) : '';
  const values = s.enum?.map(String);
  const isSwitch = values?.length === 2 && ['on,off', 'off,on', 'true,false', 'false,true'].includes(values.join());

  if (s.type === 'boolean' || isSwitch) {
    const on = values ? (values.includes('on') ? 'on' : 'true') : 'true';
    const off = on === 'on' ? 'off' : 'false';
    const box = h('input', { type: 'checkbox', role: 'switch', id, checked: String(s.default) === on, 'aria-describedby': s.description ? helpId : undefined });
    fieldReaders.set(name, { read: () => (box.checked ? on : off) });
    return h('div', { class: 'field' }, [
      h('label', { class: 'switch', for: id }, [box, label(name)]),
      s.description ? h('p', { class: 'help', id: helpId }, rich(s.description)) : '',
    ]);
  }
  if (s.type === 'array' && s.items?.enum) {
    const boxes = s.items.enum.map(String).map((v) => h('input', { type: 'checkbox', value: v, checked: Array.isArray(s.default) && s.default.includes(v) }));
    fieldReaders.set(name, { read: () => boxes.filter((b) => b.checked).map((b) => b.value) });
    const fieldset = h('fieldset', { class: 'field', 'aria-describedby': s.description ? helpId : undefined }, [h('legend', {}, [label(name), req])]);
    for (const b of boxes) fieldset.append(h('label', {}, [b, ` ${b.value}`]));
    if (s.description) fieldset.append(h('p', { class: 'help', id: helpId }, rich(s.description)));
    return fieldset;
  }

  /** @type {HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement} */
  let control;
  /** @type {() => unknown} */
  let read = () => control.value.trim();
  /** @type {HTMLElement | string} */
  let shape = '';
  if (values) {
    control = h('select', { id, required }, [
      h('option', { value: '' }, [s.default !== undefined ? `Default (${s.default})` : required ? 'Choose' : 'Server default']),
    ]);
    for (const v of values) control.append(h('option', { value: v }, [v]));
  } else if (s.type === 'integer' || s.type === 'number') {
    const integer = s.type === 'integer';
    control = h('input', {
      type: 'number',
      id,
      required,
      inputmode: integer ? 'numeric' : 'decimal',
      step: integer ? '1' : 'any',
      min: s.minimum?.toString(),
      max: s.maximum?.toString(),
      placeholder: s.default?.toString(),
    });
    if (s.minimum !== undefined && s.maximum !== undefined) help.push(`From ${s.minimum} to ${s.maximum}.`);
    else if (s.exclusiveMinimum !== undefined) help.push(`More than ${s.exclusiveMinimum}.`);
  } else if (s.type === 'array') {
    control = h('textarea', { id, required, rows: '3' });
    help.push('One value per line.');
    read = () =>
      control.value
        .split('\n')
        .map((v) => v.trim())
        .filter(Boolean);
  } else if (s.items || s.properties || s.type === 'object') {
    control = h('textarea', { id, required, rows: '6', spellcheck: 'false' });
    help.push('Written as JSON.');
    shape = h('details', {}, [h('summary', {}, ['Expected JSON shape']), h('pre', {}, [JSON.stringify(s.items ? [s.items] : s, null, 2)])]);
  } else {
    control = h('input', {
      type: 'text',
      id,
      required,
      maxlength: s.maxLength?.toString(),
      placeholder: s.examples?.[0]?.toString() ?? s.default?.toString(),
      autocomplete: 'off',
    });
  }
  if (s.default !== undefined && !values) help.push(`Default: ${JSON.stringify(s.default)}.`);
  const helpText = help.filter(Boolean).join(' ');
  if (helpText) control.setAttribute('aria-describedby', helpId);
  fieldReaders.set(name, { read });
  return h('div', { class: 'field' }, [
    h('label', { for: id }, [label(name), req]),
    control,
    helpText ? h('p', { class: 'help', id: helpId }, rich(helpText)) : '',
    shape,
  ]);
}

// ---- Files: uploads and results, kept for this tab so they can be inputs again (until they expire on the server).

/** @param {StoredFile[]} files */
function remember(files) {
  const ids = new Set(files.map((f) => f.id));
  stored = [...stored.filter((f) => !ids.has(f.id)), ...files];
  sessionStorage.setItem(FILES, JSON.stringify(stored));
  renderStored();
  bench.filesChanged();
}

function renderStored() {
  ui.stored.replaceChildren(
    ...stored.map((f) => {
      const use = h('button', { type: 'button', class: 'secondary' }, ['Use as input', h('span', { class: 'sr' }, [`: ${f.name}`])]);
      use.addEventListener('click', () => useAsInput([f]));
      return h('li', {}, [
        h('span', {}, [f.name]),
        h('span', { class: 'meta' }, [[f.type, size(f.size)].filter(Boolean).join(', ')]),
        h('a', { href: `/resource/${f.id}`, download: f.name }, ['Download', h('span', { class: 'sr' }, [` ${f.name}`])]),
        use,
      ]);
    }),
  );
}

/** @param {FileList | File[]} list */
async function upload(list) {
  const files = [...list];
  if (!files.length) return;
  ui.error.textContent = '';
  ui.status.textContent = `Uploading ${files.map((f) => f.name).join(', ')}…`;
  const body = new FormData();
  for (const f of files) body.append('file', f, f.name);
  try {
    /** @type {{ files: { name: string, id: string }[] }} */
    const res = await api('/upload', { method: 'POST', body });
    remember(res.files.map((r, i) => ({ id: r.id, name: r.name, type: files[i]?.type || undefined, size: files[i]?.size })));
    chosen = res.files.map((r) => r.id);
    renderInputs();
    ui.status.textContent = `Stored ${res.files.map((r) => r.name).join(', ')}.`;
  } catch (err) {
    ui.status.textContent = '';
    showError(err);
  }
}

/** @param {StoredFile[]} files */
function useAsInput(files) {
  chosen = files.map((f) => f.id);
  renderInputs();
  ui.status.textContent = `${files.map((f) => f.name).join(', ')} will be the input of the next operation. Choose it.`;
  ui.search.focus();
}

// ---- Running: polling mode, so progress can be shown and a long job survives a slow connection.

/** The form's values: the inputs' id fields and the parameters, empty ones left out (the server's defaults). */
function formBody(withMain = true) {
  /** @type {Record<string, unknown>} */
  const body = {};
  for (const [name, r] of [...inputReaders, ...fieldReaders]) {
    if (!withMain && name === mainInput) continue;
    const v = r.read();
    if (v !== '' && !(Array.isArray(v) && !v.length)) body[name] = v;
  }
  return body;
}

/** @param {SubmitEvent} ev */
function run(ev) {
  ev.preventDefault();
  if (current) void execute(current.path, formBody());
}

/**
 * Runs one request with the progress bar and shows its result; the workbench's tools run through here too.
 * @param {string} path
 * @param {Record<string, unknown>} body
 * @param {string} [what] how the status line names the work
 */
async function execute(path, body, what = path) {
  ui.error.textContent = '';
  ui.result.hidden = true;
  ui.run.disabled = true;
  ui.form.setAttribute('aria-busy', 'true');
  ui.progress.removeAttribute('value');
  ui.progressBox.hidden = false;
  ui.status.textContent = `Running ${what}…`;
  try {
    const result = await runJob(path, body, (p) => (ui.progress.value = p));
    await showResult(result);
    // A warning (nothing matched, letters next to a redaction box...) is part of the answer: it is read out with it.
    ui.status.textContent = `${what} finished.${typeof result.warning === 'string' ? ` ${result.warning}` : ''}`;
    return result;
  } catch (err) {
    ui.status.textContent = '';
    showError(err);
    return undefined;
  } finally {
    ui.progressBox.hidden = true;
    ui.run.disabled = !current;
    ui.form.removeAttribute('aria-busy');
  }
}

/** @param {string} id */
const fileInfo = (id) =>
  api(`/resource/${encodeURIComponent(id)}?format=info`).then((i) => /** @type {StoredFile} */ ({ id: i.id, name: i.name, type: i.type, size: i.size }));

/** @param {Record<string, unknown>} result */
async function showResult(result) {
  /** @type {StoredFile[]} */
  const outputs = await Promise.all(ids(result.outputId).map(fileInfo));
  remember(outputs);
  const inputs = ids(result.inputId);
  const before = inputs.length === 1 ? stored.find((f) => f.id === inputs[0]) : undefined;
  ui.outputs.replaceChildren(
    ...outputs.map((f, i) => {
      const href = `/resource/${f.id}`;
      const use = h('button', { type: 'button', class: 'secondary' }, ['Use as input', h('span', { class: 'sr' }, [`: ${f.name}`])]);
      use.addEventListener('click', () => useAsInput([f]));
      const li = h('li', {}, [h('h3', {}, [f.name]), h('p', { class: 'meta' }, [[f.type, size(f.size)].filter(Boolean).join(', ')])]);
      if (i < MAX_PREVIEWS && f.type === 'application/pdf')
        li.append(h('iframe', { class: 'pdf', src: `${href}?disposition=inline`, title: `Preview of ${f.name}` }));
      else if (i < MAX_PREVIEWS && PREVIEW_TYPES.includes(f.type ?? ''))
        li.append(h('img', { class: 'thumb', src: `${href}?disposition=inline`, alt: `Preview of ${f.name}` }));
      const actions = h('p', { class: 'actions' }, [h('a', { href, download: f.name }, [`Download ${f.name}`]), use]);
      if (before && isPdf(before) && isPdf(f)) {
        const compare = h('button', { type: 'button', class: 'secondary' }, [
          'Compare with the input',
          h('span', { class: 'sr' }, [`: ${before.name} and ${f.name}`]),
        ]);
        compare.addEventListener('click', () => bench.compare(before, f));
        actions.append(compare);
      }
      li.append(actions);
      return li;
    }),
  );
  if (outputs.length > 1) {
    const all = h('button', { type: 'button', class: 'secondary' }, [`Use all ${outputs.length} as input`]);
    all.addEventListener('click', () => useAsInput(outputs));
    ui.outputs.append(h('li', { class: 'actions' }, [all, bench.zipButton(outputs)]));
  }
  ui.outputs.hidden = !outputs.length;
  ui.json.textContent = JSON.stringify(result, null, 2);
  ui.result.hidden = false;
  ui.resultHeading.focus();
}

/** @param {StoredFile} f */
const isPdf = (f) => f.type === 'application/pdf' || extension(f.name) === 'pdf';

const bench = initWorkbench({
  files: () => stored,
  remember,
  execute,
  showError,
  step: () => (current ? { operation: current.path, fields: formBody(false) } : undefined),
  /** Opens an operation's form with some fields filled in (a signature box placed by hand, say). */
  openForm: (path, values, input) => {
    if (input) chosen = [input];
    location.hash = `#${path}`;
    selectFromHash();
    renderInputs();
    for (const [name, v] of Object.entries(values)) {
      const el = document.getElementById(`f-${name}`);
      if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement) el.value = v;
    }
    ui.formHeading.focus();
  },
});

// ---- Wiring.

ui.key.value = sessionStorage.getItem(KEY) ?? '';
ui.key.addEventListener('input', () => sessionStorage.setItem(KEY, ui.key.value.trim()));
ui.search.addEventListener('input', filterOperations);
ui.pick.addEventListener('change', () => {
  if (ui.pick.files) void upload(ui.pick.files).then(() => (ui.pick.value = ''));
});
// A file dropped anywhere else would make the browser open it and leave the page.
for (const type of ['dragover', 'drop']) window.addEventListener(type, (e) => e.preventDefault());
ui.drop.addEventListener('dragover', () => ui.drop.classList.add('over'));
ui.drop.addEventListener('dragleave', () => ui.drop.classList.remove('over'));
ui.drop.addEventListener('drop', (e) => {
  ui.drop.classList.remove('over');
  if (e.dataTransfer?.files.length) void upload(e.dataTransfer.files);
});
ui.form.addEventListener('submit', (e) => void run(/** @type {SubmitEvent} */ (e)));
renderStored();
bench.filesChanged();
loadOperations().catch(showError);
