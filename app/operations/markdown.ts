import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { markdownParts, noTextWarning, readPageBatches, selectPages, textlessPages, thinPage, toMarkdown } from '../document/index.js';
import { oneOf, onOff, output, pages } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';

export default operation({
  path: '/markdown',
  tag: 'Information and extraction',
  summary: 'Convert a PDF to Markdown',
  description:
    'Reading order (columns read one after the other), headings from font size and weight, paragraphs joined across line breaks, bulleted and numbered lists, tables as pipe tables. page_break_comments=on puts <!--Page N--> before the content of each page. A page without any text (a scan) gives a warning: run /pdf-with-ocr-text first.',
  inputs: pdfInput(),
  fields: {
    pages: pages(),
    page_break_comments: onOff(false),
    output_type: oneOf(['json', 'file'], 'json'),
    output: output(),
  },
  output: 'json-or-file',
  produces: ['md'],
  engines: ['qpdf', 'mupdf'],
  thread: import.meta.url,
  run: async ({ fields, input, dir, signal, timeoutMs }) => {
    const ectx = { cwd: dir, signal, timeoutMs };
    const selected = await selectPages(input.path, fields.pages, ectx);
    // Heading levels are ranked across the document: each page is kept thin (its rows' text, size and place)
    // until all are read, then written out page by page.
    const pages: ReturnType<typeof thinPage>[] = [];
    await readPageBatches(input.path, selected, ectx, {}, (batch) => {
      for (const p of batch) pages.push(thinPage(p));
    });
    const opts = { pageBreakComments: fields.page_break_comments };
    const warning = noTextWarning(textlessPages(pages), pages.length);
    if (fields.output_type === 'json') return { json: { markdown: toMarkdown(pages, opts) }, warning };
    const path = join(dir, 'document.md');
    await pipeline(Readable.from(markdownParts(pages, opts)), createWriteStream(path));
    return { files: [{ path, ext: 'md' }], warning };
  },
});
