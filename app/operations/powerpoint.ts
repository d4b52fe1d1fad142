import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { output } from '../http/fields.js';
import { operation, pdfInput } from '../http/operation.js';
import { EngineError } from '../../engines/errors.js';
import { officeConvert } from '../../engines/libreoffice/pool.js';
import { invalidInput, limitExceeded } from '../errors.js';
import { selectPages } from '../document/index.js';

export default operation({
  path: '/powerpoint',
  tag: 'Conversion',
  summary: 'Convert a PDF to a PowerPoint presentation (.pptx)',
  description:
    'One slide per page, through LibreOffice\'s PDF import on a warm instance: text stays editable as text boxes at their places on the page (one per line, with font, size and colour), images and vector drawings are kept as pictures and shapes. The slide size is that of the first page (a presentation has one slide size); a /Rotate page gives a slide as the page is displayed. Text the PDF draws as curves, or a scan, stays a picture: run /pdf-with-ocr-text first.',
  inputs: pdfInput(),
  fields: { output: output() },
  output: 'file',
  engines: ['qpdf', 'libreoffice'],
  cost: { lane: 'office' },
  run: async ({ input, dir, signal, timeoutMs, limits }) => {
    const ectx = { cwd: dir, signal, timeoutMs };
    // qpdf answers for encrypted (401) and broken (400) files before LibreOffice sees them.
    const pages = await selectPages(input.path, '1-last', ectx);
    // One slide per page: refused before LibreOffice imports them all.
    if (pages.length > limits.officeMaxPages) throw limitExceeded('The number of pages to import into LibreOffice', 'OFFICE_MAX_PAGES', limits.officeMaxPages);
    // A private copy with a plain name: LibreOffice never sees the client's file name, its lock file lands in the job dir.
    const local = join(dir, 'input.pdf');
    const out = join(dir, 'presentation.pptx');
    await copyFile(input.path, local);
    await officeConvert(local, out, { importFilter: 'impress_pdf_import', exportFilter: 'Impress MS PowerPoint 2007 XML', limits: { timeoutMs: limits.officeTimeoutMs } }, ectx).catch((err) => {
      if (err instanceof EngineError && err.details.limit === 'time') throw limitExceeded('The office conversion time', 'OFFICE_TIMEOUT_SECONDS', limits.officeTimeoutMs / 1000);
      if (err instanceof EngineError && !err.details.timedOut && !err.details.aborted && !err.details.missing) throw invalidInput('LibreOffice could not import this PDF');
      throw err;
    });
    return { files: [{ path: out, ext: 'pptx' }] };
  },
});
