/** The page's markup and style: a static shell that app.js fills from /openapi.json. System fonts only (offline). */

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

export function pageHtml(p: { script: string; css: string; icon: string; product: string; keys: boolean }): string {
  const product = escapeHtml(p.product);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${product}</title>
<link rel="icon" href="${p.icon}" type="image/svg+xml">
<link rel="stylesheet" href="${p.css}">
<script type="module" src="${p.script}"></script>
</head>
<body>
<a class="skip" href="#op-search">Skip to the operations</a>
<header>
  <h1>${product}</h1>
  <p>Convert, inspect and edit documents on this server. Programs use the same API: <a href="/docs">API reference</a>.</p>
  <div class="key"${p.keys ? '' : ' hidden'}>
    <label for="api-key">API key</label>
    <input id="api-key" type="password" autocomplete="off" spellcheck="false" aria-describedby="api-key-help">
    <p id="api-key-help" class="help">This server needs a key. It stays in this browser tab and is sent as the Api-Key header.</p>
  </div>
</header>
<main>
  <section class="ops" aria-labelledby="ops-h">
    <h2 id="ops-h">Operations</h2>
    <label for="op-search">Search operations</label>
    <input id="op-search" type="search" autocomplete="off" aria-describedby="op-count" aria-controls="op-list">
    <p id="op-count" class="help" role="status"></p>
    <div id="op-list"></div>
  </section>
  <div class="work">
    <section aria-labelledby="files-h">
      <h2 id="files-h">Files</h2>
      <div id="drop" class="drop">
        <label for="file-pick">Drop files here, or choose files to upload</label>
        <input id="file-pick" type="file" multiple>
      </div>
      <ul id="stored" class="stored" aria-label="Stored files"></ul>
    </section>
    <section aria-labelledby="docs-h">
      <h2 id="docs-h">Pages</h2>
      <p class="help">Every stored PDF, page by page. Choose a page to place things on it, or take pages into the editor.</p>
      <p id="bench-status" class="bench-status" role="status" aria-live="polite"></p>
      <div id="docs"></div>
    </section>
    <section id="editor" class="panel" aria-labelledby="editor-h" hidden>
      <h2 id="editor-h" tabindex="-1">Page editor</h2>
      <p id="editor-help" class="help">Drag a page to move it. With the keyboard: arrow keys go from page to page, Alt (or Ctrl) with an arrow moves the page, R turns it clockwise (Shift+R the other way), Delete removes it. The server makes the new PDF.</p>
      <ol id="sheet" class="sheet" aria-label="Pages of the new document" aria-describedby="editor-help"></ol>
      <p class="actions">
        <button id="blank-add" type="button" class="secondary">Insert a blank page</button>
        <button id="sheet-build" type="button">Make the PDF</button>
        <button id="sheet-clear" type="button" class="secondary">Empty the editor</button>
      </p>
    </section>
    <section id="placer" class="panel" aria-labelledby="placer-h" hidden>
      <h2 id="placer-h" tabindex="-1">Place on the page</h2>
      <fieldset id="tools" class="tools">
        <legend>Tool</legend>
        <label><input type="radio" name="tool" value="text" checked> Text stamp</label>
        <label><input type="radio" name="tool" value="watermark"> Watermark</label>
        <label><input type="radio" name="tool" value="image"> Image</label>
        <label><input type="radio" name="tool" value="rectangle"> Rectangle</label>
        <label><input type="radio" name="tool" value="signature"> Signature box</label>
        <label><input type="radio" name="tool" value="redaction"> Redaction box</label>
      </fieldset>
      <div class="tool-opts">
        <span class="opt for-text"><label for="place-text">Text</label> <input id="place-text" type="text" value="APPROVED" autocomplete="off"></span>
        <span class="opt for-text"><label for="place-size">Size in points</label> <input id="place-size" type="number" min="5" max="100" value="24"></span>
        <span class="opt for-image"><label for="place-image">Image</label> <select id="place-image"></select></span>
      </div>
      <p id="stage-help" class="help">Text stamps start their first line at the point chosen, images put their lower-left corner there, watermarks are centred on it; boxes are dragged from corner to corner. Keyboard: focus the page, move the cross with the arrow keys (Shift for larger steps) and press Enter (twice for a box, once at each corner).</p>
      <p class="actions pager">
        <button id="page-prev" type="button" class="secondary">Previous page</button>
        <span id="page-label"></span>
        <button id="page-next" type="button" class="secondary">Next page</button>
      </p>
      <div id="stage" class="stage" tabindex="0" role="application" aria-describedby="stage-help">
        <img id="stage-img" alt="">
        <div id="marks" class="marks" aria-hidden="true"></div>
        <div id="cross" class="cross" aria-hidden="true"></div>
      </div>
      <h3>Placed</h3>
      <ul id="placed" class="placed"></ul>
      <button id="place-apply" type="button" disabled>Apply to the PDF</button>
    </section>
    <form id="op-form" aria-labelledby="form-h">
      <h2 id="form-h" tabindex="-1">Choose an operation</h2>
      <p id="op-desc" class="desc"></p>
      <div id="op-inputs"></div>
      <div id="op-fields"></div>
      <button id="run" type="submit" disabled>Run</button>
    </form>
    <div class="progress" id="progress-box" hidden>
      <label for="progress">Progress</label>
      <progress id="progress" max="1"></progress>
    </div>
    <p id="status" role="status"></p>
    <p id="error" class="error" role="alert"></p>
    <section id="result" aria-labelledby="result-h" hidden>
      <h2 id="result-h" tabindex="-1">Result</h2>
      <ul id="outputs" class="outputs"></ul>
      <h3>Response</h3>
      <pre id="result-json" tabindex="0" aria-label="Response JSON"></pre>
    </section>
    <section id="compare" class="panel" aria-labelledby="compare-h" hidden>
      <h2 id="compare-h" tabindex="-1">Before and after</h2>
      <div id="compare-body" class="compare"></div>
    </section>
    <section id="batch" class="panel" aria-labelledby="batch-h">
      <h2 id="batch-h">Batch and pipelines</h2>
      <fieldset class="field">
        <legend>Files of the batch</legend>
        <div id="batch-files" class="batch-files"></div>
      </fieldset>
      <div class="field">
        <label for="batch-what">What runs on each file</label>
        <select id="batch-what"></select>
      </div>
      <details>
        <summary>Build a pipeline</summary>
        <p class="help">Choose an operation and fill its form, then add it as a step: each step takes the files the step before made.</p>
        <ol id="steps" class="steps" aria-label="Steps"></ol>
        <p class="actions">
          <button id="step-add" type="button" class="secondary">Add the chosen operation as a step</button>
          <label for="pipe-name">Name</label> <input id="pipe-name" type="text" autocomplete="off">
          <button id="pipe-save" type="button" class="secondary">Save the pipeline</button>
        </p>
      </details>
      <p><button id="batch-run" type="button">Run on the checked files</button></p>
      <ul id="batch-rows" class="batch-rows" aria-label="Files of the batch and their progress"></ul>
      <p id="batch-done"></p>
    </section>
  </div>
</main>
</body>
</html>`;
}

export const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><path d="M3 1h7l3 3v11H3z" fill="#fff" stroke="#1f4e8c"/><path d="M5 7h6M5 9h6M5 11h4" stroke="#1f4e8c"/></svg>`;

export const PAGE_CSS = `
:root { --fg: #1b1f24; --muted: #57606a; --line: #d0d7de; --accent: #1f4e8c; --bg: #fff; --soft: #f3f5f8; --bad: #a40e26; --focus: #d4570b; }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0; font: 16px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--fg); background: var(--bg); }
header { padding: 1rem 1.5rem; border-bottom: 1px solid var(--line); display: flex; flex-wrap: wrap; gap: .5rem 2rem; align-items: end; }
header h1 { margin: 0; font-size: 1.5rem; }
header p { margin: 0; }
h2 { font-size: 1.2rem; margin: 0 0 .5rem; }
h3 { font-size: 1rem; margin: 1rem 0 .25rem; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.skip, .sr { position: absolute; left: -100vw; }
.skip:focus { left: 1rem; top: 1rem; background: var(--bg); padding: .5rem; z-index: 1; }
.key { display: flex; flex-wrap: wrap; gap: .25rem .5rem; align-items: center; }
.key .help { flex-basis: 100%; }
main { display: grid; grid-template-columns: minmax(16rem, 22rem) 1fr; gap: 1.5rem; padding: 1rem 1.5rem 3rem; }
@media (max-width: 50rem) { main { grid-template-columns: 1fr; } }
.ops { border-right: 1px solid var(--line); padding-right: 1rem; }
@media (min-width: 50.01rem) { .ops { position: sticky; top: 0; align-self: start; } #op-list { max-height: calc(100vh - 9rem); } }
.ops > label { display: block; font-weight: 600; }
#op-list { overflow: auto; }
#op-list fieldset { border: 0; padding: 0; margin: .75rem 0 0; }
#op-list legend { font-weight: 600; color: var(--muted); font-size: .9rem; text-transform: uppercase; letter-spacing: .03em; }
#op-list label { display: grid; grid-template-columns: auto 1fr; gap: 0 .4rem; padding: .2rem .3rem; border-radius: 4px; cursor: pointer; align-items: baseline; }
#op-list label:has(input:checked) { background: var(--soft); font-weight: 600; }
#op-list code { grid-column: 2; color: var(--muted); font-size: .8rem; }
input, select, textarea, button { font: inherit; }
input[type=text], input[type=search], input[type=number], input[type=password], select, textarea { border: 1px solid #8c959f; border-radius: 4px; padding: .3rem .45rem; max-width: 100%; }
input[type=search], textarea, .field input[type=text] { width: 100%; }
textarea { min-height: 5rem; font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: .9rem; }
button { border: 1px solid var(--accent); background: var(--accent); color: #fff; border-radius: 4px; padding: .35rem .9rem; cursor: pointer; }
button.secondary { background: var(--bg); color: var(--accent); }
button:disabled { opacity: .5; cursor: not-allowed; }
.work { min-width: 0; }
.work > * + * { margin-top: 1rem; }
.drop { border: 2px dashed #8c959f; border-radius: 6px; padding: 1rem; display: grid; gap: .5rem; }
.drop.over { border-color: var(--accent); background: var(--soft); }
.stored { list-style: none; padding: 0; margin: .5rem 0 0; }
.stored li { display: flex; flex-wrap: wrap; gap: .25rem .75rem; align-items: center; padding: .2rem 0; border-bottom: 1px solid var(--soft); }
.stored .meta, .outputs .meta { color: var(--muted); font-size: .85rem; }
form { border: 1px solid var(--line); border-radius: 6px; padding: 1rem; }
.desc, .help { color: var(--muted); font-size: .9rem; margin: .15rem 0 0; white-space: pre-line; }
.field { margin: 0 0 .9rem; }
.field > label, fieldset.field > legend { display: block; font-weight: 600; }
fieldset.field { border: 1px solid var(--line); border-radius: 4px; padding: .5rem .75rem; }
fieldset.field label { display: block; font-weight: normal; }
.req { color: var(--bad); font-weight: normal; font-size: .85rem; }
.field > label.switch { display: inline-flex; gap: .5rem; align-items: center; font-weight: 600; }
.switch input { appearance: none; width: 2.4rem; height: 1.3rem; border-radius: 1rem; background: #8c959f; position: relative; margin: 0; cursor: pointer; }
.switch input::before { content: ""; position: absolute; top: .15rem; left: .15rem; width: 1rem; height: 1rem; border-radius: 50%; background: #fff; transition: left .1s; }
.switch input:checked { background: var(--accent); }
.switch input:checked::before { left: 1.25rem; }
.progress { display: flex; gap: .75rem; align-items: center; }
progress { width: 100%; max-width: 30rem; height: 1rem; }
#status:empty, #error:empty { display: none; }
.error { color: var(--bad); font-weight: 600; border-left: 4px solid var(--bad); padding-left: .5rem; }
.outputs { list-style: none; padding: 0; display: grid; gap: 1rem; }
.outputs li { border: 1px solid var(--line); border-radius: 6px; padding: .75rem; }
.outputs h3 { margin: 0 0 .25rem; word-break: break-all; }
.outputs .actions { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; margin-top: .5rem; }
.thumb { display: block; max-width: 16rem; max-height: 16rem; border: 1px solid var(--line); margin-top: .5rem; background: #fff; }
iframe.pdf { width: 100%; height: 32rem; border: 1px solid var(--line); margin-top: .5rem; }
details pre { max-height: 15rem; }
.panel { border: 1px solid var(--line); border-radius: 6px; padding: 1rem; }
.actions { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; }
button.tiny { padding: 0 .35rem; font-size: .85rem; line-height: 1.5; }
.bench-status:empty { display: none; }
.bench-status { background: var(--soft); border-left: 4px solid var(--accent); padding: .25rem .5rem; }
.doc { border-top: 1px solid var(--line); padding: .5rem 0; }
.doc summary { cursor: pointer; font-weight: 600; }
.doc .meta { font-weight: normal; color: var(--muted); font-size: .85rem; }
.pages { list-style: none; padding: 0; margin: .5rem 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(7rem, 1fr)); gap: .75rem; }
.pages.big { grid-template-columns: repeat(auto-fill, minmax(10rem, 1fr)); }
.pages img, .sheet .frame { display: block; width: 100%; background: #fff; border: 1px solid var(--line); box-shadow: 0 1px 2px #0002; }
img.loading { background: repeating-linear-gradient(45deg, var(--soft), var(--soft) 6px, #fff 6px, #fff 12px); }
button.page { display: grid; gap: .15rem; justify-items: center; width: 100%; padding: .25rem; background: none; color: var(--muted); border: 2px solid transparent; font-size: .8rem; }
button.page:hover { border-color: var(--accent); }
.sheet { list-style: none; padding: .5rem; margin: .5rem 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(8rem, 1fr)); gap: .75rem; background: var(--soft); border-radius: 6px; min-height: 4rem; }
.sheet li { display: grid; gap: .25rem; padding: .35rem; background: var(--bg); border: 2px solid var(--line); border-radius: 6px; cursor: grab; touch-action: none; user-select: none; align-content: start; }
.sheet li.dragging { cursor: grabbing; opacity: .8; z-index: 2; position: relative; box-shadow: 0 4px 12px #0004; }
.sheet li.drop-before { border-left: 6px solid var(--focus); }
.sheet li.drop-after { border-right: 6px solid var(--focus); }
.sheet .frame { overflow: hidden; display: grid; place-items: center; }
.sheet .frame img { width: 100%; display: block; }
.sheet .frame.blank { min-height: 3rem; }
.sheet .cap { font-size: .75rem; color: var(--muted); overflow-wrap: anywhere; }
.sheet .tools { display: flex; flex-wrap: wrap; gap: .2rem; justify-content: center; }
img.rot180 { transform: rotate(180deg); }
.sheet .frame { position: relative; }
/* Turned a quarter, the picture's width is the frame's height (width x page width / page height, in --fit). */
.sheet .frame img.rot90, .sheet .frame img.rot270 { position: absolute; left: 50%; top: 50%; width: calc(100% * var(--fit, 1)); max-width: none; transform: translate(-50%, -50%) rotate(90deg); }
.sheet .frame img.rot270 { transform: translate(-50%, -50%) rotate(270deg); }
.tools { border: 0; padding: 0; margin: 0 0 .5rem; display: flex; flex-wrap: wrap; gap: .25rem 1rem; }
.tools legend { font-weight: 600; }
.tool-opts { display: flex; flex-wrap: wrap; gap: .5rem 1.25rem; align-items: center; }
.opt.for-image { display: none; }
#placer[data-tool=image] .opt.for-image { display: inline; }
#placer[data-tool=image] .opt.for-text, #placer[data-tool=rectangle] .opt.for-text, #placer[data-tool=signature] .opt.for-text, #placer[data-tool=redaction] .opt.for-text { display: none; }
.stage { position: relative; max-width: 100%; width: 42rem; margin: .5rem 0; border: 1px solid #8c959f; cursor: crosshair; container-type: size; background: #fff; }
.stage img { display: block; width: 100%; height: 100%; }
.marks { position: absolute; inset: 0; pointer-events: none; }
.mark { position: absolute; }
.mark.text, .mark.watermark { color: #c80000; white-space: nowrap; font-family: Helvetica, Arial, "Liberation Sans", sans-serif; line-height: 1; transform: translateY(-80%); }
.mark.watermark { color: #1f4e8cb0; transform: translate(-50%, -50%); }
.mark.image { width: 1.2rem; height: 1.2rem; border-left: 3px solid var(--accent); border-bottom: 3px solid var(--accent); transform: translateY(-100%); }
.mark.rectangle { border: 2px solid #1f4e8c; }
.mark.signature { border: 2px dashed #1a7f37; background: #1a7f3722; }
.mark.redaction { background: #000a; }
.cross { position: absolute; width: 1.5rem; height: 1.5rem; margin: -.75rem 0 0 -.75rem; border: 2px solid var(--focus); border-radius: 50%; display: none; pointer-events: none; }
.cross.on { display: block; }
.placed { padding-left: 1.25rem; }
.compare { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; }
.batch-files label { display: block; }
.batch-rows { list-style: none; padding: 0; display: grid; gap: .35rem; }
.batch-rows li { display: grid; grid-template-columns: minmax(8rem, 14rem) minmax(6rem, 12rem) 1fr; gap: .75rem; align-items: center; border-bottom: 1px solid var(--soft); }
.batch-rows li.ok .meta { color: #1a7f37; }
.batch-rows li.bad .meta { color: var(--bad); }
.steps { padding-left: 1.25rem; }
.steps .meta { font-size: .8rem; color: var(--muted); word-break: break-all; }
pre { background: var(--soft); padding: .75rem; border-radius: 6px; overflow: auto; max-height: 30rem; font-size: .85rem; }
`;
