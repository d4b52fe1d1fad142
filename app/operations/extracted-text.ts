import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { noTextWarning, type PageModel, pageText, readKeptPages, selectPages } from '../document/index.js';
import { readableXfa } from '../forms/index.js';
import { oneOf, onOff, output, pages } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';

export default operation({
  path: '/extracted-text',
  tag: 'Information and extraction',
  summary: "Extract the text of a PDF, optionally with each word's position and style",
  description:
    "Text in reading order (columns read one after the other). full_text: document (one string), by_page ({pages: [{page, text}]}) or off. word_coordinates adds each word's page and four corners in PDF units (origin bottom-left of the unrotated page, like every coordinate of the API; corners named as the word appears on the displayed page); word_style adds its font name and size and its colour space and values (components 0-1). output_type=file stores a .json file when word data is asked for, else a .txt file. A dynamic XFA form is read as pdf.js lays it out from its template and data (said in `warning`), not as its placeholder page.",
  inputs: pdfInput(),
  fields: {
    full_text: oneOf(['off', 'by_page', 'document'], 'document'),
    preserve_line_breaks: onOff(false),
    word_style: onOff(false),
    word_coordinates: onOff(false),
    pages: pages(),
    output_type: oneOf(['json', 'file'], 'json'),
    output: output(),
  },
  output: 'json-or-file',
  produces: ['txt', 'json'],
  engines: ['qpdf', 'mupdf'],
  thread: import.meta.url,
  run: async ({ fields, input, dir, signal, timeoutMs, limits }) => {
    const ectx = { cwd: dir, signal, timeoutMs };
    // A dynamic XFA form is read as laid out, not as its placeholder page.
    const xfa = await readableXfa(input.path, { dir, signal, timeoutMs, limits });
    const selected = await selectPages(xfa.path, fields.pages, ectx);
    const wantWords = fields.word_style || fields.word_coordinates;
    // Page by page: only each page's text (and words when asked) is kept, not its page model.
    const texts: { page: number; text: string }[] = [];
    const empty: number[] = [];
    const found: ReturnType<typeof words> = [];
    const keep = (p: PageModel) => ({
      page: p.page,
      text: fields.full_text === 'off' ? '' : pageText(p, fields.preserve_line_breaks),
      empty: !p.lines.length,
      words: wantWords ? words(p, fields.word_coordinates, fields.word_style) : [],
    });
    await readKeptPages(xfa.path, selected, ectx, { colours: fields.word_style }, keep, (batch) => {
      for (const p of batch) {
        texts.push({ page: p.page, text: p.text });
        if (p.empty) empty.push(p.page);
        for (const w of p.words) found.push(w);
      }
    });
    const warning = [xfa.warning, noTextWarning(empty, texts.length)].filter(Boolean).join(' ') || undefined;
    const result: Record<string, unknown> = {};
    if (wantWords) result.words = found;
    if (fields.full_text === 'document')
      result.fullText = texts
        .map((p) => p.text)
        .join(fields.preserve_line_breaks ? '\n' : ' ')
        .trim();
    else if (fields.full_text === 'by_page') result.fullText = { pages: texts };

    if (fields.output_type === 'json') return { json: result, warning };
    if (wantWords) {
      const path = join(dir, 'text.json');
      await writeFile(path, JSON.stringify(result));
      return { files: [{ path, ext: 'json' }], warning };
    }
    // Plain text: by_page separates pages with a form feed, as pdftotext does.
    const text = fields.full_text === 'off' ? '' : fields.full_text === 'document' ? String(result.fullText) : texts.map((p) => p.text).join('\n\f');
    const path = join(dir, 'text.txt');
    await writeFile(path, text);
    return { files: [{ path, ext: 'txt' }], warning };
  },
});

function words(p: PageModel, coordinates: boolean, style: boolean) {
  return p.lines.flatMap((l) =>
    l.words.map((w) => ({
      text: w.text,
      page: w.page,
      ...(coordinates ? { coordinates: w.corners } : {}),
      ...(style ? { style: { color: w.color, font: w.font } } : {}),
    })),
  );
}
