import { StandardFontEmbedder, StandardFonts } from '@cantoo/pdf-lib';
import type { EngineContext } from '../../engines/context.js';
import { pageGeometry } from '../../engines/mupdf-stext.js';
import { chosenObjects, formFields } from '../../engines/qpdf-form.js';
import { type Box, deviceToUser, type Line, type PageModel, PdfObjects, pdfText, userToDevice, type Word } from '../document/index.js';

/**
 * Values of text and choice fields that their page does not show: a form filled by a program that left the
 * drawing to the viewer (/NeedAppearances, or an appearance that draws nothing: LibreOffice's empty `/Tx BMC EMC`)
 * shows its values in Acrobat, while MuPDF draws only the appearances, so the page model lacks them. Each is a row
 * of words at its field's place, in the size, colour and alignment its default appearance (/DA, /Q) asks for, for
 * the exports that keep a page's look.
 */

/** Widget flags: Hidden, NoView. */
const UNSEEN = 2 | 32;
/** Field flags: Multiline, Password (shown as dots, never as its value). */
const MULTILINE = 1 << 12;
const PASSWORD = 1 << 13;
/** Points between a field's border and its text, as viewers draw it. */
const PAD = 2;

const FONTS: [RegExp, string, StandardFonts][] = [
  [/^(tiro|times|ti)/i, 'Times-Roman', StandardFonts.TimesRoman],
  [/^(cour|co)/i, 'Courier', StandardFonts.Courier],
  [/^(hebo|helvetica-?bold)/i, 'Helvetica-Bold', StandardFonts.HelveticaBold],
];

/**
 * The values of the fields on `pages`, read once for the document (one qpdf read, however many pages), and a
 * function giving the rows of those a page model does not show, as the page model's lines: pages come batch by
 * batch and are let go.
 */
export async function unshownFieldRows(input: string, pages: number[], ctx: EngineContext): Promise<(page: PageModel) => Line[]> {
  const wanted = new Set(pages);
  const fields = (await formFields(input, ctx)).filter(
    (f) =>
      ['/Tx', '/Ch'].includes(f.fieldtype) &&
      !(f.fieldflags & PASSWORD) &&
      !((f.annotation?.annotationflags ?? 0) & UNSEEN) &&
      wanted.has(f.pageposfrom1) &&
      fieldValue(f.value).trim(),
  );
  if (!fields.length) return () => [];
  const refs = [...new Set(fields.flatMap((f) => [f.annotation.object, f.object]))];
  const [objects, geometry] = await Promise.all([
    chosenObjects(input, refs, ctx).then((json) => new PdfObjects(json)),
    pageGeometry(input, [...new Set(fields.map((f) => f.pageposfrom1))], ctx),
  ]);
  const values: { page: number; box: Box; rows: Line[] }[] = [];
  for (const f of fields) {
    const g = geometry.find((x) => x.page === f.pageposfrom1);
    const widget = objects.dict(f.annotation.object);
    const field = objects.dict(f.object) ?? widget;
    const rect = objects.array(widget?.['/Rect']).map((v) => Number(objects.resolve(v)));
    if (!g || !widget || rect.length !== 4 || rect.some((v) => !Number.isFinite(v))) continue;
    const toUser = deviceToUser(g);
    const toDevice = userToDevice(toUser);
    const c = [toDevice({ x: rect[0], y: rect[1] }), toDevice({ x: rect[2], y: rect[3] })];
    const box = { x0: Math.min(c[0].x, c[1].x), y0: Math.min(c[0].y, c[1].y), x1: Math.max(c[0].x, c[1].x), y1: Math.max(c[0].y, c[1].y) };
    const da = pdfText(objects.resolve(widget['/DA'] ?? field?.['/DA']));
    const quadding = Number(objects.resolve(widget['/Q'] ?? field?.['/Q'])) || 0;
    const text = displayed(
      fieldValue(f.value),
      objects.array(field?.['/Opt']).map((o) => objects.array(o).map((v) => pdfText(objects.resolve(v)))),
    );
    values.push({
      page: f.pageposfrom1,
      box,
      rows: fieldRows(text, box, { da, quadding, multiline: !!(f.fieldflags & MULTILINE), page: f.pageposfrom1, toUser }),
    });
  }
  return (page) =>
    values
      .filter((v) => v.page === page.page)
      // Text already inside the field: its appearance drew the value (or something else stands there).
      .filter(
        ({ box }) =>
          !page.lines.some((l) =>
            l.words.some((w) => {
              const [x, y] = [(w.box.x0 + w.box.x1) / 2, (w.box.y0 + w.box.y1) / 2];
              return x > box.x0 - 1 && x < box.x1 + 1 && y > box.y0 - 1 && y < box.y1 + 1;
            }),
          ),
      )
      .flatMap((v) => v.rows);
}

