import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { drawnPaths, traceDrawings } from '../../engines/mupdf-paths.js';
import { markRedactions, type RedactionMarks } from '../../engines/mupdf-redact.js';
import type { StextPage } from '../../engines/mupdf-stext.js';
import { popplerGeometry } from '../../engines/poppler-boxes.js';
import { inputError, selectPages, textBatches } from '../document/index.js';
import {
  type Area,
  areaInUserSpace,
  areaQuad,
  findMarks,
  overImages,
  PRESETS,
  pathsUnder,
  redactionsSchema,
  type TextRedaction,
  textInArea,
  touchedOutside,
} from '../redact/index.js';
import { json, output } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';

export default operation({
  path: '/pdf-with-redacted-text-preview',
  tag: 'Signing, redaction, watermark',
  summary: 'Mark the text to redact with redaction annotations',
  description:
    `redactions: [{"type": "literal|regex|preset|area", "value": ...}]. literal: the exact text (case-sensitive; any white space matches any white space, line breaks included). regex: an RE2 pattern (no look-around or back-references; (?i) for case-insensitive). preset: one of ${PRESETS.join(', ')}. ` +
    'area: a box on one page, {"page": 2, "x": 72, "y": 100, "width": 200, "height": 40} (also as a JSON string), in PDF points from the lower-left corner of the page as seen (trim box, else crop box, after /Rotate), the coordinates /pdf-with-added-shapes and /pdf-with-added-image take: (x, y) is its lower-left corner. Everything under the box is marked, text or not (images, drawings, scanned pages); a page the document lacks, or a box reaching more than a point past the page (its crop box), is a 400 naming the field; characters outside an area whose font boxes reach into it (applying removes them too) are named in the warning, and so is an area over vector drawings (applying paints over them but does not remove them: send the applied result to /rasterized-pdf if they must not survive). ' +
    'Every match or area becomes a standard /Redact annotation (one quad per line a match covers, the matched text as its comment; an area one rectangle with the text under it as its comment) drawn as a translucent red box; the page content is left as it is. Send the output to /pdf-with-redacted-text-applied to remove the marked content: text, and image pixels under the marks. Text is read as MuPDF reads it: scanned pages need /pdf-with-ocr-text first for literal, regex and preset redactions.',
  inputs: pdfInput(),
  fields: { redactions: json(redactionsSchema), output: output() },
  output: 'file',
  engines: ['qpdf', 'mupdf', 'poppler'],
  thread: import.meta.url,
  run: async ({ fields, input, dir, signal, timeoutMs, outputName, progress }) => {
    const ctx = { cwd: dir, signal, timeoutMs };
    const pages = await selectPages(input.path, '1-last', ctx);
    const texts = fields.redactions.filter((r): r is TextRedaction => r.type !== 'area');
    // Areas are checked against the pages before any text is read: a box off the page is the client's mistake.
    const areas = fields.redactions.flatMap((r, i) => (r.type === 'area' ? [{ area: r.value as Area, field: `redactions[${i}].value` }] : []));
    const geometry = areas.length
      ? await popplerGeometry(input.path, pages.length, ctx).catch((err) => {
          throw inputError(err);
        })
      : [];
    const boxes = areas.map((a) => ({ page: a.area.page, rect: areaInUserSpace(a.area, geometry, a.field) }));
    // Text is read on every page for text redactions, else only where an area lies (its comment).
    const read = texts.length ? pages : [...new Set(boxes.map((b) => b.page))].sort((a, b) => a - b);
    // Page by page: the matches of each page are kept, its characters only where an area lies.
    const areaPages = new Set(boxes.map((b) => b.page));
    const stext: { page: number; textless: boolean; marks: ReturnType<typeof findMarks>; text?: StextPage }[] = [];
    await textBatches(
      input.path,
      read,
      ctx,
      undefined,
      async () => (page) => ({
        page: page.page,
        textless: !page.lines.length,
        marks: texts.length ? findMarks(page, texts) : [],
        text: areaPages.has(page.page) ? page : undefined,
      }),
      (batch) => void stext.push(...batch),
    ).catch((err) => {
      throw inputError(err);
    });
    progress(0.5);
    const found = new Map(stext.map((page) => [page.page, page.marks]));
    // Marks narrowed to spare a neighbouring line keep their full height over images (scans): one trace of those pages.
    const narrowed = [...found].filter(([, marks]) => marks.some((m) => m.full)).map(([page]) => page);
    const images = narrowed.length
      ? (
          await traceDrawings(input.path, narrowed, ctx).catch((err) => {
            throw inputError(err);
          })
        ).images
      : [];
    const plan: RedactionMarks[] = stext.map((page) => ({
      page: page.page,
      marks: [
        ...(found.get(page.page) ?? []).map((m) =>
          overImages(
            m,
            images.filter((im) => im.page === page.page),
          ),
        ),
        ...boxes
          .filter((b) => b.page === page.page)
          .map((b) => ({ quads: [areaQuad(b.rect)], text: textInArea(b.rect, geometry[b.page - 1], page.text), user: true })),
      ],
    }));
    const path = join(dir, 'redaction-preview.pdf');
    const name = `${outputName}.pdf`;
    if (!plan.some((p) => p.marks.length)) {
      await copyFile(input.path, path);
      const textless = stext.every((p) => p.textless);
      return {
        files: [{ path, name }],
        warning: textless
          ? 'No text was found in this document: it may be scanned images. Run /pdf-with-ocr-text first, then preview the redactions.'
          : 'Nothing in the document matched the redactions: the output has no redaction marks.',
      };
    }
    await markRedactions(input.path, path, plan, ctx).catch((err) => {
      throw inputError(err);
    });
    // Letters of a neighbouring line whose font box reaches into an area would be removed with it: say which.
    const touched = areas.flatMap((a, i) => {
      const text = touchedOutside(boxes[i].rect, geometry[a.area.page - 1], stext.find((p) => p.page === a.area.page)?.text);
      return text ? [`${a.field} (page ${a.area.page}) also meets "${text}" outside the box`] : [];
    });
    const warnings = touched.length
      ? [
          `${touched.join('; ')}: applying removes every character whose font box (ascent to descent) meets a mark, so these go too. Draw the box within the lines' height to keep them.`,
        ]
      : [];
    // MuPDF 1.21 removes text and image pixels under a mark but only paints over line art: say where some lies.
    if (areas.length) {
      const traced = await drawnPaths(input.path, [...new Set(boxes.map((b) => b.page))], ctx).catch(() => null);
      const drawn = areas.flatMap((a, i) => {
        const n = traced
          ? pathsUnder(
              boxes[i].rect,
              geometry[a.area.page - 1],
              traced.filter((p) => p.page === a.area.page),
            )
          : 0;
        return n ? [`${a.field} (page ${a.area.page}) lies over ${n} vector drawing${n === 1 ? '' : 's'}`] : [];
      });
      if (drawn.length)
        warnings.push(
          `${drawn.join('; ')}: applying paints over vector drawings but does not remove them from the file (the MuPDF of Debian 12 cannot); if they must not survive, send the applied result to /rasterized-pdf.`,
        );
    }
    return { files: [{ path, name }], warning: warnings.length ? warnings.join(' ') : undefined };
  },
});
