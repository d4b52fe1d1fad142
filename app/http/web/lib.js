// @ts-check
// What the page's two modules share: building elements, calling the API with the key of this tab, and running an
// operation as a polled job so its progress can be shown.

/**
 * @template {HTMLElement} T
 * @param {string} id
 * @param {{ new (): T }} type
 * @returns {T}
 */
export function byId(id, type) {
  const el = document.getElementById(id);
  if (!(el instanceof type)) throw new Error(`#${id} is missing`);
  return el;
}

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, string | boolean | undefined>} [attrs]
 * @param {(Node | string)[]} [children]
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs = {}, children = []) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== false) el.setAttribute(k, v === true ? '' : v);
  el.append(...children);
  return el;
}

const keyInput = byId('api-key', HTMLInputElement);

/**
 * Calls the API with the key of this tab; a JSON `{error}` becomes the thrown message, as the server words it.
 * @param {string} path
 * @param {RequestInit} [init]
 * @returns {Promise<any>}
 */
export async function api(path, init = {}) {
  const headers = new Headers(init.headers);
  const key = keyInput.value.trim();
  if (key) headers.set('Api-Key', key);
  const res = await fetch(path, { ...init, headers });
  const body = (res.headers.get('content-type') ?? '').includes('json') ? await res.json() : await res.text();
  if (!res.ok) throw new Error(body && typeof body === 'object' && typeof body.error === 'string' ? body.error : `${res.status} ${res.statusText}`);
  return body;
}

/**
 * A JSON POST answered at once (short work such as thumbnails and page facts).
 * @param {string} path
 * @param {unknown} body
 */
export const post = (path, body) => api(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

/** @param {number} ms */
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs an operation in polling mode (`Request-Type: requestId`), so progress can be shown and a long job survives a
 * slow connection; answers the completed status without its bookkeeping keys.
 * @param {string} path
 * @param {unknown} body
 * @param {(fraction: number) => void} [onProgress]
 * @returns {Promise<Record<string, unknown>>}
 */
export async function runJob(path, body, onProgress = () => {}) {
  const { requestId } = await api(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Request-Type': 'requestId' },
    body: JSON.stringify(body),
  });
  for (let wait = 200; ; wait = Math.min(wait * 1.5, 1500)) {
    await sleep(wait);
    const st = await api(`/request-status/${encodeURIComponent(requestId)}`);
    if (st.status === 'failed') throw new Error(st.error ?? `Failed with status ${st.statusCode}`);
    if (st.status === 'completed') {
      onProgress(1);
      const { status: _s, requestId: _r, ...result } = st;
      return result;
    }
    if (typeof st.progress === 'number') onProgress(st.progress);
  }
}

/** @param {unknown} outputId */
export const ids = (outputId) =>
  [outputId]
    .flat()
    .filter((x) => typeof x === 'string')
    .map(String);

/** @param {number | undefined} n */
export const size = (n) => (n === undefined ? '' : n < 1024 ? `${n} B` : n < 1048576 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1048576).toFixed(1)} MB`);

/** @param {string} name */
export const extension = (name) => (name.includes('.') ? name.slice(name.lastIndexOf('.') + 1).toLowerCase() : '');