/** A field's value: its text, or its choices joined. */
const fieldValue = (v: unknown): string => (Array.isArray(v) ? v.map((x) => pdfText(x)).join(', ') : pdfText(v));

/** A choice's shown text: the display half of an /Opt pair whose export value it is. */
const displayed = (value: string, pairs: string[][]) => pairs.find((p) => p.length === 2 && p[0] === value)?.[1] ?? value;

/** The rows of a value in its field: one, centred on the field's height; a multiline field's from its top. */
function fieldRows(
  value: string,
  box: { x0: number; y0: number; x1: number; y1: number },
  {
    da,
    quadding,
    multiline,
    page,
    toUser,
  }: { da: string; quadding: number; multiline: boolean; page: number; toUser: (p: { x: number; y: number }) => { x: number; y: number } },
): Line[] {
  const tf = /\/([^\s/]+)\s+([\d.]+)\s+Tf/.exec(da);
  const [, name, standard] = FONTS.find(([re]) => re.test(tf?.[1] ?? '')) ?? [null, 'Helvetica', StandardFonts.Helvetica];
  const embedder = StandardFontEmbedder.for(standard as unknown as Parameters<typeof StandardFontEmbedder.for>[0]);
  const height = box.y1 - box.y0;
  // Size 0 is "fit the field": its height, as viewers size a single row, 12 pt at most.
  const size = Number(tf?.[2]) || Math.max(4, Math.min(12, multiline ? 12 : 0.7 * (height - 2 * PAD)));
  const colour = /([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+rg\b/.exec(da) ?? /([\d.]+)\s+g\b/.exec(da);
  const values = colour ? (colour.length > 2 ? [1, 2, 3].map((i) => Number(colour[i])) : [Number(colour[1])]) : [0];
  const width = (s: string) =>
    [...s].reduce((a, ch) => a + (embedder.encoding.canEncodeUnicodeCodePoint(ch.codePointAt(0)!) ? embedder.widthOfTextAtSize(ch, size) : 0.5 * size), 0);
  const rows = (multiline ? value.split(/\r\n|\r|\n/) : [value.replace(/[\r\n]+/g, ' ')]).filter((r) => r.trim());
  const pitch = 1.15 * size;
  return rows.map((row, i) => {
    const top = multiline ? box.y0 + PAD + i * pitch : (box.y0 + box.y1) / 2 - 0.55 * size;
    const rowWidth = width(row.trim());
    let x = quadding === 1 ? (box.x0 + box.x1 - rowWidth) / 2 : quadding === 2 ? box.x1 - PAD - rowWidth : box.x0 + PAD;
    const words: Word[] = [];
    for (const text of row.trim().split(/\s+/)) {
      const w = width(text);
      const b = { x0: x, y0: top, x1: x + w, y1: top + 1.1 * size };
      const corner = (px: number, py: number) => toUser({ x: px, y: py });
      words.push({
        text,
        page,
        box: b,
        corners: { topLeft: corner(b.x0, b.y0), topRight: corner(b.x1, b.y0), bottomLeft: corner(b.x0, b.y1), bottomRight: corner(b.x1, b.y1) },
        font: { name, size },
        bold: /bold/i.test(name),
        italic: false,
        color: { space: values.length === 3 ? 'DeviceRGB' : 'DeviceGray', values },
      });
      x += w + width(' ');
    }
    const lineBox = { x0: words[0].box.x0, y0: top, x1: words[words.length - 1].box.x1, y1: top + 1.1 * size };
    return {
      page,
      words,
      box: lineBox,
      size,
      bold: words.every((w) => w.bold),
      vertical: false,
      dir: [1, 0] as [number, number],
      text: words.map((w) => w.text).join(' '),
    };
  });
}
