import { copyFile } from 'node:fs/promises';
import type { EngineContext } from '../../engines/context.js';
import { drawnPaths, traceDrawings } from '../../engines/mupdf-paths.js';
import { markRedactions, type RedactionMarks } from '../../engines/mupdf-redact.js';
import type { StextPage } from '../../engines/mupdf-stext.js';
import { popplerGeometry } from '../../engines/poppler-boxes.js';
import { inputError, selectPages, textBatches } from '../document/index.js';
import { type Area, areaInUserSpace, areaQuad, pathsUnder, textInArea, touchedOutside } from './redact-area.js';
import { findMarks, overImages, type Redaction, type TextRedaction } from './redact-find.js';

/**
 * The preview: every match or area of `redactions` marked in `output` as a /Redact annotation, the page content
 * left as it is (a copy of the input when nothing matched). Returns the warning, if any: nothing matched, or an
 * area also meets letters outside it or lies over vector drawings.
 */
export async function previewRedactions(
  input: string,
  redactions: Redaction[],
  output: string,
  ctx: EngineContext,
  progress: (done: number) => void,
): Promise<string | undefined> {
  const pages = await selectPages(input, '1-last', ctx);
  const texts = redactions.filter((r): r is TextRedaction => r.type !== 'area');
  // Areas are checked against the pages before any text is read: a box off the page is the client's mistake.
  const areas = redactions.flatMap((r, i) => (r.type === 'area' ? [{ area: r.value as Area, field: `redactions[${i}].value` }] : []));
  const geometry = areas.length
    ? await popplerGeometry(input, pages.length, ctx).catch((err) => {
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
    input,
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
        await traceDrawings(input, narrowed, ctx).catch((err) => {
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
  if (!plan.some((p) => p.marks.length)) {
    await copyFile(input, output);
    return stext.every((p) => p.textless)
      ? 'No text was found in this document: it may be scanned images. Run /pdf-with-ocr-text first, then preview the redactions.'
      : 'Nothing in the document matched the redactions: the output has no redaction marks.';
  }
  await markRedactions(input, output, plan, ctx).catch((err) => {
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
    const traced = await drawnPaths(input, [...new Set(boxes.map((b) => b.page))], ctx).catch(() => null);
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
  return warnings.length ? warnings.join(' ') : undefined;
}
