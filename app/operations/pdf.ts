import { lookup } from 'node:dns/promises';
import { copyFile, readFile, stat, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { AppError, invalidInput, outOfRange, passwordProtected } from '../errors.js';
import { fetchUrl, isAllowedAddress, type FetchPolicy } from '../http/fetch-url.js';
import { oneOf, onOff, output, text } from '../http/fields.js';
import { operation, type RunContext } from '../http/operation.js';
import { extensionOf } from '../store/names.js';
import { printHtml } from '../../engines/chromium/print.js';
import { EngineError } from '../../engines/errors.js';
import { imagesToPdf } from '../../engines/image-pdf.js';
import { OfficePasswordError, officeToPdf } from '../../engines/libreoffice/pool.js';
import { psToPdf } from '../../engines/postscript.js';
import { injectPageCss, pageCss, parseMargin, VIEWPORTS, type WebLayout } from './lib/html-page.js';
import { inspectZip, isEncryptedOoxml } from './lib/office-input.js';
import { PAGE_SIZE_NAMES, pageSize, type PageSizeName } from './lib/page-sizes.js';

const OFFICE = ['doc', 'docx', 'xls', 'xlsx', 'ppt', 'pptx', 'odt', 'ods', 'odp', 'rtf', 'csv'];
const SPREADSHEETS = new Set(['xls', 'xlsx', 'ods', 'csv']);
const POSTSCRIPT = ['ps', 'eps'];
const IMAGES = ['jpg', 'jpeg', 'png', 'tif', 'tiff', 'bmp', 'gif', 'webp'];
const HTML = ['html', 'htm'];
const SUPPORTED = [...OFFICE, ...POSTSCRIPT, ...IMAGES, ...HTML];

/** The address to connect to for a host, if every address it resolves to is allowed; else null. */
export async function resolveAllowedHost(host: string, policy: FetchPolicy): Promise<string | null> {
  const name = host.replace(/^\[|\]$/g, '');
  if (!policy.enabled) return null;
  if (isIP(name)) return isAllowedAddress(name, name, policy.allow) ? name : null;
  const found = await lookup(name, { all: true }).catch(() => []);
  if (!found.length || found.some((a) => !isAllowedAddress(a.address, name, policy.allow))) return null;
  return found[0].address;
}

const MAX_FETCHED_HTML = 20 * 1024 * 1024;

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
};

type Fields = {
  url?: string;
  compression: 'lossy' | 'lossless';
  downsample: string;
  tagged_pdf: boolean;
  locale: 'US' | 'Germany';
  page_size: PageSizeName;
  page_margin: string;
  page_orientation: 'portrait' | 'landscape';
  web_layout: WebLayout;
};

