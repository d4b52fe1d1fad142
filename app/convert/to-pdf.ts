/**
 * Any supported upload to PDF: office documents through LibreOffice, PostScript/EPS through Ghostscript, images,
 * HTML and e-mail through Chromium (with image and PDF attachments appended), structured text typeset by the caller
 * and printed here. Engine failures become the 4xx/422 that name the input or the setting.
 */
import { copyFile, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { printHtml } from '../../engines/chromium/print.js';
import { EngineError } from '../../engines/errors.js';
import { ImageTooLargeError, imagesToPdf } from '../../engines/image-pdf.js';
import { OfficePasswordError, officeToPdf } from '../../engines/libreoffice/pool.js';
import { enforceImagePolicy, psToPdf } from '../../engines/postscript.js';
import { encryptionOf, pageCount } from '../../engines/qpdf.js';
import { assemblePages } from '../../engines/qpdf-edit.js';
import type { Limits } from '../config.js';
import { type PageSizeName, readPdfHead } from '../document/index.js';
import { AppError, invalidInput, limitExceeded, passwordProtected } from '../errors.js';
import { type Mail, mailHtml, readEml, readMsg } from './email.js';
import { injectPageCss, type PageSetup, pageCss, paperOf, parseMargin, printableWidthPx, printScale, VIEWPORTS, type WebLayout } from './html-page.js';
import { inspectZip, isEncryptedOoxml } from './office-input.js';
import type { TypesetPrint } from './structured/thread.js';
import { STRUCTURED_FORMATS, type StructuredFormat } from './structured/typeset.js';

export const OFFICE = ['doc', 'docx', 'xls', 'xlsx', 'ppt', 'pptx', 'odt', 'ods', 'odp', 'rtf', 'csv'];
const SPREADSHEETS = new Set(['xls', 'xlsx', 'ods', 'csv']);
const POSTSCRIPT = ['ps', 'eps'];
const IMAGES = ['jpg', 'jpeg', 'png', 'tif', 'tiff', 'bmp', 'gif', 'webp'];
export const HTML = ['html', 'htm'];
export const EMAIL = ['eml', 'msg'];
export const TO_PDF_FORMATS = [...new Set([...OFFICE, ...POSTSCRIPT, ...IMAGES, ...HTML, ...EMAIL, ...Object.keys(STRUCTURED_FORMATS)])];
/** Typeset from structured text: .csv only when structured_text_options is sent (else it is a spreadsheet). */
export const isStructured = (ext: string, f: { structured_text_options?: unknown }) =>
  ext in STRUCTURED_FORMATS && (ext !== 'csv' || f.structured_text_options !== undefined);
/** mailparser and msgreader hold a whole message (and its decoded attachments) in memory. */
const MAX_MAIL_BYTES = 100 * 1024 * 1024;
/** Longest wait for a page's network to go idle before it is printed anyway. */
const SETTLE_MS = 5000;

/** The page and image options of /pdf. */
export interface PdfOptions {
  compression: 'lossy' | 'lossless';
  downsample: string;
  tagged_pdf: boolean;
  locale: 'US' | 'Germany';
  page_size: PageSizeName;
  page_margin: string;
  page_orientation: 'portrait' | 'landscape';
  web_layout: WebLayout;
  structured_text_options?: unknown;
}

/** Where a conversion runs and what it may reach: web pages' hosts only through `resolveHost` (the URL policy). */
export interface ConvertJob {
  dir: string;
  signal: AbortSignal;
  timeoutMs: number;
  limits: Limits;
  resolveHost: (host: string) => Promise<string | null>;
}

/** Structured text typeset as HTML by the caller (it holds the request's images), printed here. */
export type Typesetter = (local: string, format: StructuredFormat, marginPt: number) => Promise<TypesetPrint & { file: string }>;
export type ConvertedPdf = { path: string; warning?: string };
interface Fetched {
  stream: Readable;
  type?: string;
  url: string;
}

/** As store/names.ts reads an extension (a domain does not import the store). */
const extensionOf = (name: string) => /\.([A-Za-z0-9]{1,8})$/.exec(name)?.[1].toLowerCase() ?? '';

export async function fileToPdf(input: { path: string; name: string }, f: PdfOptions, job: ConvertJob, typeset: Typesetter): Promise<ConvertedPdf> {
  const { dir } = job;
  const out = join(dir, 'output.pdf');
  const ectx = { cwd: dir, signal: job.signal, timeoutMs: job.timeoutMs };
  const maxDpi = f.downsample === 'off' ? null : Number(f.downsample);
  const lossless = f.compression === 'lossless';
  const ext = extensionOf(input.name);
  // A private copy with a plain name: tools never see the client's file name, and LibreOffice's lock file lands in the job dir.
  const local = join(dir, `input.${ext || 'bin'}`);
  const structured = isStructured(ext, f);
  if ((HTML.includes(ext) || structured) && (await stat(input.path)).size > job.limits.htmlMaxBytes) throw htmlLimitExceeded('bytes', job.limits);
  await copyFile(input.path, local);
  let warning: string | undefined;

  if (structured) {
    const print = await typeset(local, STRUCTURED_FORMATS[ext], setupOf(f).marginPt);
    await printPage({ file: print.file }, out, f, job, { typeset: print });
    warning = print.warnings.join(' ') || undefined;
  } else if (OFFICE.includes(ext)) {
    const head = await readFile(local);
    if (isEncryptedOoxml(head)) throw passwordProtected();
    const zip = inspectZip(head);
    if (!zip.ok) throw invalidInput(`${input.name} is not a usable office document (${zip.reason})`);
    try {
      const limits = { timeoutMs: job.limits.officeTimeoutMs, maxPages: job.limits.officeMaxPages };
      await officeToPdf(
        local,
        out,
        { lossless, maxImageDpi: maxDpi, tagged: f.tagged_pdf, locale: SPREADSHEETS.has(ext) && f.locale === 'Germany' ? 'de-DE' : 'en-US', ext, limits },
        ectx,
      );
    } catch (err) {
      if (err instanceof OfficePasswordError) throw passwordProtected();
      if (err instanceof EngineError && err.details.limit === 'time')
        throw limitExceeded('The office conversion time', 'OFFICE_TIMEOUT_SECONDS', job.limits.officeTimeoutMs / 1000);
      if (err instanceof EngineError && err.details.limit === 'pages')
        throw limitExceeded('The number of pages of the office document', 'OFFICE_MAX_PAGES', job.limits.officeMaxPages);
      if (err instanceof EngineError && !err.details.timedOut && !err.details.aborted && !err.details.missing && !err.details.unavailable)
        throw invalidInput(`${input.name} could not be opened as an office document`);
      throw err;
    }
  } else if (POSTSCRIPT.includes(ext)) {
    const head = (await readPdfHead(local)).toString('latin1');
    const eps = ext === 'eps' || /^%!PS-Adobe-\d\.\d EPSF/.test(head) || head.startsWith('\xc5\xd0\xd3\xc6');
    await psToPdf(local, out, { eps, lossless, maxDpi, limits: { timeoutMs: job.limits.psTimeoutMs, maxPages: job.limits.psMaxPages } }, ectx).catch((err) => {
      if (err instanceof EngineError && err.details.limit === 'time')
        throw limitExceeded("The PostScript program's run time", 'PS_TIMEOUT_SECONDS', job.limits.psTimeoutMs / 1000);
      if (err instanceof EngineError && err.details.limit === 'pages')
        throw limitExceeded('The number of pages the PostScript program emits', 'PS_MAX_PAGES', job.limits.psMaxPages);
      // 'bytes': the program printed more than Ghostscript's output is allowed to hold.
      if (err instanceof EngineError && (err.details.exitCode !== undefined || err.details.limit === 'bytes'))
        throw invalidInput(`${input.name} is not a PostScript program Ghostscript can run safely`);
      throw err;
    });
  } else if (IMAGES.includes(ext)) {
    await imagesToPdf([local], out, { lossless, maxDpi, maxPixels: job.limits.maxImagePixels }, ectx).catch((err) => {
      if (err instanceof ImageTooLargeError) throw limitExceeded(`The image ${input.name} (${err.width}x${err.height} pixels)`, 'MAX_IMAGE_PIXELS', err.limit);
      if (err instanceof EngineError) throw invalidInput(`${input.name} is not a readable image`);
      throw err;
    });
  } else if (HTML.includes(ext)) {
    await printPage(injectPageCss(await readFile(local, 'utf8'), pageCss(setupOf(f))), out, f, job);
  } else if (EMAIL.includes(ext)) {
    await convertMail(local, ext, input.name, out, f, job);
  } else {
    throw invalidInput(`${input.name}: .${ext || '(no extension)'} cannot be converted; supported: ${TO_PDF_FORMATS.map((e) => `.${e}`).join(', ')}`);
  }
  if (!(await stat(out).catch(() => null))?.size) throw invalidInput(`${input.name} produced no pages`);
  return { path: out, warning };
}

export const setupOf = (f: PdfOptions): PageSetup => ({
  size: f.page_size,
  orientation: f.page_orientation,
  marginPt: parseMargin(f.page_margin)!,
  layout: f.web_layout,
});

/**
 * Prints prepared HTML with Chromium, then applies compression and downsample (Chromium keeps images as the
 * page had them). Sub-resources follow the URL policy. E-mail (`mail`) refuses every host, runs no script and
 * ignores web_layout (HTML only in the spec): it is laid out at the printable width, at 100 %, as mail clients print.
 * Typeset structured text is printed the same way, on its own paper, tagged as asked.
 */
export async function printPage(
  html: string | { file: string },
  out: string,
  f: PdfOptions,
  job: ConvertJob,
  o: { mail?: boolean; typeset?: TypesetPrint } = {},
): Promise<void> {
  const page = typeof html === 'string' ? join(job.dir, 'page.html') : html.file;
  const printed = join(job.dir, 'printed.pdf');
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
      resolveHost: closed ? async () => null : job.resolveHost,
      tagged: o.typeset?.tagged,
      outline: o.typeset?.tagged,
      limits: {
        timeoutMs: job.limits.htmlTimeoutMs,
        maxPages: job.limits.htmlMaxPages,
        maxBytes: job.limits.htmlMaxBytes,
        maxMemoryBytes: job.limits.htmlMaxMemoryBytes,
      },
    },
    { cwd: job.dir, signal: job.signal, timeoutMs: job.timeoutMs },
  ).catch((err) => {
    throw htmlLimit(err, job.limits);
  });
  const rewritten = await enforceImagePolicy(
    printed,
    out,
    { lossless: f.compression === 'lossless', maxDpi: f.downsample === 'off' ? null : Number(f.downsample) },
    { cwd: job.dir, signal: job.signal, timeoutMs: job.timeoutMs },
  );
  if (!rewritten) await rename(printed, out);
}

