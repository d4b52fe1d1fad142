// @ts-check
// The document workbench: every stored PDF as page thumbnails (rendered by /png in batches, as they scroll into
// view), a page editor (drag, keyboard moves, rotate, delete, blank pages, pages of several files) whose result the
// server makes with /merged-pdf and /rotated-pdf in one /pipeline, placing stamps, images, shapes, watermarks,
// signature and redaction boxes by clicking a page preview, batches with progress per file, pipelines kept in this
// browser, and before/after comparison. Like the rest of the page it only calls the public API.

import { api, byId, extension, h, ids, post, runJob } from './lib.js';

/**
 * @typedef {{ id: string, name: string, type?: string, size?: number }} StoredFile
 * @typedef {[number, number, number, number]} Box
 * @typedef {{ page: number, mediaBox: Box, cropBox: Box, trimBox: Box, rotation: number }} PageBox
 * @typedef {{ operation: string, fields: Record<string, unknown> }} Step
 * @typedef {{
 *   files: () => StoredFile[], remember: (f: StoredFile[]) => void, showError: (e: unknown) => void,
 *   execute: (path: string, body: Record<string, unknown>, what?: string) => Promise<Record<string, unknown> | undefined>,
 *   step: () => Step | undefined, openForm: (path: string, values: Record<string, string>, input?: string) => void
 * }} Hooks
 * @typedef {{ key: number, file?: StoredFile, page: number, rot: number, size?: [number, number] }} Sheet
 * @typedef {{ kind: string, page: number, fx: number, fy: number, fw: number, fh: number, text?: string, size?: number, image?: string }} Mark
 */

/** Pages shown per document before "Show more pages": a 2000-page file must not make 2000 tiles at once. */
const PAGE_CHUNK = 60;
/**
 * Pages per /png request. A request costs about 0.3 s whatever it holds (1 page 0.3 s, 8 pages 0.35-0.5 s, 24 pages
 * 0.6-0.8 s on the 2-core machine under load) and the server runs them about one at a time, so fewer, larger
 * requests draw the first screen sooner: a screenful (1280x900) is about 35-42 thumbnails, and the first 40 pages
 * of the document just chosen are asked for at once (scripts/bench/workbench.bench.ts, 100-page file, load 7-9 on 2
 * cores: 1.6-2.4 s to the first screen; with 8 per request and only what was in view, 2.1-4.3 s).
 */
const RENDER_BATCH = 40;
/** /png requests in flight: more would only share the server's cores and finish the first rows later. */
const RENDERING = 2;
/** Thumbnails are rendered at their shown width (7rem) in device pixels. */
const THUMB_PX = Math.round(120 * Math.min(2, Math.max(1, devicePixelRatio)));
const STAGE_PX = 900;
const PIPELINES = 'quire.pipelines';
const TOOLS = { text: 'Text stamp', watermark: 'Watermark', image: 'Image', rectangle: 'Rectangle', signature: 'Signature box', redaction: 'Redaction box' };
const BOX_TOOLS = ['rectangle', 'signature', 'redaction'];

/** @param {PageBox} b */
const turned = (b) => b.rotation % 180 !== 0;
/** The page as seen: crop box width and height after /Rotate. @param {PageBox} b @returns {[number, number]} */
function seenSize(b) {
  const [x0, y0, x1, y1] = b.cropBox;
  return turned(b) ? [y1 - y0, x1 - x0] : [x1 - x0, y1 - y0];
}

/**
 * A point of the preview (fractions of its width from the left and height from the top; the preview is the crop
 * box as seen) in the page's own user space (unrotated, origin bottom-left): what /signed-pdf and word boxes use.
 * @param {PageBox} b @param {number} fx @param {number} fy @returns {[number, number]}
 */
function toUser(b, fx, fy) {
  const [x0, y0, x1, y1] = b.cropBox;
  const w = x1 - x0;
  const hgt = y1 - y0;
  switch (((b.rotation % 360) + 360) % 360) {
    case 90:
      return [x0 + fy * w, y0 + fx * hgt];
    case 180:
      return [x1 - fx * w, y0 + fy * hgt];
    case 270:
      return [x0 + (1 - fy) * w, y1 - fx * hgt];
    default:
      return [x0 + fx * w, y1 - fy * hgt];
  }
}

/**
 * A user-space point in the coordinates the stamping endpoints take: from the lower-left corner of the page as seen
 * (trim box, after /Rotate).
 * @param {PageBox} b @param {[number, number]} p @returns {[number, number]}
 */
function toSeen(b, [ux, uy]) {
  const [x0, y0, x1, y1] = b.trimBox;
  switch (((b.rotation % 360) + 360) % 360) {
    case 90:
      return [uy - y0, x1 - ux];
    case 180:
      return [x1 - ux, y1 - uy];
    case 270:
      return [y1 - uy, ux - x0];
    default:
      return [ux - x0, uy - y0];
  }
}

const round = (/** @type {number} */ n) => Math.round(n * 100) / 100;

