import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { markdownPages, markdownParts, noTextWarning, selectPages, textlessPages, toMarkdown } from '../document/index.js';
import { oneOf, onOff, output, pages } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';

export default operation({
  path: '/markdown',
  tag: 'Information and extraction',
  summary: 'Convert a PDF to Markdown',
  description:
    'GitHub-flavoured Markdown in reading order: columns read one after the other (the right one first on right-to-left pages), right-to-left text (Arabic, Hebrew...) in logical order. Headings (# to ######) take their levels from the PDF\'s outline (bookmarks) where it names them, else from section numbering ("5.1 Title" one level below "5 Title") and font size and weight ranked across the whole document. Paragraphs are joined across line breaks (hyphenation undone); bulleted and numbered lists keep their nesting (by indent); rows in a monospaced font become fenced code blocks; formulas stay as their text. Tables are pipe tables whose first row is the header row; a cell spanning several columns stands in the first of them, the others left empty; a caption and the paragraph after a table stay out of it, and so does a numbered section head set right below it. Page furniture is left out: running heads and feet and page numbers repeated on half the pages or more (3 pages at least), and on any page its first or last row when that is only a page number ("9", "Page 9 of 20"), and a browser\'s print stamp (address, date) with what stands beside it. page_break_comments=on puts <!--Page N--> before the content of each page, followed by that page\'s furniture as <!--Furniture: ...-->. A page without any text (a scan) gives a warning: run /pdf-with-ocr-text first.',
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
    const { pages, outline } = await markdownPages(input.path, selected, ectx);
    const opts = { pageBreakComments: fields.page_break_comments, outline };
    const warning = noTextWarning(textlessPages(pages), pages.length);
    if (fields.output_type === 'json') return { json: { markdown: toMarkdown(pages, opts) }, warning };
    const path = join(dir, 'document.md');
    await pipeline(Readable.from(markdownParts(pages, opts)), createWriteStream(path));
    return { files: [{ path, ext: 'md' }], warning };
  },
});
