import { lookup } from 'node:dns/promises';
import { copyFile, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { printHtml } from '../../engines/chromium/print.js';
import { EngineError } from '../../engines/errors.js';
import { ImageTooLargeError, imagesToPdf } from '../../engines/image-pdf.js';
import { OfficePasswordError, officeToPdf } from '../../engines/libreoffice/pool.js';
import { enforceImagePolicy, psToPdf } from '../../engines/postscript.js';
import { encryptionOf, pageCount } from '../../engines/qpdf.js';
import { assemblePages } from '../../engines/qpdf-edit.js';
import {
  injectPageCss,
  inspectZip,
  isEncryptedOoxml,
  type Mail,
  mailHtml,
  type PageSetup,
  pageCss,
  paperOf,
  parseMargin,
  printableWidthPx,
  printScale,
  readEml,
  readMsg,
  STRUCTURED_FORMATS,
  type StructuredOptions,
  type TypesetPrint,
  VIEWPORTS,
  type WebLayout,
} from '../convert/index.js';
import { PAGE_SIZE_NAMES, type PageSizeName, pageSize } from '../document/index.js';
import { AppError, invalidInput, limitExceeded, outOfRange, passwordProtected } from '../errors.js';
import { type FetchPolicy, fetchUrl, isAllowedAddress } from '../requests/fetch-url.js';
import { oneOf, onOff, output, text } from '../requests/fields.js';
import { operation, type RunContext } from '../requests/operation.js';
import { readHead } from '../store/index.js';
import { extensionOf } from '../store/names.js';
import { type StructuredFields, structuredFields, structuredInputs, typesetInput } from './pdf-structured.js';

const OFFICE = ['doc', 'docx', 'xls', 'xlsx', 'ppt', 'pptx', 'odt', 'ods', 'odp', 'rtf', 'csv'];
const SPREADSHEETS = new Set(['xls', 'xlsx', 'ods', 'csv']);
const POSTSCRIPT = ['ps', 'eps'];
const IMAGES = ['jpg', 'jpeg', 'png', 'tif', 'tiff', 'bmp', 'gif', 'webp'];
const HTML = ['html', 'htm'];
const EMAIL = ['eml', 'msg'];
const SUPPORTED = [...new Set([...OFFICE, ...POSTSCRIPT, ...IMAGES, ...HTML, ...EMAIL, ...Object.keys(STRUCTURED_FORMATS)])];
/** Typeset from structured text: .csv only when structured_text_options is sent (else it is a spreadsheet). */
const isStructured = (ext: string, f: { structured_text_options?: unknown }) =>
  ext in STRUCTURED_FORMATS && (ext !== 'csv' || f.structured_text_options !== undefined);
/** mailparser and msgreader hold a whole message (and its decoded attachments) in memory. */
const MAX_MAIL_BYTES = 100 * 1024 * 1024;
/** Longest wait for a page's network to go idle before it is printed anyway. */
const SETTLE_MS = 5000;

/** The address to connect to for a host, if every address it resolves to is allowed; else null. */
export async function resolveAllowedHost(host: string, policy: FetchPolicy): Promise<string | null> {
  const name = host.replace(/^\[|\]$/g, '');
  if (!policy.enabled) return null;
  if (isIP(name)) return isAllowedAddress(name, name, policy.allow) ? name : null;
  const found = await lookup(name, { all: true }).catch(() => []);
  if (!found.length || found.some((a) => !isAllowedAddress(a.address, name, policy.allow))) return null;
  return found[0].address;
}

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
  structured_text_options?: StructuredOptions;
  image_ids?: string[];
};

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
  const out = join(dir, 'output.pdf');
  const ectx = { cwd: dir, signal: ctx.signal, timeoutMs: ctx.timeoutMs };
  const maxDpi = f.downsample === 'off' ? null : Number(f.downsample);
  const lossless = f.compression === 'lossless';

  if (f.url) {
    const html = await fetchPage(f.url, ctx.urlPolicy, ctx.signal, ctx.limits);
    await printPage(injectPageCss(html.text, pageCss(setupOf(f)), html.url), out, f, ctx);
    return { files: [{ path: out, ext: 'pdf' }] };
  }

  const input = files[0];
  const ext = extensionOf(input.name);
  // A private copy with a plain name: tools never see the client's file name, and LibreOffice's lock file lands in the job dir.
  const local = join(dir, `input.${ext || 'bin'}`);
  const structured = isStructured(ext, f);
  if ((HTML.includes(ext) || structured) && (await stat(input.path)).size > ctx.limits.htmlMaxBytes) throw htmlLimitExceeded('bytes', ctx.limits);
  await copyFile(input.path, local);
  let warning: string | undefined;

  if (structured) {
    const typeset = await typesetInput(ctx as unknown as RunContext<StructuredFields>, local, input.name, STRUCTURED_FORMATS[ext], setupOf(f).marginPt);
    await printPage({ file: typeset.file }, out, f, ctx, { typeset });
    warning = typeset.warnings.join(' ') || undefined;
  } else if (OFFICE.includes(ext)) {
    const head = await readFile(local);
    if (isEncryptedOoxml(head)) throw passwordProtected();
    const zip = inspectZip(head);
    if (!zip.ok) throw invalidInput(`${input.name} is not a usable office document (${zip.reason})`);
    try {
      const limits = { timeoutMs: ctx.limits.officeTimeoutMs, maxPages: ctx.limits.officeMaxPages };
      await officeToPdf(
        local,
        out,
        { lossless, maxImageDpi: maxDpi, tagged: f.tagged_pdf, locale: SPREADSHEETS.has(ext) && f.locale === 'Germany' ? 'de-DE' : 'en-US', ext, limits },
        ectx,
      );
    } catch (err) {
      if (err instanceof OfficePasswordError) throw passwordProtected();
      if (err instanceof EngineError && err.details.limit === 'time')
        throw limitExceeded('The office conversion time', 'OFFICE_TIMEOUT_SECONDS', ctx.limits.officeTimeoutMs / 1000);
      if (err instanceof EngineError && err.details.limit === 'pages')
        throw limitExceeded('The number of pages of the office document', 'OFFICE_MAX_PAGES', ctx.limits.officeMaxPages);
      if (err instanceof EngineError && !err.details.timedOut && !err.details.aborted && !err.details.missing && !err.details.unavailable)
        throw invalidInput(`${input.name} could not be opened as an office document`);
      throw err;
    }
  } else if (POSTSCRIPT.includes(ext)) {
    const head = (await readHead(local, 64)).toString('latin1');
    const eps = ext === 'eps' || /^%!PS-Adobe-\d\.\d EPSF/.test(head) || head.startsWith('\xc5\xd0\xd3\xc6');
    await psToPdf(local, out, { eps, lossless, maxDpi, limits: { timeoutMs: ctx.limits.psTimeoutMs, maxPages: ctx.limits.psMaxPages } }, ectx).catch((err) => {
      if (err instanceof EngineError && err.details.limit === 'time')
        throw limitExceeded("The PostScript program's run time", 'PS_TIMEOUT_SECONDS', ctx.limits.psTimeoutMs / 1000);
      if (err instanceof EngineError && err.details.limit === 'pages')
        throw limitExceeded('The number of pages the PostScript program emits', 'PS_MAX_PAGES', ctx.limits.psMaxPages);
      // 'bytes': the program printed more than Ghostscript's output is allowed to hold.
      if (err instanceof EngineError && (err.details.exitCode !== undefined || err.details.limit === 'bytes'))
        throw invalidInput(`${input.name} is not a PostScript program Ghostscript can run safely`);
      throw err;
    });
  } else if (IMAGES.includes(ext)) {
    await imagesToPdf([local], out, { lossless, maxDpi, maxPixels: ctx.limits.maxImagePixels }, ectx).catch((err) => {
      if (err instanceof ImageTooLargeError) throw limitExceeded(`The image ${input.name} (${err.width}x${err.height} pixels)`, 'MAX_IMAGE_PIXELS', err.limit);
      if (err instanceof EngineError) throw invalidInput(`${input.name} is not a readable image`);
      throw err;
    });
  } else if (HTML.includes(ext)) {
    await printPage(injectPageCss(await readFile(local, 'utf8'), pageCss(setupOf(f))), out, f, ctx);
  } else if (EMAIL.includes(ext)) {
    await convertMail(local, ext, input.name, out, f, ctx);
  } else {
    throw invalidInput(`${input.name}: .${ext || '(no extension)'} cannot be converted; supported: ${SUPPORTED.map((e) => `.${e}`).join(', ')}`);
  }
  if (!(await stat(out).catch(() => null))?.size) throw invalidInput(`${input.name} produced no pages`);
  return { files: [{ path: out, ext: 'pdf' }], warning };
}

