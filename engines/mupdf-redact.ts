import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineContext } from './context.js';
import { runScript } from './mupdf.js';
import { expectOutput } from './run.js';

/**
 * Redaction with MuPDF (`mutool run` scripts, so the PDF is parsed and written in a separate process).
 * Marking writes standard /Redact annotations (PDF 1.7, 12.5.6.23: QuadPoints, a Rect around them, the
 * matched text as Contents) that Acrobat, MuPDF and PDF.js-based viewers list as redaction marks; applying
 * is MuPDF's own pdf_redact_page, which removes the glyphs under the marks from the content streams and
 * blanks image pixels there.
 */

const COMMON = String.raw`
function has(v) { return v !== undefined && v !== null && !v.isNull(); }
function num(n) { return String(Math.round(n * 1000) / 1000); }
function invert(m) {
  var det = m[0] * m[3] - m[1] * m[2];
  return [m[3] / det, -m[1] / det, -m[2] / det, m[0] / det, (m[2] * m[5] - m[3] * m[4]) / det, (m[1] * m[4] - m[0] * m[5]) / det];
}
function point(m, x, y) { return [x * m[0] + y * m[2] + m[4], x * m[1] + y * m[3] + m[5]]; }
// QuadPoints (ul ur ll lr per quad) as closed polygons ul-ur-lr-ll.
function polygons(q) {
  var s = "";
  for (var i = 0; i + 7 < q.length; i += 8)
    s += num(q[i]) + " " + num(q[i + 1]) + " m " + num(q[i + 2]) + " " + num(q[i + 3]) + " l " + num(q[i + 6]) + " " + num(q[i + 7]) + " l " + num(q[i + 4]) + " " + num(q[i + 5]) + " l h\n";
  return s;
}
`;

/**
 * Adds one /Redact annotation per mark. Quads arrive in MuPDF's page space (the stext space, /Rotate
 * applied) and are mapped to PDF user space with the inverse of MuPDF's page transform, so crop box offsets
 * and rotation come out right by construction; quads of marks flagged `user` are user space already. The appearance is a translucent red fill with a red border
 * (the text stays readable for review); /IC black is what other tools fill with when they apply the mark.
 * Saved incrementally when possible: the original bytes stay as they were.
 */
const MARK =
  COMMON +
  String.raw`
var doc = new PDFDocument(scriptArgs[0]);
var plan = JSON.parse(read(scriptArgs[2]));
var gs = doc.newDictionary();
gs.put("Type", doc.newName("ExtGState"));
gs.put("ca", 0.3);
gs.put("CA", 1);
var res = doc.newDictionary();
var gsres = doc.newDictionary();
gsres.put("Q0", doc.addObject(gs));
res.put("ExtGState", gsres);
var count = 0;
for (var i = 0; i < plan.length; i++) {
  var page = doc.loadPage(plan[i].page - 1);
  var inv = invert(page.getTransform());
  var pobj = doc.findPage(plan[i].page - 1);
  var old = pobj.get("Annots");
  var annots = doc.newArray();
  if (has(old) && old.isArray()) for (var j = 0; j < old.length; j++) annots.push(old.get(j));
  for (var k = 0; k < plan[i].marks.length; k++) {
    var mark = plan[i].marks[k];
    var qp = [], x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (var q = 0; q < mark.quads.length; q++) {
      for (var c = 0; c < 8; c += 2) {
        var p = mark.user ? [mark.quads[q][c], mark.quads[q][c + 1]] : point(inv, mark.quads[q][c], mark.quads[q][c + 1]);
        qp.push(Math.round(p[0] * 1000) / 1000, Math.round(p[1] * 1000) / 1000);
        x0 = Math.min(x0, p[0]); y0 = Math.min(y0, p[1]); x1 = Math.max(x1, p[0]); y1 = Math.max(y1, p[1]);
      }
    }
    var rect = [x0 - 0.5, y0 - 0.5, x1 + 0.5, y1 + 0.5].map(function (v) { return Math.round(v * 1000) / 1000; });
    var form = doc.newDictionary();
    form.put("Type", doc.newName("XObject"));
    form.put("Subtype", doc.newName("Form"));
    form.put("BBox", rect);
    form.put("Resources", res);
    var ap = doc.newDictionary();
    ap.put("N", doc.addStream("q /Q0 gs 1 0 0 rg\n" + polygons(qp) + "f Q\nq 1 0 0 RG 0.75 w\n" + polygons(qp) + "S Q\n", form));
    var a = doc.newDictionary();
    a.put("Type", doc.newName("Annot"));
    a.put("Subtype", doc.newName("Redact"));
    a.put("Rect", rect);
    a.put("QuadPoints", qp);
    if (mark.text) a.put("Contents", doc.newString(mark.text));
    a.put("NM", doc.newString("quire-redact-" + plan[i].page + "-" + k));
    a.put("T", doc.newString("Quire"));
    a.put("F", 4);
    a.put("C", [1, 0, 0]);
    a.put("IC", [0, 0, 0]);
    a.put("P", pobj);
    a.put("AP", ap);
    annots.push(doc.addObject(a));
    count++;
  }
  pobj.put("Annots", annots);
}
doc.save(scriptArgs[1], doc.canBeSavedIncrementally() ? "incremental" : "compress");
print(JSON.stringify({ marks: count }));
`;

