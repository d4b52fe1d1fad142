import { readFile, writeFile } from 'node:fs/promises';
import {
  beginMarkedContent,
  endMarkedContent,
  PDFDocument,
  type PDFFont,
  type PDFRef,
  PDFTextField,
  popGraphicsState,
  pushGraphicsState,
} from '@cantoo/pdf-lib';
import { FontSet, type Line, resolveFont, textOperators, wrapText } from '../compose/index.js';

/**
 * qpdf draws text field appearances in the field's own font and encoding, so characters beyond it come out as
 * `?` (the value itself is right). Those fields get appearances drawn here with the shared font model
 * (Helvetica, else embedded subsets with fallbacks), as viewers would draw them: the DA size (0 = fit), the
 * field's quadding, wrapped when the field is multiline. Encrypted files keep qpdf's appearances.
 */

const WIN_ANSI_EXTRA = new Set([...'€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ'].map((c) => c.codePointAt(0)!));
export const beyondWinAnsi = (text: string) =>
  [...text].some((c) => {
    const cp = c.codePointAt(0)!;
    return cp > 0xff && !WIN_ANSI_EXTRA.has(cp);
  });

/** Redraws the text fields whose values qpdf could not draw; returns how many widgets were redrawn. */
export async function redrawUnicodeFields(path: string): Promise<number> {
  let doc: PDFDocument;
  try {
    // preserveXFA: pdf-lib would otherwise drop an XFA form's packets, and the form would stop being XFA.
    doc = await PDFDocument.load(await readFile(path), { updateMetadata: false, preserveXFA: true });
  } catch {
    return 0; // encrypted, or beyond pdf-lib: qpdf's appearances stay
  }
  if (doc.isEncrypted) return 0;
  // pdf-lib refuses to read rich text fields: those keep qpdf's appearance.
  const textOf = (f: PDFTextField) => {
    try {
      return f.getText() ?? '';
    } catch {
      return '';
    }
  };
  let fields: PDFTextField[];
  try {
    fields = doc
      .getForm()
      .getFields()
      .filter((f): f is PDFTextField => f instanceof PDFTextField && beyondWinAnsi(textOf(f)));
  } catch {
    return 0; // a form structure pdf-lib cannot walk: qpdf's appearances stay
  }
  if (!fields.length) return 0;
  const fonts = new FontSet(doc);
  let redrawn = 0;
  for (const field of fields) {
    const text = textOf(field);
    const da = field.acroField.getDefaultAppearance() ?? '';
    const daSize = Number(/([\d.]+)\s+Tf/.exec(da)?.[1] ?? 0);
    const align = field.acroField.getQuadding() ?? 0;
    for (const widget of field.acroField.getWidgets()) {
      const { width, height } = widget.getRectangle();
      if (!(width > 0 && height > 0)) continue;
      const chars = [...text.replace(/\r\n?/g, '\n')];
      const perChar = await fonts.fontsFor(chars, resolveFont('Helvetica'));
      widget.setNormalAppearance(draw(doc, chars, perChar, { width, height, daSize, align, multiline: field.isMultiline() }));
      redrawn++;
    }
  }
  await writeFile(path, await doc.save({ useObjectStreams: true }));
  return redrawn;
}

function draw(
  doc: PDFDocument,
  chars: string[],
  fonts: PDFFont[],
  box: { width: number; height: number; daSize: number; align: number; multiline: boolean },
): PDFRef {
  const pad = 2;
  const inner = box.width - 2 * pad;
  let size = box.daSize || Math.min(12, box.height * 0.7);
  let lines: Line[] = box.multiline
    ? wrapText(chars, fonts, size, inner)
    : wrapText(
        chars.map((c) => (c === '\n' ? ' ' : c)),
        fonts,
        size,
        Number.MAX_SAFE_INTEGER,
      );
  // Auto size (0 in DA) shrinks a single line to fit the width, as viewers do.
  if (!box.daSize && !box.multiline && lines[0] && lines[0].width > inner) {
    size = Math.max(4, (size * inner) / lines[0].width);
    lines = wrapText(chars, fonts, size, Number.MAX_SAFE_INTEGER);
  }
  // Single line: centred vertically; multiline: from the top.
  const top = box.multiline ? box.height - pad - size * 0.9 : (box.height - size * 0.7) / 2;
  const left = (line: Line) => (box.align === 1 ? (box.width - line.width) / 2 : box.align === 2 ? box.width - pad - line.width : pad);
  const text = textOperators(lines, size, top, left);
  const ops = [beginMarkedContent('Tx'), pushGraphicsState(), ...text.ops, popGraphicsState(), endMarkedContent()];
  return doc.context.register(doc.context.formXObject(ops, { BBox: [0, 0, box.width, box.height], Resources: { Font: text.fonts } }));
}
