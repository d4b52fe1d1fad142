import { join } from 'node:path';
import { noTextWarning, selectPages } from '../document/index.js';
import { pdfToXlsx } from '../export/index.js';
import { output } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';

export default operation({
  path: '/excel',
  tag: 'Conversion',
  summary: 'Convert a PDF to an Excel workbook (.xlsx)',
  description:
    'One sheet per page ("Page N"), laid out as the grid of the page\'s rows and columns: a table becomes cells, the text around it keeps its row and column, and a page of prose is its lines in column A. Numbers are stored as numbers with their display kept (1,234 -> 1234 shown as #,##0; (1,234.00) negative; $1,234.56 currency; 12.5% -> 0.125 as percent), read with "." as the decimal point and "," as the thousands separator; dates, codes with leading zeros and anything else stay text. Cells keep their text\'s font (mapped to a standard family), size, bold, italic and colour; the fills and borders the page draws behind and around a table become cell fills and borders; a header spanning several columns is a merged cell; column widths and row heights follow the page, and the sheet prints like the page (orientation, paper, margins). A page without text (a scan) gives an empty sheet and a warning: run /pdf-with-ocr-text first.',
  inputs: pdfInput(),
  fields: { output: output() },
  output: 'file',
  produces: ['xlsx'],
  engines: ['qpdf', 'mupdf'],
  thread: import.meta.url,
  run: async ({ input, dir, signal, timeoutMs }) => {
    const ectx = { cwd: dir, signal, timeoutMs };
    const pages = await selectPages(input.path, '1-last', ectx);
    const path = join(dir, 'workbook.xlsx');
    const textless = await pdfToXlsx(input.path, pages, path, ectx);
    return { files: [{ path, ext: 'xlsx' }], warning: noTextWarning(textless, pages.length) };
  },
});