const setupOf = (f: Fields): PageSetup => ({ size: f.page_size, orientation: f.page_orientation, marginPt: parseMargin(f.page_margin)!, layout: f.web_layout });

/**
 * Prints prepared HTML with Chromium, then applies compression and downsample (Chromium keeps images as the
 * page had them). Sub-resources follow the URL policy. E-mail (`mail`) refuses every host, runs no script and
 * ignores web_layout (HTML only in the spec): it is laid out at the printable width, at 100 %, as mail clients print.
 * Typeset structured text is printed the same way, on its own paper, tagged as asked.
 */
async function printPage(
  html: string | { file: string },
  out: string,
  f: Fields,
  ctx: RunContext<Fields>,
  o: { mail?: boolean; typeset?: TypesetPrint } = {},
): Promise<void> {
  const page = typeof html === 'string' ? join(ctx.dir, 'page.html') : html.file;
  const printed = join(ctx.dir, 'printed.pdf');
  if (typeof html === 'string') await writeFile(page, html);
  const setup = setupOf(f);
  const closed = o.mail || o.typeset;
  await printHtml(
    page,
    printed,
    {
      viewportWidth: o.typeset?.viewportWidth ?? (o.mail ? printableWidthPx(setup) : VIEWPORTS[f.web_layout]),
      paper: o.typeset?.paper ?? paperOf(setup),
      scale: closed ? 1 : printScale(setup),
      settleMs: SETTLE_MS,
      javascript: !closed,
      resolveHost: closed ? async () => null : (h) => resolveAllowedHost(h, ctx.urlPolicy),
      tagged: o.typeset?.tagged,
      outline: o.typeset?.tagged,
      limits: {
        timeoutMs: ctx.limits.htmlTimeoutMs,
        maxPages: ctx.limits.htmlMaxPages,
        maxBytes: ctx.limits.htmlMaxBytes,
        maxMemoryBytes: ctx.limits.htmlMaxMemoryBytes,
      },
    },
    { cwd: ctx.dir, signal: ctx.signal, timeoutMs: ctx.timeoutMs },
  ).catch((err) => {
    throw htmlLimit(err, ctx.limits);
  });
  const rewritten = await enforceImagePolicy(
    printed,
    out,
    { lossless: f.compression === 'lossless', maxDpi: f.downsample === 'off' ? null : Number(f.downsample) },
    { cwd: ctx.dir, signal: ctx.signal, timeoutMs: ctx.timeoutMs },
  );
  if (!rewritten) await rename(printed, out);
}

