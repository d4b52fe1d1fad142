import { join } from 'node:path';
import {
  EMAIL,
  fileToPdf,
  HTML,
  injectPageCss,
  isStructured,
  OFFICE,
  type PdfOptions,
  pageCss,
  parseMargin,
  printPage,
  readPage,
  type StructuredOptions,
  TO_PDF_FORMATS as SUPPORTED,
  setupOf,
} from '../convert/index.js';
import { PAGE_SIZE_NAMES, pageSize } from '../document/index.js';
import { AppError, outOfRange } from '../errors.js';
import { fetchUrl, resolveAllowedHost } from '../requests/fetch-url.js';
import { oneOf, onOff, output, text } from '../requests/fields.js';
import { operation, type RunContext } from '../requests/operation.js';
import { extensionOf } from '../store/names.js';
import { type StructuredFields, structuredFields, structuredInputs, typesetInput } from './pdf-structured.js';

const fields = {
  url: text({ max: 4096 }).optional().meta({ type: 'string', description: 'URL of a web page to convert (instead of file or id).' }),
  output: output(),
  compression: oneOf(['lossy', 'lossless'], 'lossy'),
  downsample: oneOf(['off', '75', '150', '300', '600', '1200'], '300'),
  tagged_pdf: onOff(false),
  locale: oneOf(['US', 'Germany'], 'US'),
  page_size: oneOf(PAGE_SIZE_NAMES, 'letter', { Letter: 'letter', Legal: 'legal', Ledger: 'ledger', a3: 'A3', a4: 'A4', a5: 'A5' }),
  page_margin: text({ max: 32 }).optional().default('1in'),
  page_orientation: oneOf(['portrait', 'landscape'], 'portrait'),
  web_layout: oneOf(['desktop', 'tablet', 'mobile'], 'desktop'),
  ...structuredFields,
};

type Fields = PdfOptions & { url?: string; structured_text_options?: StructuredOptions; image_ids?: string[] };

export default operation({
  path: '/pdf',
  tag: 'Conversion',
  summary: 'Convert office documents, PostScript, images, HTML or a web page to PDF',
  description:
    `Exactly one of file, id or url. Supported uploads: ${SUPPORTED.map((e) => `.${e}`).join(', ')}. ` +
    'Office documents go through LibreOffice, PostScript/EPS through Ghostscript (EPS cropped to its bounding box), ' +
    'images become one page per image or frame (page size from the image DPI, 72 when it has none; JPEGs embedded as they are ' +
    'unless they must be downsampled), HTML and web pages through Chromium (laid out at the web_layout viewport width), ' +
    'e-mail (.eml, Outlook .msg) as a header block, the body and a list of attachments, with image and PDF attachments ' +
    'appended as pages; e-mail never loads remote content. Structured text (Markdown, plain text, CSV with structured_text_options, ' +
    'JSON, XML) is typeset by Chromium with structured_text_options; a Markdown document shows images only from image_ids / image_files.',
  inputs: { file: { idField: 'id', kind: 'any', required: false, description: 'The document to convert' }, ...structuredInputs },
  fields,
  output: 'file',
  engines: [],
  cost: ({ inputs, fields }) => {
    const ext = inputs.file?.[0] ? extensionOf(inputs.file[0].name) : 'html';
    if (isStructured(ext, fields)) return { lane: 'browser' };
    if (OFFICE.includes(ext)) return { lane: 'office' };
    if (HTML.includes(ext) || EMAIL.includes(ext)) return { lane: 'browser' };
    return { lane: 'cpu', processes: 1 };
  },
  defaultName: (name) => `${name ?? 'webpage'}_service_pdf`,
  check: (f) => {
    const margin = parseMargin(f.page_margin);
    if (margin === null) throw outOfRange(f.page_margin, 'page_margin');
    const [w, h] = pageSize(f.page_size, f.page_orientation);
    if (2 * margin >= Math.min(w, h) - 72) throw outOfRange(f.page_margin, 'page_margin');
  },
  run: async (ctx) => convert(ctx as unknown as RunContext<Fields>),
});

async function convert(ctx: RunContext<Fields>) {
  const { fields: f, dir } = ctx;
  const files = ctx.inputs.file ?? [];
  if (files.length && f.url) throw new AppError('both_inputs', 'This route will only accept one of file, id or url, not more than one.');
  if (!files.length && !f.url) throw new AppError('missing_input', 'One of file (an upload), id (the id of a stored file) or url (a web page) is required');
  const job = { dir, signal: ctx.signal, timeoutMs: ctx.timeoutMs, limits: ctx.limits, resolveHost: (h: string) => resolveAllowedHost(h, ctx.urlPolicy) };
  if (f.url) {
    const out = join(dir, 'output.pdf');
    const html = await readPage(f.url, await fetchUrl(f.url, ctx.urlPolicy, ctx.signal), ctx.limits);
    await printPage(injectPageCss(html.text, pageCss(setupOf(f)), html.url), out, f, job);
    return { files: [{ path: out, ext: 'pdf' }] };
  }
  const input = files[0];
  const { path, warning } = await fileToPdf(input, f, job, (local, format, marginPt) =>
    typesetInput(ctx as unknown as RunContext<StructuredFields>, local, input.name, format, marginPt),
  );
  return { files: [{ path, ext: 'pdf' }], warning };
}