/**
 * Applies every /Redact annotation: MuPDF removes the text under it (glyphs whose box meets the area are
 * dropped from the content stream), replaces the image pixels there and deletes the annotations; then the
 * areas are painted in the asked colour (MuPDF's own boxes are always black). The file is written whole,
 * with garbage collection, so the old content streams and images do not survive as unused objects.
 * The matched texts (the marks' Contents) are also looked for in the document information dictionary and
 * the XMP packet: an entry or packet that contains one is removed, since metadata often repeats a title or
 * a name. Links and comments that overlap an area are deleted (their URI or note may repeat the text);
 * form fields are kept. Prints a summary; with no redaction annotation at all nothing is written.
 */
const APPLY =
  COMMON +
  String.raw`
var doc = new PDFDocument(scriptArgs[0]);
var fill = scriptArgs[2];
var areas = 0, removed = 0, pages = [], texts = [], scrubbed = [];
function bbox(v) {
  var b = [Infinity, Infinity, -Infinity, -Infinity];
  for (var i = 0; i + 1 < v.length; i += 2) { b[0] = Math.min(b[0], v[i]); b[1] = Math.min(b[1], v[i + 1]); b[2] = Math.max(b[2], v[i]); b[3] = Math.max(b[3], v[i + 1]); }
  return b;
}
for (var i = 0; i < doc.countPages(); i++) {
  var page = doc.loadPage(i);
  var annots = page.getAnnotations();
  var paths = "", boxes = [];
  for (var k = 0; k < annots.length; k++) {
    if (annots[k].getType() !== "Redact") continue;
    var o = annots[k].getObject();
    var q = o.get("QuadPoints"), qp = [];
    if (has(q) && q.isArray() && q.length >= 8) for (var j = 0; j < q.length; j++) qp.push(q.get(j).valueOf());
    else {
      var r = o.get("Rect");
      var a = r.get(0).valueOf(), b = r.get(1).valueOf(), c = r.get(2).valueOf(), d = r.get(3).valueOf();
      qp = [a, d, c, d, a, b, c, b];
    }
    paths += polygons(qp);
    boxes.push(bbox(qp));
    var t = o.get("Contents");
    if (has(t) && t.isString() && t.asString().length > 1) texts.push(t.asString());
    areas++;
  }
  if (!paths) continue;
  page.applyRedactions(false, 2);
  // Links and comments over a removed area would still carry its text (a URI, a note): they go too.
  var rest = page.getAnnotations();
  for (var k = 0; k < rest.length; k++) {
    if (rest[k].getType() === "Widget") continue;
    var r = rest[k].getObject().get("Rect");
    if (!has(r) || !r.isArray() || r.length < 4) continue;
    var ab = bbox([r.get(0).valueOf(), r.get(1).valueOf(), r.get(2).valueOf(), r.get(3).valueOf()]);
    for (var n = 0; n < boxes.length; n++) {
      if (ab[0] < boxes[n][2] && boxes[n][0] < ab[2] && ab[1] < boxes[n][3] && boxes[n][1] < ab[3]) { page.deleteAnnotation(rest[k]); removed++; break; }
    }
  }
  var pobj = doc.findPage(i);
  var contents = pobj.get("Contents");
  var list = doc.newArray();
  list.push(doc.addStream("q\n", doc.newDictionary()));
  if (has(contents) && contents.isArray()) for (var j = 0; j < contents.length; j++) list.push(contents.get(j));
  else if (has(contents)) list.push(contents);
  list.push(doc.addStream("\nQ\nq " + fill + " rg\n" + paths + "f Q\n", doc.newDictionary()));
  pobj.put("Contents", list);
  pages.push(i + 1);
}
if (areas) {
  var lower = texts.map(function (s) { return s.toLowerCase(); });
  var leaks = function (s) { s = s.toLowerCase(); for (var n = 0; n < lower.length; n++) if (s.indexOf(lower[n]) >= 0) return true; return false; };
  var info = doc.getTrailer().get("Info");
  if (has(info) && info.isDictionary()) {
    var keys = [];
    info.forEach(function (key, v) { if (has(v) && v.isString() && leaks(v.asString())) keys.push(key); });
    for (var n = 0; n < keys.length; n++) { info.delete(keys[n]); scrubbed.push("Info/" + keys[n]); }
  }
  var root = doc.getTrailer().get("Root");
  var meta = root.get("Metadata");
  if (has(meta) && meta.isStream()) {
    // 1.21's Buffer has no toString: through a file in the job dir.
    meta.readStream().save(scriptArgs[1] + ".xmp");
    var xmp = read(scriptArgs[1] + ".xmp");
    if (leaks(xmp)) { root.delete("Metadata"); scrubbed.push("Metadata"); }
  }
  doc.save(scriptArgs[1], "garbage,compress");
}
print(JSON.stringify({ areas: areas, pages: pages, scrubbed: scrubbed, annotations: removed }));
`;