/** One of the HTML limits (HTML, web pages, e-mail) as the 422 naming its setting. */
function htmlLimitExceeded(limit: 'time' | 'pages' | 'bytes' | 'memory', limits: RunContext<Fields>['limits']) {
  if (limit === 'time') return limitExceeded("The page's load, scripts and printing", 'HTML_TIMEOUT_SECONDS', limits.htmlTimeoutMs / 1000);
  if (limit === 'pages') return limitExceeded('The number of pages the page prints', 'HTML_MAX_PAGES', limits.htmlMaxPages);
  if (limit === 'memory') return limitExceeded("The memory of the page's renderer", 'HTML_MAX_MEMORY_MB', limits.htmlMaxMemoryBytes / 1024 / 1024);
  return limitExceeded('The bytes the page loads (the document and its sub-resources)', 'HTML_MAX_MB', limits.htmlMaxBytes / 1024 / 1024);
}

/** A page the engine cut (engines/chromium/print.ts) becomes that 422; other errors pass. */
const htmlLimit = (err: unknown, limits: RunContext<Fields>['limits']) =>
  err instanceof EngineError && err.details.limit ? htmlLimitExceeded(err.details.limit, limits) : err;

/**
 * The message is printed like an HTML upload (page options apply); image and PDF attachments that are not
 * already shown in the body follow it as pages, in their order. An attachment that cannot be appended (an
 * unreadable image, an encrypted PDF) is only listed, with the reason.
 */
