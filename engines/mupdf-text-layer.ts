import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineContext } from './context.js';
import { runScript } from './mupdf.js';
import { expectOutput, run } from './run.js';

/**
 * MuPDF for OCR: which pages already carry text (and how they were scanned), one page as an image for
 * Tesseract, and laying Tesseract's text-only pages onto the original pages. The two document-level steps are
 * small `mutool run` scripts (MuPDF's JavaScript), so the PDF is parsed and written in a separate process,
 * never in ours, and the original content streams are never re-encoded.
 */

/**
 * Surveys each asked page's own content (annotations and form fields left out: a filled-in field on a scanned
 * form is not the page's text): the glyphs with a code above space, visible or not (render mode 3 counts, so
 * a page OCR'd before has text), the highest resolution of its images, the share of the page they cover and
 * the fewest colours that hold them all (1-bit, grey, colour). Images are not decoded.
 */
const SURVEY = String.raw`
var doc = new PDFDocument(scriptArgs[0]);
var pages = scriptArgs[1].split(",");
var KINDS = ["mono", "gray", "rgb"];
var out = {};
for (var i = 0; i < pages.length; i++) {
  var n = Number(pages[i]), glyphs = 0, ppi = 0, area = 0, kind = -1;
  var text = function (t) { t.walk({ showGlyph: function (f, m, g, u) { if (u > 32) glyphs++; } }); };
  var image = function (img, m, mask) {
    var w = Math.sqrt(m[0] * m[0] + m[1] * m[1]), h = Math.sqrt(m[2] * m[2] + m[3] * m[3]);
    if (!(w > 0 && h > 0)) return;
    ppi = Math.max(ppi, img.getWidth() * 72 / w, img.getHeight() * 72 / h);
    area += Math.abs(m[0] * m[3] - m[1] * m[2]);
    var gray = /^(DeviceGray|Indexed\(\d+,DeviceGray\))$/.test(String(img.getColorSpace()));
    kind = Math.max(kind, mask || img.getImageMask() || (gray && img.getBitsPerComponent() === 1) ? 0 : gray ? 1 : 2);
  };
  var dev = {
    fillText: text, strokeText: text, clipText: text, clipStrokeText: text, ignoreText: text,
    fillImage: function (img, m) { image(img, m, false); },
    fillImageMask: function (img, m) { image(img, m, true); },
    clipImageMask: function (img, m) { image(img, m, true); },
  };
  var page = doc.loadPage(n - 1), b = page.bound();
  page.toDisplayList(false).run(dev, Identity);
  out[n] = { glyphs: glyphs, ppi: Math.round(ppi * 100) / 100, cover: area / Math.max(1e-9, (b[2] - b[0]) * (b[3] - b[1])), colors: kind < 0 ? "rgb" : KINDS[kind] };
}
print(JSON.stringify(out));
`;

/**
 * Lays each text-only page onto its original page as a form XObject: the original content streams are kept
 * as they are (wrapped between two new streams "q" and "Q ... Do"), the page gets its own copy of its
 * resources with the form added. The form is placed with the inverse of MuPDF's page transform, the one the
 * page image was drawn with, so crop box offsets, /Rotate and /UserUnit come out right by construction.
 * Every Tesseract text-only page has the same resources (one glyph-less font): grafted once, shared.
 * Saved incrementally when MuPDF can (the original bytes stay as they were, signatures included),
 * else written whole; an encrypted input keeps its encryption either way.
 */