/** @param {Hooks} hooks */
export function initWorkbench(hooks) {
  const ui = {
    status: byId('bench-status', HTMLElement),
    docs: byId('docs', HTMLElement),
    editor: byId('editor', HTMLElement),
    editorHeading: byId('editor-h', HTMLElement),
    sheet: byId('sheet', HTMLElement),
    blank: byId('blank-add', HTMLButtonElement),
    build: byId('sheet-build', HTMLButtonElement),
    clear: byId('sheet-clear', HTMLButtonElement),
    placer: byId('placer', HTMLElement),
    placerHeading: byId('placer-h', HTMLElement),
    tools: byId('tools', HTMLElement),
    text: byId('place-text', HTMLInputElement),
    size: byId('place-size', HTMLInputElement),
    image: byId('place-image', HTMLSelectElement),
    prev: byId('page-prev', HTMLButtonElement),
    next: byId('page-next', HTMLButtonElement),
    pageLabel: byId('page-label', HTMLElement),
    stage: byId('stage', HTMLElement),
    stageImg: byId('stage-img', HTMLImageElement),
    marks: byId('marks', HTMLElement),
    cross: byId('cross', HTMLElement),
    placed: byId('placed', HTMLElement),
    apply: byId('place-apply', HTMLButtonElement),
    batchFiles: byId('batch-files', HTMLElement),
    batchWhat: byId('batch-what', HTMLSelectElement),
    steps: byId('steps', HTMLElement),
    stepAdd: byId('step-add', HTMLButtonElement),
    pipeName: byId('pipe-name', HTMLInputElement),
    pipeSave: byId('pipe-save', HTMLButtonElement),
    batchRun: byId('batch-run', HTMLButtonElement),
    batchRows: byId('batch-rows', HTMLElement),
    batchDone: byId('batch-done', HTMLElement),
    compare: byId('compare', HTMLElement),
    compareHeading: byId('compare-h', HTMLElement),
    compareBody: byId('compare-body', HTMLElement),
  };
  /** @param {string} text */
  const say = (text) => (ui.status.textContent = text);
  const pdfs = () => hooks.files().filter((f) => f.type === 'application/pdf' || extension(f.name) === 'pdf');

  // ---- Page facts and thumbnails.

  /** @type {Map<string, Promise<PageBox[]>>} */
  const boxes = new Map();
  /** @param {string} id */
  function pageBoxes(id) {
    let p = boxes.get(id);
    if (!p) {
      p = post('/pdf-info', { id, queries: 'page_boxes' }).then((r) => /** @type {PageBox[]} */ (r.page_boxes ?? []));
      p.catch(() => boxes.delete(id));
      boxes.set(id, p);
    }
    return p;
  }

  /** @type {Map<string, string>} rendered page -> resource URL */
  const rendered = new Map();
  /** @type {Map<string, Set<HTMLImageElement>>} */
  const waiting = new Map();
  /** @type {Map<string, { dpi: number, pages: Set<number> }>} */
  const queue = new Map();
  let flushing = false;

  const observer = new IntersectionObserver(
    (entries) => {
      for (const e of entries) {
        if (!e.isIntersecting || !(e.target instanceof HTMLImageElement)) continue;
        observer.unobserve(e.target);
        const { id, page, dpi } = e.target.dataset;
        if (id && page && dpi) want(e.target, id, Number(page), Number(dpi));
      }
    },
    { rootMargin: '200px' },
  );

  /**
   * An image that shows a page once it comes near the viewport, or at once (`eager`: the first pages of a document
   * just chosen, which are what is looked at next, are asked for in one request before any layout or scrolling).
   * @param {string} id @param {number} page @param {number} dpi @param {string} alt @param {boolean} [eager]
   */
  function pageImage(id, page, dpi, alt, eager = false) {
    const img = h('img', { alt, 'data-id': id, 'data-page': String(page), 'data-dpi': String(dpi), class: 'loading', draggable: 'false' });
    const url = rendered.get(`${id}:${page}:${dpi}`);
    if (url) show(img, url);
    else if (eager) want(img, id, page, dpi);
    else observer.observe(img);
    return img;
  }

  /** @param {HTMLImageElement} img @param {string} url */
  function show(img, url) {
    img.addEventListener('load', () => img.classList.remove('loading'), { once: true });
    img.src = url;
  }

  /** @param {HTMLImageElement} img @param {string} id @param {number} page @param {number} dpi */
  function want(img, id, page, dpi) {
    const key = `${id}:${page}:${dpi}`;
    const url = rendered.get(key);
    if (url) return show(img, url);
    const set = waiting.get(key) ?? new Set();
    set.add(img);
    waiting.set(key, set);
    const q = queue.get(`${id}:${dpi}`) ?? { dpi, pages: new Set() };
    q.pages.add(page);
    queue.set(`${id}:${dpi}`, q);
    if (!flushing) {
      flushing = true;
      // Gathers the images of one layout pass into few requests.
      setTimeout(flush, 0);
    }
  }

  /** @type {{ id: string, dpi: number, pages: number[] }[]} */
  const pending = [];
  let active = 0;

  function flush() {
    flushing = false;
    for (const [k, q] of queue) {
      const id = k.slice(0, k.lastIndexOf(':'));
      const pages = [...q.pages].sort((a, b) => a - b);
      for (let i = 0; i < pages.length; i += RENDER_BATCH) pending.push({ id, dpi: q.dpi, pages: pages.slice(i, i + RENDER_BATCH) });
    }
    queue.clear();
    // A few requests at a time, first asked first: the rows in view are drawn before the ones below them.
    while (active < RENDERING && pending.length) {
      active++;
      void renderBatch(/** @type {{ id: string, dpi: number, pages: number[] }} */ (pending.shift())).finally(() => {
        active--;
        flush();
      });
    }
  }

  /** @param {{ id: string, dpi: number, pages: number[] }} job */
  async function renderBatch({ id, dpi, pages }) {
    try {
      // Smoothed: small pictures of text are unreadable without anti-aliasing, and it costs no measurable time.
      const res = await post('/png', { id, pages: pages.join(','), resolution: dpi, smoothing: ['all'] });
      ids(res.outputId).forEach((out, i) => {
        const key = `${id}:${pages[i]}:${dpi}`;
        const url = `/resource/${out}?disposition=inline`;
        rendered.set(key, url);
        for (const img of waiting.get(key) ?? []) show(img, url);
        waiting.delete(key);
      });
    } catch (err) {
      for (const p of pages) waiting.delete(`${id}:${p}:${dpi}`);
      say(`Pages ${pages.join(', ')} could not be shown: ${err instanceof Error ? err.message : err}`);
    }
  }

  /** A resolution that makes the widest page about `px` pixels wide. @param {PageBox[]} b @param {number} px */
  const dpiFor = (b, px) => Math.max(12, Math.min(150, Math.floor((px * 72) / Math.max(1, ...b.map((x) => seenSize(x)[0])))));

  /** @param {HTMLElement} el @param {PageBox | undefined} b @param {number} [rot] */
  function shape(el, b, rot = 0) {
    if (!b) return;
    const [w, hgt] = seenSize(b);
    el.style.aspectRatio = rot % 180 ? `${hgt} / ${w}` : `${w} / ${hgt}`;
  }

  /**
   * One tab stop per list of pages: the arrow keys, Home and End move the focus (and the tab stop) within it.
   * @param {HTMLElement} list @param {KeyboardEvent} e @param {string} selector the focusable element of an item
   */
  function roam(list, e, selector) {
    const items = /** @type {HTMLElement[]} */ ([...list.querySelectorAll(`:scope > li${selector === 'li' ? '' : ` > ${selector}`}`)]);
    const at = items.indexOf(/** @type {HTMLElement} */ (document.activeElement));
    if (at < 0) return;
    // A row holds the items level with the first one.
    const row = Math.max(1, items.filter((x) => x.offsetTop === items[0].offsetTop).length);
    const to = { ArrowLeft: at - 1, ArrowRight: at + 1, ArrowUp: at - row, ArrowDown: at + row, Home: 0, End: items.length - 1 }[e.key];
    if (to === undefined || !items[to]) return;
    e.preventDefault();
    items[at].setAttribute('tabindex', '-1');
    items[to].setAttribute('tabindex', '0');
    items[to].focus();
  }

  // ---- Documents: every stored PDF with its pages.

  /** @type {Map<string, HTMLElement>} */
  const docViews = new Map();

  function filesChanged() {
    const files = pdfs();
    const keep = new Set(files.map((f) => f.id));
    for (const [id, el] of docViews) if (!keep.has(id)) el.remove(), docViews.delete(id);
    // The first new document (the file just chosen, a result, or the top of the list after a reload) has its first
    // pages asked for at once; the others wait until they are scrolled to.
    let eager = true;
    for (const f of files) {
      if (docViews.has(f.id)) continue;
      docViews.set(f.id, docView(f, eager));
      eager = false;
    }
    ui.docs.replaceChildren(...files.map((f) => /** @type {HTMLElement} */ (docViews.get(f.id))));
    renderBatchFiles();
    renderImages();
  }

  /** @param {StoredFile} f @param {boolean} [eager] its first pages rendered at once, not only when scrolled to */
  function docView(f, eager = false) {
    const count = h('span', { class: 'meta' }, ['reading…']);
    const grid = h('ol', { class: 'pages', 'aria-label': `Pages of ${f.name}` });
    const edit = h('button', { type: 'button', class: 'secondary' }, ['Edit pages', h('span', { class: 'sr' }, [` of ${f.name}`])]);
    const add = h('button', { type: 'button', class: 'secondary' }, ['Add pages to the editor', h('span', { class: 'sr' }, [`: ${f.name}`])]);
    const more = h('button', { type: 'button', class: 'secondary', hidden: true }, []);
    const el = h('details', { class: 'doc', open: true, 'data-id': f.id }, [
      h('summary', {}, [h('span', { class: 'name' }, [f.name]), ' ', count]),
      h('p', { class: 'actions' }, [edit, add]),
      grid,
      more,
    ]);
    grid.addEventListener('keydown', (e) => roam(grid, e, 'button'));
    edit.addEventListener('click', () => void toEditor(f, true));
    add.addEventListener('click', () => void toEditor(f, false));
    pageBoxes(f.id).then(
      (b) => {
        count.textContent = `${b.length} page${b.length === 1 ? '' : 's'}`;
        const dpi = dpiFor(b, THUMB_PX);
        let shown = 0;
        const showMore = () => {
          const upto = Math.min(b.length, shown + PAGE_CHUNK);
          for (let p = shown + 1; p <= upto; p++) {
            const img = pageImage(f.id, p, dpi, '', eager && p <= RENDER_BATCH);
            shape(img, b[p - 1]);
            const open = h(
              'button',
              { type: 'button', class: 'page', tabindex: p === 1 ? '0' : '-1', 'aria-label': `Page ${p} of ${f.name}: place things on it` },
              [img, h('span', { 'aria-hidden': 'true' }, [String(p)])],
            );
            open.addEventListener('click', () => void openPlacer(f, p));
            grid.append(h('li', {}, [open]));
          }
          shown = upto;
          more.hidden = shown >= b.length;
          more.textContent = `Show pages ${shown + 1} to ${Math.min(b.length, shown + PAGE_CHUNK)} of ${b.length}`;
        };
        more.addEventListener('click', () => {
          const first = shown;
          showMore();
          const next = grid.children[first]?.querySelector('button');
          if (!next) return;
          for (const b of grid.querySelectorAll('button[tabindex="0"]')) b.setAttribute('tabindex', '-1');
          next.setAttribute('tabindex', '0');
          next.focus();
        });
        showMore();
      },
      (err) => (count.textContent = `not readable: ${err instanceof Error ? err.message : err}`),
    );
    return el;
  }

  // ---- The page editor.

  /** @type {Sheet[]} */
  let sheet = [];
  let serial = 0;

  /** @param {StoredFile} f @param {boolean} replace */
  async function toEditor(f, replace) {
    const b = await pageBoxes(f.id);
    const pages = b.map((x) => ({ key: ++serial, file: f, page: x.page, rot: 0 }));
    sheet = replace ? pages : [...sheet, ...pages];
    if (replace) sheetShown = 0;
    ui.editor.hidden = false;
    renderSheet();
    say(`${replace ? 'The editor holds' : 'Added'} ${pages.length} pages of ${f.name}${replace ? '' : `; ${sheet.length} pages in all`}.`);
    ui.editorHeading.focus();
  }

  /** @param {Sheet} s */
  const sheetName = (s) => (s.file ? `page ${s.page} of ${s.file.name}` : 'blank page');

  /**
   * The editor's tiles by page key. A tile is made once, when it is first shown; a move, turn or delete re-orders
   * and relabels the tiles instead of making all of them again, and its picture stays (scripts/bench/workbench.bench.ts,
   * 100 pages: a keyboard move 3-10 ms, a turn 1-3 ms, where remaking every tile took 100-195 and 47-80 ms). Large documents are shown PAGE_CHUNK tiles at a time ("Show pages 61 to 120 of 400"), pictures
   * rendered only as they come near the viewport.
   * @type {Map<number, { li: HTMLElement, cap: HTMLElement, frame: HTMLElement, img?: HTMLImageElement, box?: PageBox, rot: number }>}
   */
  const tiles = new Map();
  /** How many of the sheet's pages have tiles in the list (the rest behind "Show pages ..."). */
  let sheetShown = 0;
  /** The page with the list's tab stop. @type {number | undefined} */
  let sheetCurrent;
  const sheetMore = h('button', { type: 'button', class: 'secondary', hidden: true }, []);
  ui.sheet.after(sheetMore);
  ui.sheet.addEventListener('focusin', (e) => {
    const li = e.target instanceof Element ? /** @type {HTMLElement | null} */ (e.target.closest('#sheet > li')) : null;
    if (li) sheetCurrent = Number(li.dataset.key);
  });

  /** @param {number} [focusKey] */
  function renderSheet(focusKey) {
    const keys = new Set(sheet.map((s) => s.key));
    for (const k of tiles.keys()) if (!keys.has(k)) tiles.delete(k);
    // The page being worked on is always shown, however far it was moved.
    const at = sheet.findIndex((s) => s.key === (focusKey ?? sheetCurrent));
    sheetShown = Math.min(sheet.length, Math.max(sheetShown, PAGE_CHUNK, at + 1));
    // Only the tiles out of place are moved: a tile kept in the list keeps its focus and costs no new layout.
    let node = ui.sheet.firstElementChild;
    for (const li of sheet.slice(0, sheetShown).map((s, i) => tileOf(s, i))) {
      if (node === li) node = node.nextElementSibling;
      else ui.sheet.insertBefore(li, node);
    }
    while (node) {
      const next = node.nextElementSibling;
      node.remove();
      node = next;
    }
    sheetMore.hidden = sheetShown >= sheet.length;
    sheetMore.textContent = `Show pages ${sheetShown + 1} to ${Math.min(sheet.length, sheetShown + PAGE_CHUNK)} of ${sheet.length}`;
    ui.build.disabled = !sheet.length;
    const key = focusKey ?? sheetCurrent;
    const current = /** @type {HTMLElement | null} */ (
      (key !== undefined && tiles.get(key)?.li.isConnected ? tiles.get(key)?.li : null) ?? ui.sheet.firstElementChild
    );
    for (const li of ui.sheet.children) if (li !== current) li.setAttribute('tabindex', '-1');
    current?.setAttribute('tabindex', '0');
    sheetCurrent = current ? Number(current.dataset.key) : undefined;
    if (focusKey !== undefined) current?.focus();
  }

  sheetMore.addEventListener('click', () => {
    const first = sheetShown;
    sheetShown = Math.min(sheet.length, sheetShown + PAGE_CHUNK);
    renderSheet(sheet[first]?.key);
  });

  /** The tile of a page, made on first use, labelled with its place. @param {Sheet} s @param {number} i */
  function tileOf(s, i) {
    let t = tiles.get(s.key);
    if (!t) {
      t = sheetTile(s);
      tiles.set(s.key, t);
    }
    const label = `${i + 1}: ${sheetName(s)}${s.rot ? `, turned ${s.rot}°` : ''}`;
    if (t.li.getAttribute('aria-label') !== label) t.li.setAttribute('aria-label', label);
    const cap = `${i + 1} · ${s.file ? `${s.file.name} p. ${s.page}` : 'blank'}`;
    if (t.cap.textContent !== cap) t.cap.textContent = cap;
    if (!s.file && s.size) t.frame.style.aspectRatio = `${s.size[0]} / ${s.size[1]}`;
    if (t.rot !== s.rot) {
      t.rot = s.rot;
      turnTile(t);
    }
    return t.li;
  }

  /** Shapes a tile's frame and picture for its turn. @param {{ frame: HTMLElement, img?: HTMLImageElement, box?: PageBox, rot: number }} t */
  function turnTile(t) {
    if (!t.img || !t.box) return;
    t.img.classList.remove('rot0', 'rot90', 'rot180', 'rot270');
    t.img.classList.add(`rot${t.rot}`);
    shape(t.frame, t.box, t.rot);
  }

  /** @param {Sheet} s */
  function sheetTile(s) {
    const name = sheetName(s);
    const frame = h('div', { class: 'frame' });
    /** @type {{ li: HTMLElement, cap: HTMLElement, frame: HTMLElement, img?: HTMLImageElement, box?: PageBox, rot: number }} */
    const tile = { li: h('li'), cap: h('span', { class: 'cap', 'aria-hidden': 'true' }), frame, rot: s.rot };
    if (s.file) {
      const file = s.file;
      void pageBoxes(file.id).then((b) => {
        const img = pageImage(file.id, s.page, dpiFor(b, THUMB_PX), '');
        const [w, hgt] = seenSize(b[s.page - 1]);
        // Turned a quarter, the picture's width becomes the frame's height (see the style sheet).
        img.style.setProperty('--fit', String(w / hgt));
        Object.assign(tile, { img, box: b[s.page - 1] });
        turnTile(tile);
        frame.append(img);
      });
    } else frame.classList.add('blank');
    /** @param {string} text @param {string} aria @param {() => void} act */
    const button = (text, aria, act) => {
      const b = h('button', { type: 'button', class: 'secondary tiny', 'aria-label': `${aria} ${name}`, title: aria }, [text]);
      b.addEventListener('click', act);
      return b;
    };
    const li = h('li', { tabindex: '-1', 'data-key': String(s.key), 'aria-roledescription': 'movable page' }, [
      frame,
      tile.cap,
      h('span', { class: 'tools' }, [
        button('←', 'Move earlier:', () => move(s, sheet.indexOf(s) - 1)),
        button('↻', 'Turn clockwise:', () => turn(s, 90)),
        button('↺', 'Turn counter-clockwise:', () => turn(s, 270)),
        button('✕', 'Delete', () => remove(s)),
        button('→', 'Move later:', () => move(s, sheet.indexOf(s) + 1)),
      ]),
    ]);
    li.addEventListener('keydown', (e) => {
      if (e.target !== li) return;
      const i = sheet.indexOf(s);
      const step = e.key === 'ArrowLeft' || e.key === 'ArrowUp' ? -1 : e.key === 'ArrowRight' || e.key === 'ArrowDown' ? 1 : 0;
      if (step && (e.altKey || e.ctrlKey)) move(s, i + step);
      else if (step || e.key === 'Home' || e.key === 'End') {
        roam(ui.sheet, e, 'li');
        // At the last tiles shown, going on shows the next pages rather than stopping.
        if (document.activeElement === li && (step > 0 || e.key === 'End') && sheetShown < sheet.length) {
          sheetShown = Math.min(sheet.length, sheetShown + PAGE_CHUNK);
          renderSheet(s.key);
          roam(ui.sheet, e, 'li');
        }
      } else if (e.key === 'r' || e.key === 'R') turn(s, e.shiftKey ? 270 : 90);
      else if (e.key === 'Delete' || e.key === 'Backspace') remove(s);
      else return;
      e.preventDefault();
    });
    li.addEventListener('pointerdown', (e) => drag(e, s, li));
    tile.li = li;
    return tile;
  }

  /** @param {Sheet} s @param {number} to */
  function move(s, to) {
    const from = sheet.indexOf(s);
    if (to < 0 || to >= sheet.length || to === from) return;
    sheet.splice(from, 1);
    sheet.splice(to, 0, s);
    renderSheet(s.key);
    say(`${sheetName(s)} moved to position ${to + 1} of ${sheet.length}.`);
  }

  /** @param {Sheet} s @param {number} by */
  function turn(s, by) {
    s.rot = (s.rot + by) % 360;
    renderSheet(s.key);
    say(`${sheetName(s)} turned to ${s.rot}°.`);
  }

  /** @param {Sheet} s */
  function remove(s) {
    const i = sheet.indexOf(s);
    sheet.splice(i, 1);
    renderSheet(sheet[Math.min(i, sheet.length - 1)]?.key);
    say(`${sheetName(s)} deleted; ${sheet.length} pages left.`);
  }

  /**
   * Mouse, pen or touch: the tile follows the pointer; dropped on another tile it takes that tile's place.
   * @param {PointerEvent} e @param {Sheet} s @param {HTMLElement} li
   */
  function drag(e, s, li) {
    if (e.button !== 0 || (e.target instanceof Element && e.target.closest('button'))) return;
    const x0 = e.clientX;
    const y0 = e.clientY;
    let moving = false;
    /** @type {HTMLElement | null} */
    let over = null;
    li.setPointerCapture(e.pointerId);
    /** @param {PointerEvent} m */
    const onMove = (m) => {
      if (!moving && Math.hypot(m.clientX - x0, m.clientY - y0) < 6) return;
      moving = true;
      li.classList.add('dragging');
      li.style.translate = `${m.clientX - x0}px ${m.clientY - y0}px`;
      const target = [...ui.sheet.children].find((c) => c !== li && inside(c.getBoundingClientRect(), m.clientX, m.clientY));
      over?.classList.remove('drop-before', 'drop-after');
      over = target instanceof HTMLElement ? target : null;
      if (over) over.classList.add(sheet.indexOf(s) > [...ui.sheet.children].indexOf(over) ? 'drop-before' : 'drop-after');
    };
    const onUp = () => {
      li.removeEventListener('pointermove', onMove);
      li.removeEventListener('pointerup', onUp);
      li.removeEventListener('pointercancel', onUp);
      li.classList.remove('dragging');
      li.style.translate = '';
      // Tiles outlive a drop (they are re-ordered, not made again): the drop mark goes.
      over?.classList.remove('drop-before', 'drop-after');
      if (over) move(s, [...ui.sheet.children].indexOf(over));
      else if (moving) renderSheet(s.key);
    };
    li.addEventListener('pointermove', onMove);
    li.addEventListener('pointerup', onUp);
    li.addEventListener('pointercancel', onUp);
  }

  /** @param {DOMRect} r @param {number} x @param {number} y */
  const inside = (r, x, y) => x >= r.left && x <= r.right && y >= r.top && y <= r.bottom;

  /** A blank page after the focused one (else at the end), the size of the page before it. */
  function addBlank() {
    const focused = sheet.findIndex((s) => String(s.key) === /** @type {HTMLElement | null} */ (document.activeElement?.closest('#sheet > li'))?.dataset.key);
    const at = focused < 0 ? sheet.length : focused + 1;
    const before = sheet[at - 1];
    /** @type {Sheet} */
    const blank = { key: ++serial, page: 1, rot: 0 };
    sheet.splice(at, 0, blank);
    void (async () => {
      // The blank page takes the size of its neighbour as seen, so a landscape document gets landscape blanks.
      if (before?.file) {
        const [w, hgt] = seenSize((await pageBoxes(before.file.id))[before.page - 1]);
        blank.size = before.rot % 180 ? [hgt, w] : [w, hgt];
      } else blank.size = before?.size ?? [612, 792];
      renderSheet(blank.key);
      say(`A blank page inserted at position ${at + 1} of ${sheet.length}.`);
    })();
  }

  /** The new document: merge the runs of pages (blank pages from /blank-pdf), then turn the pages asked. */
  async function buildSheet() {
    if (!sheet.length) return;
    const blanks = new Map();
    try {
      for (const s of sheet.filter((x) => !x.file)) {
        const [w, hgt] = s.size ?? [612, 792];
        const k = `${w}x${hgt}`;
        if (!blanks.has(k)) {
          const r = await post('/blank-pdf', { page_size: 'custom', custom_width: w, custom_height: hgt, page_count: 1, output: 'blank' });
          blanks.set(k, ids(r.outputId)[0]);
        }
      }
    } catch (err) {
      return hooks.showError(err);
    }
    /** @type {{ id: string, pages: number[] }[]} */
    const runs = [];
    for (const s of sheet) {
      const id = s.file ? s.file.id : blanks.get(`${(s.size ?? [612, 792]).join('x')}`);
      const last = runs[runs.length - 1];
      if (last?.id === id) last.pages.push(s.page);
      else runs.push({ id, pages: [s.page] });
    }
    /** @type {Step[]} */
    const steps = [{ operation: '/merged-pdf', fields: { pages: runs.map((r) => r.pages.join(',')), output: 'pages' } }];
    for (const rot of [90, 180, 270]) {
      const pages = sheet.flatMap((s, i) => (s.rot === rot ? [i + 1] : []));
      if (pages.length) steps.push({ operation: '/rotated-pdf', fields: { pages: pages.join(','), rotation: String(rot), output: 'pages' } });
    }
    await hooks.execute('/pipeline', { id: runs.map((r) => r.id), steps }, 'the page editor');
  }

  // ---- Placing things on a page by clicking its preview.

  /** @type {{ file: StoredFile, page: number, boxes: PageBox[] } | undefined} */
  let placing;
  /** @type {Mark[]} */
  let marks = [];
  /** A corner of a box being drawn, as fractions of the preview. @type {[number, number] | undefined} */
  let corner;
  /** The keyboard's cross on the preview. */
  let cross = { fx: 0.5, fy: 0.5 };

  const tool = () => /** @type {HTMLInputElement | null} */ (ui.tools.querySelector('input:checked'))?.value ?? 'text';

  /** @param {StoredFile} f @param {number} page */
  async function openPlacer(f, page) {
    const b = await pageBoxes(f.id);
    if (placing?.file.id !== f.id) marks = [];
    placing = { file: f, page, boxes: b };
    ui.placer.hidden = false;
    renderStage();
    ui.placerHeading.focus();
  }

  function renderStage() {
    if (!placing) return;
    const { file, page, boxes: b } = placing;
    ui.pageLabel.textContent = `Page ${page} of ${b.length}, ${file.name}`;
    ui.prev.disabled = page <= 1;
    ui.next.disabled = page >= b.length;
    const dpi = dpiFor([b[page - 1]], STAGE_PX);
    const img = pageImage(file.id, page, dpi, `Page ${page} of ${file.name}`);
    img.id = 'stage-img';
    ui.stageImg.replaceWith(img);
    ui.stageImg = img;
    shape(ui.stage, b[page - 1]);
    ui.stage.setAttribute(
      'aria-label',
      `Page ${page} of ${file.name}. ${TOOLS[/** @type {keyof TOOLS} */ (tool())]}: click to place, or use the arrow keys and Enter.`,
    );
    corner = undefined;
    renderMarks();
  }

  function renderMarks() {
    if (!placing) return;
    const page = placing.page;
    const tall = seenSize(placing.boxes[page - 1])[1];
    ui.marks.replaceChildren(
      ...marks
        .filter((m) => m.page === page)
        .map((m) => {
          const el = h('div', { class: `mark ${m.kind}` }, [m.kind === 'text' || m.kind === 'watermark' ? (m.text ?? '') : '']);
          Object.assign(el.style, { left: `${m.fx * 100}%`, top: `${m.fy * 100}%`, width: m.fw ? `${m.fw * 100}%` : '', height: m.fh ? `${m.fh * 100}%` : '' });
          if (m.kind !== 'image' && m.size) el.style.fontSize = `${(m.size / tall) * 100}cqh`;
          return el;
        }),
    );
    ui.placed.replaceChildren(
      ...marks.map((m, i) => {
        const del = h('button', { type: 'button', class: 'secondary tiny' }, ['Remove', h('span', { class: 'sr' }, [` ${describe(m)}`])]);
        del.addEventListener('click', () => {
          marks.splice(i, 1);
          renderMarks();
          say(`${describe(m)} removed.`);
          ui.stage.focus();
        });
        return h('li', {}, [describe(m), ' ', del]);
      }),
    );
    ui.apply.disabled = !marks.length;
    Object.assign(ui.cross.style, { left: `${cross.fx * 100}%`, top: `${cross.fy * 100}%` });
  }

  /** @param {Mark} m */
  const describe = (m) => `${TOOLS[/** @type {keyof TOOLS} */ (m.kind)]}${m.text ? ` “${m.text}”` : ''} on page ${m.page}`;

  /** @param {number} fx @param {number} fy */
  function placeAt(fx, fy) {
    if (!placing) return;
    const kind = tool();
    if (BOX_TOOLS.includes(kind)) {
      if (!corner) {
        corner = [fx, fy];
        say('First corner set; now the opposite corner.');
        return;
      }
      const [cx, cy] = corner;
      if (cx === fx || cy === fy) return say('The opposite corner must differ from the first in both directions.');
      corner = undefined;
      addMark({ kind, page: placing.page, fx: Math.min(cx, fx), fy: Math.min(cy, fy), fw: Math.abs(fx - cx), fh: Math.abs(fy - cy) });
      return;
    }
    if (kind === 'image' && !ui.image.value) return say('Choose an image first (upload a PNG or JPEG above).');
    const text = ui.text.value.trim();
    if ((kind === 'text' || kind === 'watermark') && !text) return say('Type the text first.');
    addMark({
      kind,
      page: placing.page,
      fx,
      fy,
      fw: 0,
      fh: 0,
      text: kind === 'image' ? undefined : text,
      size: Number(ui.size.value) || 24,
      image: kind === 'image' ? ui.image.value : undefined,
    });
  }

  /** @param {Mark} m */
  function addMark(m) {
    if (m.kind === 'signature') marks = marks.filter((x) => x.kind !== 'signature');
    marks.push(m);
    renderMarks();
    say(`${describe(m)} placed. Place more, or apply them.`);
  }

  /** Where a pointer is on the preview, as fractions of it, held to its edges. @param {PointerEvent} e */
  function onPage(e) {
    const r = ui.stageImg.getBoundingClientRect();
    const clamp = (/** @type {number} */ v) => Math.max(0, Math.min(1, v));
    return { fx: clamp((e.clientX - r.left) / r.width), fy: clamp((e.clientY - r.top) / r.height), inside: r.width > 0 && inside(r, e.clientX, e.clientY), r };
  }

  ui.stage.addEventListener('pointerdown', (e) => {
    const at = onPage(e);
    if (!at.inside || e.button !== 0) return;
    e.preventDefault();
    ui.stage.focus();
    cross = { fx: at.fx, fy: at.fy };
    if (!BOX_TOOLS.includes(tool())) return placeAt(at.fx, at.fy);
    // A box is drawn by dragging from one corner to the other (or by clicking both corners).
    if (!corner) corner = [at.fx, at.fy];
    else return placeAt(at.fx, at.fy);
    ui.stage.setPointerCapture(e.pointerId);
    ui.stage.addEventListener(
      'pointerup',
      (u) => {
        const end = onPage(u);
        if (Math.abs(end.fx - at.fx) * end.r.width < 4 && Math.abs(end.fy - at.fy) * end.r.height < 4)
          return say('First corner set; click the opposite corner.');
        placeAt(end.fx, end.fy);
      },
      { once: true },
    );
  });

  ui.stage.addEventListener('keydown', (e) => {
    const big = e.shiftKey ? 0.05 : 0.01;
    const d = { ArrowLeft: [-big, 0], ArrowRight: [big, 0], ArrowUp: [0, -big], ArrowDown: [0, big] }[e.key];
    if (d) {
      cross = { fx: Math.max(0, Math.min(1, cross.fx + d[0])), fy: Math.max(0, Math.min(1, cross.fy + d[1])) };
      renderMarks();
    } else if (e.key === 'Enter' || e.key === ' ') placeAt(cross.fx, cross.fy);
    else return;
    e.preventDefault();
  });
  ui.stage.addEventListener('focus', () => ui.cross.classList.add('on'));
  ui.stage.addEventListener('blur', () => ui.cross.classList.remove('on'));
  ui.prev.addEventListener('click', () => placing && (placing.page--, renderStage()));
  ui.next.addEventListener('click', () => placing && (placing.page++, renderStage()));
  ui.tools.addEventListener('change', () => {
    corner = undefined;
    ui.placer.dataset.tool = tool();
    renderStage();
  });

  /** The marks as steps of one /pipeline, in the endpoints' coordinates; a signature box opens /signed-pdf's form. */
  async function applyMarks() {
    if (!placing) return;
    const { file, boxes: b } = placing;
    /** @param {Mark} m @param {number} fx @param {number} fy */
    const seen = (m, fx, fy) => toSeen(b[m.page - 1], toUser(b[m.page - 1], fx, fy)).map(round);
    /** @type {Step[]} */
    const steps = [];
    const texts = marks.filter((m) => m.kind === 'text');
    if (texts.length) {
      const objects = texts.map((m) => {
        const [x, y] = seen(m, m.fx, m.fy);
        return { font: 'Helvetica', text: m.text, text_size: m.size, x, y, page: m.page, text_color_rgb: '200,0,0' };
      });
      steps.push({ operation: '/pdf-with-added-text', fields: { text_objects: JSON.stringify(objects) } });
    }
    const rects = marks.filter((m) => m.kind === 'rectangle');
    if (rects.length) {
      const objects = rects.map((m) => {
        const [x1, y1] = seen(m, m.fx, m.fy + m.fh);
        const [x2, y2] = seen(m, m.fx + m.fw, m.fy);
        return {
          type: 'rectangle',
          x: Math.min(x1, x2),
          y: Math.min(y1, y2),
          width: round(Math.abs(x2 - x1)),
          height: round(Math.abs(y2 - y1)),
          page: m.page,
          stroke_color_rgb: '31,78,140',
          stroke_width: 2,
        };
      });
      steps.push({ operation: '/pdf-with-added-shapes', fields: { shape_objects: JSON.stringify(objects) } });
    }
    for (const m of marks.filter((x) => x.kind === 'watermark')) {
      const [x, y] = seen(m, m.fx, m.fy);
      const [w, hgt] = seenSize(b[m.page - 1]);
      steps.push({
        operation: '/watermarked-pdf',
        fields: {
          watermark_text: m.text,
          text_size: Math.round(m.size ?? 48),
          pages: String(m.page),
          horizontal_alignment: 'center',
          vertical_alignment: 'center',
          x: round(x - w / 2),
          y: round(y - hgt / 2),
          opacity: 0.5,
        },
      });
    }
    for (const m of marks.filter((x) => x.kind === 'image')) {
      const [x, y] = seen(m, m.fx, m.fy);
      steps.push({ operation: '/pdf-with-added-image', fields: { image_id: m.image, x, y, page: m.page } });
    }
    const redactions = marks.filter((m) => m.kind === 'redaction');
    if (redactions.length) {
      // Area redactions: everything under each box goes (text, image pixels), in the coordinates /pdf-with-added-shapes
      // takes; then the marks are applied.
      const areas = redactions.map((m) => {
        const [x1, y1] = seen(m, m.fx, m.fy + m.fh);
        const [x2, y2] = seen(m, m.fx + m.fw, m.fy);
        const value = { page: m.page, x: Math.min(x1, x2), y: Math.min(y1, y2), width: round(Math.abs(x2 - x1)), height: round(Math.abs(y2 - y1)) };
        return { type: 'area', value };
      });
      steps.push({ operation: '/pdf-with-redacted-text-preview', fields: { redactions: areas } }, { operation: '/pdf-with-redacted-text-applied', fields: {} });
    }
    const sign = marks.find((m) => m.kind === 'signature');
    let input = file.id;
    if (steps.length) {
      const result = await hooks.execute('/pipeline', { id: [file.id], steps }, 'placing on the page');
      if (!result) return;
      input = ids(result.outputId)[0];
    }
    // Applied: the marks are in the result now; kept, they would be applied twice.
    marks = [];
    renderMarks();
    if (sign) {
      const [ax, ay] = toUser(b[sign.page - 1], sign.fx, sign.fy + sign.fh);
      const [bx, by] = toUser(b[sign.page - 1], sign.fx + sign.fw, sign.fy);
      const location = {
        bottom_left: { x: round(Math.min(ax, bx)), y: round(Math.min(ay, by)) },
        top_right: { x: round(Math.max(ax, bx)), y: round(Math.max(ay, by)) },
        page: sign.page,
      };
      hooks.openForm('/signed-pdf', { signature_configuration: JSON.stringify({ type: 'new', location }, null, 2) }, input);
      say('The signature box is filled in the signing form: choose the credentials there and run it.');
    }
  }

  function renderImages() {
    const images = hooks.files().filter((f) => ['png', 'jpg', 'jpeg', 'tif', 'tiff', 'gif', 'webp', 'bmp'].includes(extension(f.name)));
    const was = ui.image.value;
    ui.image.replaceChildren(
      h('option', { value: '' }, [images.length ? 'Choose an image' : 'No stored image yet']),
      ...images.map((f) => h('option', { value: f.id, selected: f.id === was }, [f.name])),
    );
  }

  // ---- Batches and pipelines.

  /** @returns {Record<string, Step[]>} */
  function savedPipelines() {
    try {
      const v = JSON.parse(localStorage.getItem(PIPELINES) ?? '{}');
      return v && typeof v === 'object' ? v : {};
    } catch {
      return {};
    }
  }

  /** @type {Step[]} */
  const steps = [];
  /** @type {Record<string, Step[]>} */
  let serverPipelines = {};

  function renderSteps() {
    ui.steps.replaceChildren(
      ...steps.map((s, i) => {
        const del = h('button', { type: 'button', class: 'secondary tiny' }, ['Remove', h('span', { class: 'sr' }, [` step ${i + 1}, ${s.operation}`])]);
        del.addEventListener('click', () => (steps.splice(i, 1), renderSteps(), ui.stepAdd.focus()));
        return h('li', {}, [h('code', {}, [s.operation]), ' ', h('span', { class: 'meta' }, [JSON.stringify(s.fields)]), ' ', del]);
      }),
    );
    renderWhat();
  }

  function renderWhat() {
    const was = ui.batchWhat.value;
    const mine = Object.keys(savedPipelines());
    ui.batchWhat.replaceChildren(
      h('option', { value: 'op' }, ['The operation chosen in the form above, with its values']),
      ...(steps.length ? [h('option', { value: 'steps' }, [`The pipeline being built (${steps.length} steps)`])] : []),
      ...mine.map((n) => h('option', { value: `mine:${n}` }, [`Saved in this browser: ${n}`])),
      ...Object.keys(serverPipelines).map((n) => h('option', { value: `server:${n}` }, [`On the server: ${n}`])),
    );
    if ([...ui.batchWhat.options].some((o) => o.value === was)) ui.batchWhat.value = was;
  }

  function renderBatchFiles() {
    const checked = new Set([...ui.batchFiles.querySelectorAll('input:checked')].map((b) => /** @type {HTMLInputElement} */ (b).value));
    const files = hooks.files();
    ui.batchFiles.replaceChildren(
      ...(files.length
        ? files.map((f) => h('label', {}, [h('input', { type: 'checkbox', value: f.id, checked: checked.has(f.id) }), ` ${f.name}`]))
        : [h('p', { class: 'help' }, ['No stored files yet.'])]),
    );
  }

  /** What one file of the batch runs: the request path and its body. @param {string} id @returns {[string, Record<string, unknown>] | undefined} */
  function batchRequest(id) {
    const what = ui.batchWhat.value;
    if (what === 'op') {
      const s = hooks.step();
      return s && [s.operation, { ...s.fields, id: s.operation === '/merged-pdf' || s.operation === '/zip' ? [id] : id }];
    }
    if (what === 'steps') return ['/pipeline', { id: [id], steps }];
    if (what.startsWith('mine:')) return ['/pipeline', { id: [id], steps: savedPipelines()[what.slice(5)] }];
    if (what.startsWith('server:')) return ['/pipeline', { id: [id], pipeline: what.slice(7) }];
    return undefined;
  }

  async function runBatch() {
    const files = hooks.files().filter((f) => /** @type {HTMLInputElement | null} */ (ui.batchFiles.querySelector(`input[value="${f.id}"]`))?.checked);
    if (!files.length) return say('Check the files the batch runs on.');
    if (!batchRequest(files[0].id)) return say('Choose an operation in the form above (or build a pipeline) first.');
    ui.batchRun.disabled = true;
    ui.batchDone.replaceChildren();
    /** @type {StoredFile[]} */
    const outputs = [];
    let failed = 0;
    const rows = files.map((f) => {
      const bar = h('progress', { max: '1', 'aria-label': `Progress of ${f.name}` });
      const state = h('span', { class: 'meta' }, ['waiting']);
      ui.batchRows.append(h('li', { 'data-id': f.id }, [h('span', { class: 'name' }, [f.name]), bar, state]));
      return { f, bar, state };
    });
    ui.batchRows.replaceChildren(...rows.map((r) => /** @type {HTMLElement} */ (r.bar.parentElement)));
    say(`Running on ${files.length} files…`);
    // Two at a time: the server queues the rest anyway, and every row shows its own state.
    let next = 0;
    const worker = async () => {
      while (next < rows.length) {
        const { f, bar, state } = rows[next++];
        const req = /** @type {[string, Record<string, unknown>]} */ (batchRequest(f.id));
        state.textContent = 'running';
        try {
          const result = await runJob(req[0], req[1], (p) => (bar.value = p));
          const made = await Promise.all(
            ids(result.outputId).map((id) =>
              api(`/resource/${encodeURIComponent(id)}?format=info`).then(
                (i) => /** @type {StoredFile} */ ({ id: i.id, name: i.name, type: i.type, size: i.size }),
              ),
            ),
          );
          outputs.push(...made);
          bar.value = 1;
          state.replaceChildren('done: ', ...made.flatMap((m, i) => [i ? ', ' : '', h('a', { href: `/resource/${m.id}`, download: m.name }, [m.name])]));
          if (!made.length) state.textContent = 'done';
          bar.parentElement?.classList.add('ok');
        } catch (err) {
          failed++;
          state.textContent = `failed: ${err instanceof Error ? err.message : err}`;
          bar.parentElement?.classList.add('bad');
        }
      }
    };
    await Promise.all([worker(), worker()]);
    hooks.remember(outputs);
    ui.batchRun.disabled = false;
    say(`Batch finished: ${files.length - failed} of ${files.length} files done${failed ? `, ${failed} failed` : ''}.`);
    if (outputs.length) ui.batchDone.replaceChildren(zipButton(outputs));
  }

  /** "Download all": the files put into one archive by /zip, then fetched as any download. @param {StoredFile[]} files */
  function zipButton(files) {
    const b = h('button', { type: 'button', class: 'secondary' }, [`Download all ${files.length} as a ZIP`]);
    b.addEventListener('click', async () => {
      b.disabled = true;
      try {
        const r = await post('/zip', { id: files.map((f) => f.id), output: 'results' });
        const a = h('a', { href: `/resource/${ids(r.outputId)[0]}`, download: 'results.zip' });
        document.body.append(a);
        a.click();
        a.remove();
        say('The ZIP is being downloaded.');
      } catch (err) {
        hooks.showError(err);
      } finally {
        b.disabled = false;
      }
    });
    return b;
  }

  // ---- Before and after.

  /** @param {StoredFile} before @param {StoredFile} after */
  async function compare(before, after) {
    const cols = await Promise.all(
      [before, after].map(async (f, i) => {
        const b = await pageBoxes(f.id);
        const dpi = dpiFor(b, THUMB_PX * 1.5);
        const list = h(
          'ol',
          { class: 'pages big', 'aria-label': `Pages of ${f.name}` },
          b.slice(0, PAGE_CHUNK).map((x) => {
            const img = pageImage(f.id, x.page, dpi, `${i ? 'After' : 'Before'}: page ${x.page} of ${f.name}`);
            shape(img, x);
            return h('li', {}, [img]);
          }),
        );
        return h('div', {}, [h('h3', {}, [`${i ? 'After' : 'Before'}: ${f.name} (${b.length} pages)`]), list]);
      }),
    );
    ui.compareBody.replaceChildren(...cols);
    ui.compare.hidden = false;
    ui.compareHeading.focus();
  }

  // ---- Wiring.

  ui.blank.addEventListener('click', addBlank);
  ui.build.addEventListener('click', () => void buildSheet());
  ui.clear.addEventListener('click', () => {
    sheet = [];
    sheetShown = 0;
    renderSheet();
    say('The editor is empty.');
  });
  ui.apply.addEventListener('click', () => void applyMarks());
  ui.stepAdd.addEventListener('click', () => {
    const s = hooks.step();
    if (!s) return say('Choose an operation and fill its form first: it becomes the next step.');
    steps.push(s);
    renderSteps();
    ui.batchWhat.value = 'steps';
    say(`Step ${steps.length}: ${s.operation} added.`);
  });
  ui.pipeSave.addEventListener('click', () => {
    const name = ui.pipeName.value.trim();
    if (!name || !steps.length) return say('Add steps and give the pipeline a name first.');
    localStorage.setItem(PIPELINES, JSON.stringify({ ...savedPipelines(), [name]: steps }));
    renderWhat();
    ui.batchWhat.value = `mine:${name}`;
    say(`Pipeline “${name}” saved in this browser.`);
  });
  ui.batchRun.addEventListener('click', () => void runBatch());
  // The server's named pipelines are asked for when the choice is first used (by then a needed key is typed).
  ui.batchWhat.addEventListener(
    'focus',
    () =>
      void api('/pipelines').then(
        (r) => {
          serverPipelines = Object.fromEntries((r.pipelines ?? []).map((/** @type {{ name: string, steps: Step[] }} */ p) => [p.name, p.steps]));
          renderWhat();
        },
        // Without a key, or an older server: the browser's own pipelines still work.
        () => {},
      ),
    { once: true },
  );
  renderWhat();

  return { filesChanged, compare, zipButton };
}
