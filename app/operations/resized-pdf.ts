import { join } from 'node:path';
import { MAX_PAGE_UNITS, openPdf, PAGE_SIZE_NAMES, PAGE_SIZES, selectedPages } from '../document/index.js';
import { AppError } from '../errors.js';
import { arrangePdf, cropToContent, placePages, type Sheet } from '../impose/index.js';
import { openForRendering } from '../render/index.js';
import { num, oneOf, output, pages, positive } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';

const GRAMMAR = { reverse: true, parity: true };

export default operation({
  path: '/resized-pdf',
  tag: 'Optimisation, colour and page geometry',
  summary: 'Fit pages to a paper size, or crop them to their content',
  description: `mode fit (the default): every selected page becomes a page of page_size (${PAGE_SIZE_NAMES.join(', ')}) or of width x height points (up to ${MAX_PAGE_UNITS}), its content scaled to fit within margin keeping its aspect and centred (vector content kept, as a form XObject; links, annotations and form fields are not carried over). page_orientation auto (the default) turns a named size to the page's own orientation. mode crop: each selected page's media and crop box become the bounding box of what it draws (Ghostscript's bbox device) plus margin points, within what it showed before; only the boxes change, so links and fields stay. A page that draws nothing is left as it is (the warning lists it). Pages not selected are left as they are.`,
  inputs: pdfInput(),
  fields: {
    pages: pages(GRAMMAR),
    mode: oneOf(['fit', 'crop'], 'fit'),
    page_size: oneOf(PAGE_SIZE_NAMES).optional(),
    page_orientation: oneOf(['auto', 'portrait', 'landscape'], 'auto'),
    width: positive(MAX_PAGE_UNITS).optional(),
    height: positive(MAX_PAGE_UNITS).optional(),
    margin: num(0, 1000, 0),
    output: output(),
  },
  output: 'file',
  engines: ['qpdf', 'ghostscript', 'mupdf', 'poppler'],
  check: (f) => {
    if ((f.width === undefined) !== (f.height === undefined)) throw new AppError('out_of_range', 'width and height go together: send both, or neither');
    if (f.width !== undefined && f.page_size) throw new AppError('out_of_range', 'page_size cannot be sent with width and height');
    if (f.mode === 'fit' && f.width === undefined && !f.page_size)
      throw new AppError('out_of_range', 'page_size (or width and height) is required when mode is fit');
    if (f.mode === 'fit') {
      const [w, h] = f.width !== undefined ? [f.width, f.height!] : PAGE_SIZES[f.page_size!];
      if (2 * f.margin >= Math.min(w, h))
        throw new AppError('out_of_range', `${f.margin} is not within the acceptable range for margin: it leaves no room on a ${w} x ${h} page`);
    }
  },
  run: async ({ fields, input, dir, signal, timeoutMs, outputName, limits }) => {
    const ctx = { cwd: dir, signal, timeoutMs };
    const { pageCount } = await openPdf(input.path, ctx);
    const selected = selectedPages(fields.pages, pageCount, GRAMMAR);
    const path = join(dir, 'resized.pdf');
    if (fields.mode === 'crop') {
      const empty = await cropToContent(input.path, path, selected, fields.margin, { maxBytes: limits.maxStreamBytes, maxObjects: limits.maxObjects }, ctx);
      const warning = empty.length ? `Pages that draw nothing were left as they were: ${empty.join(', ')}.` : undefined;
      return { files: [{ path, name: `${outputName}.pdf` }], warning };
    }
    const { boxes } = await openForRendering(input.path, ctx);
    const m = fields.margin;
    const sheets: Sheet[] = selected.map((page) => {
      const shown = [boxes[page - 1].width, boxes[page - 1].height];
      let size: [number, number] = fields.width !== undefined ? [fields.width, fields.height!] : [...PAGE_SIZES[fields.page_size!]];
      const landscape = fields.page_orientation === 'landscape' || (fields.page_orientation === 'auto' && shown[0] > shown[1]);
      if (fields.width === undefined && landscape !== size[0] > size[1]) size = [size[1], size[0]];
      return { size, items: [{ page, cell: { x: m, y: m, width: size[0] - 2 * m, height: size[1] - 2 * m } }] };
    });
    const fitted = join(dir, 'fitted.pdf');
    await placePages(input.path, fitted, sheets, { border: false, maxBytes: limits.maxStreamBytes }, ctx);
    // The fitted pages take their places among the pages left as they were; the input stays the primary file,
    // so its outline, links and fields of the untouched pages are kept (and pointers to replaced pages pruned).
    const at = new Map(selected.map((p, k) => [p, k + 1]));
    const sources = boxes.map((_, i) => (at.has(i + 1) ? { path: fitted, pages: [at.get(i + 1)!] } : { path: input.path, pages: [i + 1] }));
    await arrangePdf(input.path, sources, path, { maxBytes: limits.maxStreamBytes, maxObjects: limits.maxObjects }, ctx);
    return { files: [{ path, name: `${outputName}.pdf` }] };
  },
});