const ADD_LAYERS = String.raw`
var doc = new PDFDocument(scriptArgs[0]);
var plan = JSON.parse(read(scriptArgs[2]));
function concat(a, b) {
  return [a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3], a[4] * b[0] + a[5] * b[2] + b[4], a[4] * b[1] + a[5] * b[3] + b[5]];
}
function invert(m) {
  var det = m[0] * m[3] - m[1] * m[2];
  return [m[3] / det, -m[1] / det, -m[2] / det, m[0] / det, (m[2] * m[5] - m[3] * m[4]) / det, (m[1] * m[4] - m[0] * m[5]) / det];
}
function has(v) { return v !== undefined && v !== null && !v.isNull(); }
function inherited(page, key) {
  for (var p = page, depth = 0; has(p) && depth < 64; p = p.get("Parent"), depth++) if (has(p.get(key))) return p.get(key);
  return null;
}
function copyDict(d) {
  var c = doc.newDictionary();
  if (has(d)) d.forEach(function (k, v) { c.put(k, v); });
  return c;
}
function num(n) { return String(Math.round(n * 1e5) / 1e5); }
var shared = null;
for (var i = 0; i < plan.length; i++) {
  var layer = new PDFDocument(plan[i].layer);
  var lp = layer.findPage(0);
  var lb = lp.get("MediaBox");
  var lx0 = lb.get(0).valueOf(), ly1 = lb.get(3).valueOf();
  var lc = lp.get("Contents");
  var form = doc.newDictionary();
  form.put("Type", doc.newName("XObject"));
  form.put("Subtype", doc.newName("Form"));
  form.put("BBox", doc.graftObject(lb));
  shared = shared || doc.graftObject(lp.get("Resources"));
  form.put("Resources", shared);
  if (has(lc.get("Filter"))) form.put("Filter", doc.graftObject(lc.get("Filter")));
  var formRef = doc.addRawStream(lc.readRawStream(), form);

  var mp = doc.loadPage(plan[i].page - 1);
  var b = mp.bound();
  // Layer space (points, y up, the image's top-left at the page's device top-left) -> device -> page space.
  var m = concat([1, 0, 0, -1, b[0] - lx0, b[1] + ly1], invert(mp.getTransform()));
  var page = doc.findPage(plan[i].page - 1);
  var res = copyDict(inherited(page, "Resources"));
  var xobjects = copyDict(res.get("XObject"));
  var name = "QuireOCR";
  for (var k = 1; has(xobjects.get(name)); k++) name = "QuireOCR" + k;
  xobjects.put(name, formRef);
  res.put("XObject", xobjects);
  page.put("Resources", res);
  var contents = page.get("Contents");
  var list = doc.newArray();
  list.push(doc.addStream("q\n", doc.newDictionary()));
  if (has(contents) && contents.isArray()) for (var j = 0; j < contents.length; j++) list.push(contents.get(j));
  else if (has(contents)) list.push(contents);
  list.push(doc.addStream("\nQ\nq " + m.map(num).join(" ") + " cm /" + name + " Do Q\n", doc.newDictionary()));
  page.put("Contents", list);
}
doc.save(scriptArgs[1], doc.canBeSavedIncrementally() ? "incremental" : "");
`;

export interface PageSurvey {
  glyphs: number;
  /** The highest resolution of the page's images (0 without images), pixels per inch as displayed. */
  ppi: number;
  /** The page area covered by images (overlaps counted twice), as a fraction of the page. */
  cover: number;
  /** The fewest colours that hold all of the page's images (rgb for a page without images). */
  colors: PageColors;
}

export type PageColors = 'mono' | 'gray' | 'rgb';

/** Surveys the asked pages (see SURVEY), by 1-based page number. */
export async function surveyPages(input: string, pages: number[], ctx: EngineContext): Promise<Map<number, PageSurvey>> {
  if (!pages.length) return new Map();
  const found = (await runScript('survey-pages.js', SURVEY, [input, pages.join(',')], ctx, true)) as Record<string, PageSurvey | undefined>;
  return new Map(
    pages.map((p) => {
      const f = found[p];
      const colors: PageColors = f?.colors === 'mono' || f?.colors === 'gray' ? f.colors : 'rgb';
      return [p, { glyphs: Number(f?.glyphs ?? 0), ppi: Number(f?.ppi ?? 0), cover: Number(f?.cover ?? 0), colors }];
    }),
  );
}

/** Image files for Tesseract, by colours: PBM (1 bit per pixel), PGM and PPM, each read without decoding. */
export const IMAGE_EXTENSIONS: Record<PageColors, string> = { mono: 'pbm', gray: 'pgm', rgb: 'ppm' };

/**
 * Arguments of `mutool draw` for one page as an anti-aliased image (`output` ends in IMAGE_EXTENSIONS[colors]).
 * Drawn whole, not in bands: MuPDF decodes a page's image again for each band, and a JBIG2 or Flate image
 * whole each time (measured at 300 dpi: a JBIG2 Letter scan 0.65 CPU s in bands of 256 rows, 0.07 whole; Flate
 * RGB 0.39 / 0.12; CCITT 0.12 / 0.04), the same pixels. The whole page costs 6-25 MB more, less than Tesseract
 * then holds for the same image.
 */
export function pageImageArgs(input: string, page: number, output: string, opts: { dpi: number; colors: PageColors }): string[] {
  return ['draw', '-q', '-r', String(opts.dpi), '-c', opts.colors, '-o', output, input, String(page)];
}

export async function drawPageImage(input: string, page: number, output: string, opts: { dpi: number; colors: PageColors }, ctx: EngineContext): Promise<void> {
  await run('mutool', pageImageArgs(input, page, output, opts), ctx);
  await expectOutput('mutool', output);
}

export interface TextLayer {
  /** 1-based page of the input. */
  page: number;
  /** A one-page text-only PDF whose page is the page image's size (Tesseract's textonly_pdf). */
  pdf: string;
}

/** Writes `input` with each layer laid onto its page (see ADD_LAYERS). */
export async function addTextLayers(input: string, output: string, layers: TextLayer[], ctx: EngineContext): Promise<void> {
  const plan = join(ctx.cwd, 'text-layers.json');
  await writeFile(plan, JSON.stringify(layers.map((l) => ({ page: l.page, layer: l.pdf }))));
  await runScript('add-text-layers.js', ADD_LAYERS, [input, output, plan], ctx);
  await expectOutput('mutool', output);
}