export interface RedactionMarks {
  /** 1-based page. */
  page: number;
  /**
   * Quads (ul ur ll lr) in MuPDF's page space, and the text they cover; with `user`, the quads are already in PDF
   * user space (areas drawn on the page, mapped by the caller) and are written as they are.
   */
  marks: { quads: number[][]; text: string; user?: boolean }[];
}

/** Writes `input` with a /Redact annotation per mark; returns how many were added. */
export async function markRedactions(input: string, output: string, plan: RedactionMarks[], ctx: EngineContext): Promise<number> {
  const file = join(ctx.cwd, 'redaction-marks.json');
  await writeFile(file, JSON.stringify(plan.filter((p) => p.marks.length)));
  const r = await runScript('mark-redactions.js', MARK, [input, output, file], ctx, true);
  await expectOutput('mutool', output);
  return Number(r.marks);
}

export interface AppliedRedactions {
  /** Redaction annotations applied (0: the input had none and nothing was written). */
  areas: number;
  pages: number[];
  /** Metadata entries removed because they held redacted text. */
  scrubbed: string[];
  /** Other annotations (links, comments) removed because they overlapped a redacted area. */
  annotations: number;
}

/** Applies the input's /Redact annotations, filling the areas with `rgb` (components 0-255). */
export async function applyRedactions(input: string, output: string, rgb: [number, number, number], ctx: EngineContext): Promise<AppliedRedactions> {
  const fill = rgb.map((v) => String(Math.round((v / 255) * 1000) / 1000)).join(' ');
  const r = await runScript('apply-redactions.js', APPLY, [input, output, fill], ctx, true);
  const result = {
    areas: Number(r.areas) || 0,
    pages: (r.pages as number[]) ?? [],
    scrubbed: (r.scrubbed as string[]) ?? [],
    annotations: Number(r.annotations) || 0,
  };
  if (result.areas) await expectOutput('mutool', output);
  return result;
}
