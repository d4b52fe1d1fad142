import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineContext } from './context.js';
import { EngineError } from './errors.js';
import { runScript } from './mupdf.js';
import type { StampPlan } from './qpdf-edit.js';
import { expectOutput } from './run.js';

/**
 * Lays pages of a stamp PDF over (or under) pages of `input`, as qpdf's --overlay does (stampPages in
 * qpdf-edit.ts: each stamp page upright in the target's trim box, at scale 1), but with MuPDF and an incremental
 * save: only the changed pages and the stamps are written after the original bytes. qpdf 11.3 instead turns every
 * target page's content into a form of its own (content streams joined, decoded and compressed again, and streams
 * the pages shared copied per page): 2,010 pages took 20 s of CPU where copying the file takes 0.6 s.
 *
 * Each stamp page becomes one form XObject (its fonts and images copied once through one graft map); each target
 * page gets its own resources dictionary (a shallow copy: the shared one is left as it is) naming it, and its
 * contents become [q, the original streams, Q and the form drawn]; behind the page, the form is drawn first.
 * An encrypted input is left to qpdf (summary `encrypted`).
 */
// What both scripts share: the documents, the plan, and each target page's frame as a matrix from stamp space.
const PRELUDE = String.raw`
var doc = new PDFDocument(scriptArgs[0]);
var stamps = new PDFDocument(scriptArgs[1]);
var plan = JSON.parse(read(scriptArgs[3]));
function has(v) { return v !== undefined && v !== null && !v.isNull(); }
if (has(doc.getTrailer().get("Encrypt"))) {
  print(JSON.stringify({ encrypted: true }));
  quit();
}
function inherited(page, key) {
  for (var p = page, depth = 0; has(p) && depth < 64; p = p.get("Parent"), depth++) if (has(p.get(key))) return p.get(key);
  return null;
}
function copyDict(d) {
  var c = doc.newDictionary();
  if (has(d) && d.isDictionary()) d.forEach(function (k, v) { c.put(k, v); });
  return c;
}
function rect(box) {
  if (!has(box) || !box.isArray() || box.length < 4) return null;
  var v = [box.get(0).valueOf(), box.get(1).valueOf(), box.get(2).valueOf(), box.get(3).valueOf()];
  for (var i = 0; i < 4; i++) if (typeof v[i] !== "number" || !isFinite(v[i])) return null;
  return [Math.min(v[0], v[2]), Math.min(v[1], v[3]), Math.max(v[0], v[2]), Math.max(v[1], v[3])];
}
function num(n) { return String(Math.round(n * 1e5) / 1e5); }
function frameMatrix(page) {
  // The trim box, else the crop box, else the media box (qpdf's getTrimBox), and /Rotate as a quarter turn.
  var box = rect(page.get("TrimBox")) || rect(inherited(page, "CropBox")) || rect(inherited(page, "MediaBox")) || [0, 0, 612, 792];
  var rotate = has(inherited(page, "Rotate")) ? inherited(page, "Rotate").valueOf() : 0;
  rotate = (((Math.round(rotate / 90) * 90) % 360) + 360) % 360;
  // Stamp space (origin at the lower-left of the page as seen) to user space.
  var m = rotate === 90 ? [0, 1, -1, 0, box[2], box[1]] : rotate === 180 ? [-1, 0, 0, -1, box[2], box[3]] : rotate === 270 ? [0, -1, 1, 0, box[0], box[3]] : [1, 0, 0, 1, box[0], box[1]];
  return m.map(num).join(" ");
}
// Pages of one size draw their stamps with the same operators (the name is each page's own): one stream for all.
var streams = {};
function streamOf(text) {
  if (!streams[text]) streams[text] = doc.addStream(text, doc.newDictionary());
  return streams[text];
}
// The page's contents become [q, the original streams, Q, what is drawn] (or what is drawn first, behind it).
function wrapContents(page, draw, behind) {
  var contents = page.get("Contents");
  var list = doc.newArray();
  if (behind) list.push(draw);
  list.push(streamOf("q\n"));
  if (has(contents) && contents.isArray()) for (var j = 0; j < contents.length; j++) list.push(contents.get(j));
  else if (has(contents)) list.push(contents);
  list.push(streamOf("\nQ\n"));
  if (!behind) list.push(draw);
  page.put("Contents", list);
}
function save(count) {
  doc.save(scriptArgs[2], doc.canBeSavedIncrementally() ? "incremental" : "compress");
  print(JSON.stringify({ stamped: count }));
}
`;