async function convertMail(local: string, ext: string, name: string, out: string, f: Fields, ctx: RunContext<Fields>): Promise<void> {
  const ectx = { cwd: ctx.dir, signal: ctx.signal, timeoutMs: ctx.timeoutMs };
  const buf = await readFile(local);
  if (buf.length > MAX_MAIL_BYTES) throw invalidInput(`${name} is larger than ${MAX_MAIL_BYTES / 1024 / 1024} MB, the limit for e-mail`);
  let mail: Mail;
  try {
    mail = ext === 'msg' ? readMsg(buf) : await readEml(buf);
  } catch {
    throw invalidInput(`${name} is not a readable ${ext === 'msg' ? 'Outlook message' : 'e-mail message'}`);
  }
  const notes = new Map<number, string>();
  const appended: string[] = [];
  for (const [i, a] of mail.attachments.entries()) {
    if (a.inline) continue;
    const aext = extensionOf(a.name);
    const isPdf = a.type === 'application/pdf' || aext === 'pdf' || a.content.subarray(0, 5).toString('latin1') === '%PDF-';
    // The sender names the file and its type: only an extension from our own list reaches the path.
    const imageExt = IMAGES.includes(aext) ? aext : /^image\/(jpeg|png|tiff|bmp|gif|webp)\b/.exec(a.type)?.[1];
    if (!isPdf && !imageExt) continue;
    const file = join(ctx.dir, `attachment-${i}.${isPdf ? 'pdf' : imageExt}`);
    await writeFile(file, a.content);
    try {
      if (isPdf) {
        if ((await encryptionOf(file, ectx)) === 'needs-password') {
          notes.set(i, 'not appended: password protected');
          continue;
        }
        await pageCount(file, ectx);
        appended.push(file);
      } else {
        const pdf = `${file}.pdf`;
        const maxPixels = ctx.limits.maxImagePixels;
        await imagesToPdf(
          [file],
          pdf,
          { lossless: f.compression === 'lossless', maxDpi: f.downsample === 'off' ? null : Number(f.downsample), maxPixels },
          ectx,
        );
        appended.push(pdf);
      }
      notes.set(i, 'appended after the message');
    } catch (err) {
      if (!(err instanceof EngineError) || err.details.timedOut || err.details.aborted) throw err;
      notes.set(i, err instanceof ImageTooLargeError ? `not appended: more pixels than MAX_IMAGE_PIXELS=${err.limit}` : 'not appended: unreadable');
    }
  }
  const message = appended.length ? join(ctx.dir, 'message.pdf') : out;
  await printPage(mailHtml(mail, notes), message, f, ctx, { mail: true });
  if (appended.length) {
    const sources = [message, ...appended];
    const counts = await Promise.all(sources.map((p) => pageCount(p, ectx)));
    await assemblePages(
      sources.map((path, k) => ({ path, pages: Array.from({ length: counts[k] }, (_, n) => n + 1) })),
      out,
      ectx,
    );
  }
}

async function fetchPage(url: string, policy: FetchPolicy, signal: AbortSignal, limits: RunContext<Fields>['limits']): Promise<{ text: string; url: string }> {
  const fetched = await fetchUrl(url, policy, signal);
  if (fetched.type && !/html|xml|text\/plain/i.test(fetched.type)) {
    fetched.stream.destroy();
    throw new AppError('invalid_request', `The URL ${url} is not a web page (${fetched.type})`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of fetched.stream) {
    size += (chunk as Buffer).length;
    if (size > limits.htmlMaxBytes) {
      fetched.stream.destroy();
      throw htmlLimitExceeded('bytes', limits);
    }
    chunks.push(chunk as Buffer);
  }
  return { text: Buffer.concat(chunks).toString('utf8'), url: fetched.url };
}