/** One of the HTML limits (HTML, web pages, e-mail) as the 422 naming its setting. */
export function htmlLimitExceeded(limit: 'time' | 'pages' | 'bytes' | 'memory', limits: Limits) {
  if (limit === 'time') return limitExceeded("The page's load, scripts and printing", 'HTML_TIMEOUT_SECONDS', limits.htmlTimeoutMs / 1000);
  if (limit === 'pages') return limitExceeded('The number of pages the page prints', 'HTML_MAX_PAGES', limits.htmlMaxPages);
  if (limit === 'memory') return limitExceeded("The memory of the page's renderer", 'HTML_MAX_MEMORY_MB', limits.htmlMaxMemoryBytes / 1024 / 1024);
  return limitExceeded('The bytes the page loads (the document and its sub-resources)', 'HTML_MAX_MB', limits.htmlMaxBytes / 1024 / 1024);
}

/** A page the engine cut (engines/chromium/print.ts) becomes that 422; other errors pass. */
const htmlLimit = (err: unknown, limits: Limits) => (err instanceof EngineError && err.details.limit ? htmlLimitExceeded(err.details.limit, limits) : err);

/**
 * The message is printed like an HTML upload (page options apply); image and PDF attachments that are not
 * already shown in the body follow it as pages, in their order. An attachment that cannot be appended (an
 * unreadable image, an encrypted PDF) is only listed, with the reason.
 */
async function convertMail(local: string, ext: string, name: string, out: string, f: PdfOptions, job: ConvertJob): Promise<void> {
  const ectx = { cwd: job.dir, signal: job.signal, timeoutMs: job.timeoutMs };
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
    const file = join(job.dir, `attachment-${i}.${isPdf ? 'pdf' : imageExt}`);
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
        const maxPixels = job.limits.maxImagePixels;
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
  const message = appended.length ? join(job.dir, 'message.pdf') : out;
  await printPage(mailHtml(mail, notes), message, f, job, { mail: true });
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

/** A fetched web page read into memory, up to HTML_MAX_MB; anything but HTML, XML or plain text is refused. */
export async function readPage(url: string, fetched: Fetched, limits: Limits): Promise<{ text: string; url: string }> {
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
