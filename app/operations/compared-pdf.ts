import { join } from 'node:path';
import { compareDocuments } from '../compare/index.js';
import { output } from '../requests/fields.js';
import { operation } from '../requests/operation.js';

export default operation({
  path: '/compared-pdf',
  tag: 'Information and extraction',
  summary: 'Compare the text of two PDFs word by word',
  description: `The words of both documents in reading order are aligned (a word-level diff over the whole documents, so pages inserted or removed do not throw the pages after them off). differences lists each run of words as {kind: inserted | deleted | changed, page, text, replaced_text (changed), box, other_page}: page and box refer to the second document (compare_file) for inserted and changed words and to the first (file) for deleted ones; other_page is the page at the same place in the other document. box is {x, y, width, height} in PDF units from the lower-left corner of the page as seen (trim box, else crop box, after /Rotate), as /pdf-with-added-shapes takes it. A run across a page break is listed once per page; the words of a change that run on past the page of the words they replace are listed as inserted. The output is the second document with inserted words highlighted green, changed ones yellow and a red bar where words were deleted; identical texts give differences: [] and identical: true, and the output is the second document unchanged. Only text is compared (not images, layout or fonts); scanned pages need /pdf-with-ocr-text first. Documents of thousands of pages are compared (about 24 bytes of memory a word; pages the two share word for word are matched first, then the rest word by word; the job's heap is capped by JOB_MAX_MEMORY_MB, past which it answers 422 naming it); a stretch that differs in over a thousand words and holds no word unique within it is reported as replaced whole. Text that moved is listed as deleted where it was and inserted where it is.`,
  inputs: {
    file: { idField: 'id', kind: 'pdf', description: 'The first (original) PDF' },
    compare_file: { idField: 'compare_id', kind: 'pdf', description: 'The second (revised) PDF, compared against the first' },
  },
  fields: { output: output() },
  output: 'file',
  engines: ['qpdf', 'poppler'],
  thread: import.meta.url,
  // Both documents are read at once (a pdftotext each), then aligned in a worker thread.
  cost: { lane: 'cpu', processes: 2 },
  run: async ({ inputs, dir, signal, timeoutMs, outputName, progress }) => {
    const ctx = { cwd: dir, signal, timeoutMs };
    const path = join(dir, 'compared.pdf');
    const { differences, warning } = await compareDocuments(inputs.file[0].path, inputs.compare_file[0].path, path, ctx, progress);
    return { json: { identical: differences.length === 0, differences }, files: [{ path, name: `${outputName}.pdf` }], warning };
  },
});