export default operation({
  path: '/pdf',
  tag: 'Conversion',
  summary: 'Convert office documents, PostScript, images, HTML or a web page to PDF',
  description:
    `Exactly one of file, id or url. Supported uploads: ${SUPPORTED.map((e) => `.${e}`).join(', ')}. ` +
    'Office documents go through LibreOffice, PostScript/EPS through Ghostscript (EPS cropped to its bounding box), ' +
    'images become one page per image or frame (page size from the image DPI, 72 when it has none; JPEGs embedded as they are ' +
    'unless they must be downsampled), HTML and web pages through Chromium. E-mail (.eml, .msg) is not supported yet.',
  inputs: { file: { idField: 'id', kind: 'any', required: false, description: 'The document to convert' } },
  fields,
  output: 'file',
  engines: [],
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
  const out = join(dir, 'output.pdf');
  const ectx = { cwd: dir, signal: ctx.signal, timeoutMs: ctx.timeoutMs };
  const maxDpi = f.downsample === 'off' ? null : Number(f.downsample);
  const lossless = f.compression === 'lossless';

  if (f.url) {
    const html = await fetchPage(f.url, ctx.urlPolicy, ctx.signal);
    const page = join(dir, 'page.html');
    await writeFile(page, injectPageCss(html.text, htmlCss(f), html.url));
    await printHtml(page, out, { viewportWidth: VIEWPORTS[f.web_layout], settleMs: 5000, resolveHost: (h) => resolveAllowedHost(h, ctx.urlPolicy) }, ectx);
    return { files: [{ path: out }] };
  }

  const input = files[0];
  const ext = extensionOf(input.name);
  // A private copy with a plain name: tools never see the client's file name, and LibreOffice's lock file lands in the job dir.
  const local = join(dir, `input.${ext || 'bin'}`);
  await copyFile(input.path, local);

  if (OFFICE.includes(ext)) {
    const head = await readFile(local);
    if (isEncryptedOoxml(head)) throw passwordProtected();
    const zip = inspectZip(head);
    if (!zip.ok) throw invalidInput(`${input.name} is not a usable office document (${zip.reason})`);
    try {
      await officeToPdf(local, out, { lossless, maxImageDpi: maxDpi, tagged: f.tagged_pdf, locale: SPREADSHEETS.has(ext) && f.locale === 'Germany' ? 'de-DE' : 'en-US', ext }, ectx);
    } catch (err) {
      if (err instanceof OfficePasswordError) throw passwordProtected();
      if (err instanceof EngineError && !err.details.timedOut && !err.details.aborted && !err.details.missing) throw invalidInput(`${input.name} could not be opened as an office document`);
      throw err;
    }
  } else if (POSTSCRIPT.includes(ext)) {
    const head = (await readFile(local)).subarray(0, 64).toString('latin1');
    const eps = ext === 'eps' || /^%!PS-Adobe-\d\.\d EPSF/.test(head) || head.startsWith('\xc5\xd0\xd3\xc6');
    await psToPdf(local, out, { eps, lossless, maxDpi }, ectx).catch((err) => {
      if (err instanceof EngineError && err.details.exitCode !== undefined) throw invalidInput(`${input.name} is not a PostScript program Ghostscript can run safely`);
      throw err;
    });
  } else if (IMAGES.includes(ext)) {
    await imagesToPdf([local], out, { lossless, maxDpi }, ectx).catch((err) => {
      if (err instanceof EngineError) throw invalidInput(`${input.name} is not a readable image`);
      throw err;
    });
  } else if (HTML.includes(ext)) {
    const page = join(dir, 'page.html');
    await writeFile(page, injectPageCss(await readFile(local, 'utf8'), htmlCss(f)));
    await printHtml(page, out, { viewportWidth: VIEWPORTS[f.web_layout], settleMs: 5000, resolveHost: (h) => resolveAllowedHost(h, ctx.urlPolicy) }, ectx);
  } else if (ext === 'eml' || ext === 'msg') {
    throw new AppError('invalid_input', `Conversion of e-mail (.${ext}) to PDF is not supported yet`);
  } else {
    throw invalidInput(`${input.name}: .${ext || '(no extension)'} cannot be converted; supported: ${SUPPORTED.map((e) => `.${e}`).join(', ')}`);
  }
  if (!(await stat(out).catch(() => null))?.size) throw invalidInput(`${input.name} produced no pages`);
  return { files: [{ path: out }] };
}

function htmlCss(f: Fields): string {
  return pageCss({ size: f.page_size, orientation: f.page_orientation, marginPt: parseMargin(f.page_margin)!, layout: f.web_layout });
}

async function fetchPage(url: string, policy: FetchPolicy, signal: AbortSignal): Promise<{ text: string; url: string }> {
  const fetched = await fetchUrl(url, policy, signal);
  if (fetched.type && !/html|xml|text\/plain/i.test(fetched.type)) {
    fetched.stream.destroy();
    throw new AppError('invalid_request', `The URL ${url} is not a web page (${fetched.type})`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of fetched.stream) {
    size += (chunk as Buffer).length;
    if (size > MAX_FETCHED_HTML) {
      fetched.stream.destroy();
      throw new AppError('invalid_request', `The page at ${url} is larger than ${MAX_FETCHED_HTML} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  return { text: Buffer.concat(chunks).toString('utf8'), url: fetched.url };
}