const STAMP = String.raw`
var graft = doc.newGraftMap();
var forms = {};
function formOf(n) {
  if (forms[n]) return forms[n];
  var sp = stamps.findPage(n - 1);
  var parts = sp.get("Contents");
  var data = new Buffer();
  if (has(parts) && parts.isArray()) for (var j = 0; j < parts.length; j++) { data.writeBuffer(parts.get(j).readStream()); data.writeLine(""); }
  else if (has(parts)) data.writeBuffer(parts.readStream());
  var form = doc.newDictionary();
  form.put("Type", doc.newName("XObject"));
  form.put("Subtype", doc.newName("Form"));
  form.put("BBox", graft.graftObject(sp.get("MediaBox")));
  var res = sp.get("Resources");
  if (has(res)) form.put("Resources", graft.graftObject(res));
  forms[n] = doc.addStream(data, form);
  return forms[n];
}
for (var i = 0; i < plan.to.length; i++) {
  var page = doc.findPage(plan.to[i] - 1);
  var res = copyDict(inherited(page, "Resources"));
  var xobjects = copyDict(res.get("XObject"));
  var name = "QuireStamp";
  for (var k = 1; has(xobjects.get(name)); k++) name = "QuireStamp" + k;
  xobjects.put(name, formOf(plan.from[i]));
  res.put("XObject", xobjects);
  page.put("Resources", res);
  wrapContents(page, streamOf("q " + frameMatrix(page) + " cm /" + name + " Do Q\n"), plan.behind);
}
save(plan.to.length);
`;

/**
 * Text drawn straight into each target page's content (page numbers: a stamp page per number would be a form per
 * page to copy): plan.draws[i] is page i's text operators in stamp space, naming its fonts /QF1, /QF2..., which
 * are the fonts of the stamp file's first page (copied once); each page's resources get them under names of
 * its own.
 */
const TEXT = String.raw`
var graft = doc.newGraftMap();
var shared = stamps.findPage(0).get("Resources").get("Font");
var fonts = [];
shared.forEach(function (key, value) { fonts.push({ key: key, font: graft.graftObject(value) }); });
for (var i = 0; i < plan.to.length; i++) {
  var page = doc.findPage(plan.to[i] - 1);
  var res = copyDict(inherited(page, "Resources"));
  var own = copyDict(res.get("Font"));
  var prefix = "Quire";
  for (var k = 1; fonts.some(function (f) { return has(own.get(prefix + f.key)); }); k++) prefix = "Quire" + k;
  fonts.forEach(function (f) { own.put(prefix + f.key, f.font); });
  res.put("Font", own);
  page.put("Resources", res);
  var ops = plan.draws[i].replace(/\/QF/g, "/" + prefix + "QF");
  wrapContents(page, doc.addStream("q " + frameMatrix(page) + " cm\n" + ops + "\nQ\n", doc.newDictionary()), false);
}
save(plan.to.length);
`;

/**
 * stampPages with MuPDF (see STAMP). Fails with an EngineError for an encrypted input (qpdf keeps its
 * encryption) and wherever MuPDF fails, so the caller can fall back to qpdf's overlay.
 */
export async function stampPagesIncrementally(input: string, stamp: string, output: string, plan: StampPlan, ctx: EngineContext): Promise<void> {
  const planFile = join(ctx.cwd, 'stamp-plan.json');
  await writeFile(planFile, JSON.stringify(plan));
  const r = await runScript('stamp-pages.js', PRELUDE + STAMP, [input, stamp, output, planFile], ctx, true);
  if (r.encrypted) throw new EngineError('mutool', 'the input is encrypted: its stamps are laid by qpdf, which keeps the encryption');
  await expectOutput('mutool', output);
}

export interface TextPlan {
  /** 1-based target pages, ascending. */
  to: number[];
  /** For each target, its text operators in stamp space, naming the fonts /QF1, /QF2... of the stamp file's first page. */
  draws: string[];
}

/** Draws text into pages with an incremental save (see TEXT); fails like stampPagesIncrementally. */
export async function drawTextIncrementally(input: string, fonts: string, output: string, plan: TextPlan, ctx: EngineContext): Promise<void> {
  const planFile = join(ctx.cwd, 'text-plan.json');
  await writeFile(planFile, JSON.stringify(plan));
  const r = await runScript('draw-text.js', PRELUDE + TEXT, [input, fonts, output, planFile], ctx, true);
  if (r.encrypted) throw new EngineError('mutool', 'the input is encrypted: its text is laid by qpdf, which keeps the encryption');
  await expectOutput('mutool', output);
}
