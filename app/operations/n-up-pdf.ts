import { join } from 'node:path';
import { MAX_PAGE_UNITS, PAGE_SIZE_NAMES, PAGE_SIZES, resolvePages } from '../document/index.js';
import { AppError } from '../errors.js';
import { bookletOrder, CELL_ORDERS, gridLayout, placePages, type Sheet } from '../impose/index.js';
import { openForRendering } from '../render/index.js';
import { num, oneOf, onOff, output, pages, positive } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';

const GRAMMAR = { reverse: true, parity: true };

export default operation({
  path: '/n-up-pdf',
  tag: 'Assembly and creation',
  summary: 'Put several pages on each sheet (n-up, booklets)',
  description: `pages_per_sheet 2, 4, 6, 9 or 16 pages on each sheet, in a grid of columns x rows (2: 2x1, 4: 2x2, 6: 3x2, 9: 3x3, 16: 4x4) on the sheet's orientation that prints them largest. page_size: a paper size (${PAGE_SIZE_NAMES.join(', ')}) or page_width and page_height in points (up to ${MAX_PAGE_UNITS}); default: the first page's size. order: across (left to right, then down; the default), down (top to bottom, then across), across_rtl, down_rtl (columns from the right). margin: points around the sheet's edge; spacing: points between cells; border: a thin line around each page. booklet: 2-up saddle-stitch imposition (pages_per_sheet is then 2): pages padded with blank ones to a multiple of 4 and ordered so that the sheets printed on both sides (flip on the short edge) and folded in the middle read in order; an _rtl order mirrors it for right-to-left books. Pages keep their vector content (each one a form XObject), scaled to fit their cell keeping their aspect, centred, as a viewer shows them (crop box, /Rotate). Links, annotations and form fields are not carried over.`,
  inputs: pdfInput(),
  fields: {
    pages: pages(GRAMMAR),
    pages_per_sheet: oneOf(['2', '4', '6', '9', '16'], '2'),
    page_size: oneOf(PAGE_SIZE_NAMES).optional(),
    page_width: positive(MAX_PAGE_UNITS).optional(),
    page_height: positive(MAX_PAGE_UNITS).optional(),
    order: oneOf(CELL_ORDERS, 'across'),
    margin: num(0, 1000, 0),
    spacing: num(0, 1000, 0),
    border: onOff(false),
    booklet: onOff(false),
    output: output(),
  },
  output: 'file',
  engines: ['qpdf', 'mupdf', 'poppler'],
  check: (f) => {
    if ((f.page_width === undefined) !== (f.page_height === undefined))
      throw new AppError('out_of_range', 'page_width and page_height go together: send both, or neither');
    if (f.page_width !== undefined && f.page_size) throw new AppError('out_of_range', 'page_size cannot be sent with page_width and page_height');
    if (f.booklet && f.pages_per_sheet !== '2')
      throw new AppError('out_of_range', `${f.pages_per_sheet} is not within the acceptable range for pages_per_sheet: a booklet is 2-up`);
  },
  run: async ({ fields, input, dir, signal, timeoutMs, outputName, limits }) => {
    const ctx = { cwd: dir, signal, timeoutMs };
    // The pages as shown (crop box, after /Rotate), from MuPDF, else Poppler.
    const { boxes } = await openForRendering(input.path, ctx);
    const selected = resolvePages(fields.pages, boxes.length, GRAMMAR);
    const first: [number, number] = [boxes[selected[0] - 1].width, boxes[selected[0] - 1].height];
    const custom = fields.page_width !== undefined;
    const sheetSize: [number, number] = custom ? [fields.page_width!, fields.page_height!] : fields.page_size ? [...PAGE_SIZES[fields.page_size]] : first;
    const perSheet = Number(fields.pages_per_sheet);
    // A custom size is taken as given; a named or the first page's size may be turned to fit the grid.
    const layout = gridLayout(perSheet, first, sheetSize, !custom, { margin: fields.margin, spacing: fields.spacing, order: fields.order });
    const sequence = fields.booklet ? bookletOrder(selected) : selected;
    const sheets: Sheet[] = [];
    for (let i = 0; i < sequence.length; i += perSheet) {
      sheets.push({ size: layout.size, items: layout.cells.map((cell, k) => ({ page: sequence[i + k] ?? null, cell })) });
    }
    const path = join(dir, 'n-up.pdf');
    await placePages(input.path, path, sheets, { border: fields.border, maxBytes: limits.maxStreamBytes }, ctx);
    return { files: [{ path, name: `${outputName}.pdf` }] };
  },
});
