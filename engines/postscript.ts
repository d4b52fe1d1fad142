import { rm } from 'node:fs/promises';
import type { EngineContext } from './context.js';
import { EngineError } from './errors.js';
import { pageListArg } from './ghostscript-raster.js';
import { pageCount } from './qpdf.js';
import { expectOutput, run } from './run.js';

/**
 * PostScript and EPS to PDF with Ghostscript's pdfwrite. -dSAFER is what stops a hostile program from
 * reading, writing or deleting files (it raises /invalidfileaccess and Ghostscript exits non-zero).
 * Kept apart from a general ghostscript module only because that one is being written concurrently.
 * Also home of the pdfwrite pass that applies `compression` and `downsample` to Chromium's output.
 */
export interface PsOptions {
  /** EPS: the page is the %%BoundingBox, not the default paper. */
  eps: boolean;
  lossless: boolean;
  /** Image resolution cap in DPI, or null to keep images as they are. */
  maxDpi: number | null;
  /** Cuts for hostile programs (none when absent). */
  limits?: Partial<PsLimits>;
}

/** Each one exceeded throws an EngineError whose `details.limit` says which (the caller names its setting). */
export interface PsLimits {
  /** Time the program may run (capped by the job's own time left). */
  timeoutMs: number;
  /** Pages the program may emit. */
  maxPages: number;
}

/** Printed by the page guard when the program emits one page more than allowed. */
const PAGE_LIMIT_MARK = 'QUIRE_PAGE_LIMIT_REACHED';

/**
 * PostScript run before the client's program: an EndPage procedure that counts every page the program emits
 * (in global VM, so the program's save/restore cannot rewind the count; the page device keeps EndPage through
 * the program's own setpagedevice calls) and quits Ghostscript at page max + 1, instead of running the rest.
 * bind and // put the operators and the counter into the procedure, so redefining quit, print or the counter's
 * name changes nothing. A program that installs an EndPage of its own escapes the early stop, not the limit:
 * -dLastPage keeps at most max + 1 pages, which the page count afterwards refuses.
 */
export function pageGuard(maxPages: number): string {
  return (
    'true setglobal /QuirePageCount 1 array def QuirePageCount 0 0 put false setglobal ' +
    '<< /EndPage { exch pop 2 ne { //QuirePageCount 0 //QuirePageCount 0 get 1 add put ' +
    `//QuirePageCount 0 get ${maxPages} gt { (${PAGE_LIMIT_MARK}\\n) print flush quit } if true } { false } ifelse } bind >> setpagedevice`
  );
}

/** pdfwrite's image settings: Flate instead of JPEG when lossless, and downsampling above `maxDpi`. */
function imageArgs(o: Pick<PsOptions, 'lossless' | 'maxDpi'>): string[] {
  const args: string[] = [];
  if (o.lossless) {
    // Without PassThroughJPEGImages=false, JPEG data that needs no downsampling would be copied as it is.
    args.push('-dPassThroughJPEGImages=false');
    for (const k of ['Color', 'Gray']) args.push(`-dAutoFilter${k}Images=false`, `-d${k}ImageFilter=/FlateEncode`);
  }
  for (const k of ['Color', 'Gray', 'Mono']) {
    if (o.maxDpi === null) args.push(`-dDownsample${k}Images=false`);
    else args.push(`-dDownsample${k}Images=true`, `-d${k}ImageResolution=${o.maxDpi}`, `-d${k}ImageDownsampleThreshold=1.0`);
  }
  if (o.maxDpi !== null) args.push('-dColorImageDownsampleType=/Bicubic', '-dGrayImageDownsampleType=/Bicubic');
  return args;
}

const PDFWRITE = ['-dSAFER', '-dBATCH', '-dNOPAUSE', '-dQUIET', '-sDEVICE=pdfwrite', '-dEmbedAllFonts=true', '-dSubsetFonts=true'];

export function psToPdfArgs(input: string, output: string, o: PsOptions): string[] {
  const args = [...PDFWRITE];
  if (o.eps) args.push('-dEPSCrop');
  const maxPages = o.limits?.maxPages;
  if (maxPages !== undefined && Number.isFinite(maxPages)) args.push(`-dLastPage=${maxPages + 1}`);
  args.push(...imageArgs(o), `-sOutputFile=${output}`);
  if (maxPages !== undefined && Number.isFinite(maxPages)) args.push('-c', pageGuard(maxPages));
  args.push('--', input);
  return args;
}

/** What a program may print (its own `print`s and our page guard's mark) before it is killed. */
const MAX_PS_OUTPUT = 4 * 1024 * 1024;

export async function psToPdf(input: string, output: string, o: PsOptions, ctx: EngineContext): Promise<void> {
  const limits: PsLimits = { timeoutMs: Infinity, maxPages: Infinity, ...o.limits };
  const jobMs = ctx.timeoutMs ?? Infinity;
  const timeoutMs = Math.min(limits.timeoutMs, jobMs);
  let stdout: string;
  try {
    ({ stdout } = await run('gs', psToPdfArgs(input, output, o), {
      cwd: ctx.cwd,
      signal: ctx.signal,
      timeoutMs: Number.isFinite(timeoutMs) ? timeoutMs : undefined,
      maxBuffer: MAX_PS_OUTPUT,
    }));
  } catch (err) {
    // Ours when our limit was the nearer one; the job's own time limit stays the job's.
    if (err instanceof EngineError && err.details.timedOut && limits.timeoutMs <= jobMs) {
      throw new EngineError('gs', `the program ran longer than ${limits.timeoutMs} ms`, { ...err.details, limit: 'time' });
    }
    throw err;
  }
  await expectOutput('gs', output);
  if (stdout.includes(PAGE_LIMIT_MARK) || (Number.isFinite(limits.maxPages) && (await pageCount(output, ctx)) > limits.maxPages)) {
    await rm(output, { force: true });
    throw new EngineError('gs', `the program emits more than ${limits.maxPages} pages`, { limit: 'pages' });
  }
}

/** One drawn image: encoding and the resolution it is drawn at (`pdfimages -list`). */
export interface DrawnImage {
  encoding: string;
  ppi: number;
}

export function parseDrawnImages(list: string): DrawnImage[] {
  return list
    .split('\n')
    .slice(2)
    .map((l) => l.trim().split(/\s+/))
    .filter((c) => c.length >= 14 && /^\d+$/.test(c[0]) && (c[2] === 'image' || c[2] === 'smask'))
    .map((c) => ({ encoding: c[8], ppi: Math.max(Number(c[12]) || 0, Number(c[13]) || 0) }));
}

/** Whether a PDF's images break the compression and resolution asked for; 5% slack for pdfimages' rounding. */
export function imagesNeedRewrite(images: DrawnImage[], o: Pick<PsOptions, 'lossless' | 'maxDpi'>): boolean {
  return images.some((i) => (o.lossless && (i.encoding === 'jpeg' || i.encoding === 'jpx')) || (o.maxDpi !== null && i.ppi > o.maxDpi * 1.05));
}

/**
 * Applies `compression` and `downsample` to a finished PDF (Chromium's output keeps images as the page had
 * them): a Ghostscript pdfwrite pass, only when some image needs it, since the pass costs time and drops
 * the structure tree. Returns whether it rewrote `input` into `output`.
 */
export async function enforceImagePolicy(input: string, output: string, o: Pick<PsOptions, 'lossless' | 'maxDpi'>, ctx: EngineContext): Promise<boolean> {
  const list = await run('pdfimages', ['-list', input], { cwd: ctx.cwd, signal: ctx.signal, timeoutMs: ctx.timeoutMs });
  if (!imagesNeedRewrite(parseDrawnImages(list.stdout), o)) return false;
  await run('gs', [...PDFWRITE, ...imageArgs(o), `-sOutputFile=${output}`, '--', input], { cwd: ctx.cwd, signal: ctx.signal, timeoutMs: ctx.timeoutMs });
  await expectOutput('gs', output);
  return true;
}

/**
 * PDF to PostScript. Poppler's pdftops writes the PostScript, because it honours LanguageLevel 3 (Ghostscript's
 * ps2write writes the same Level 2 program whatever -dLanguageLevel says); a Ghostscript pdfwrite pass runs
 * first only when an option pdftops lacks is asked for (a page list, annotations off, a scale, auto-rotation).
 * Both write 7-bit clean data (ASCII85 / hex) at levels 2 and 3.
 */
export interface PdfToPsOptions {
  /** PostScript LanguageLevel of the output. */
  level: 2 | 3;
  /** Pages to write, 1-based, in order (all when absent). */
  pages?: number[];
  /** Draw annotations (their appearance streams). */
  annotations: boolean;
  /** Turn each page so its text runs upright (Ghostscript AutoRotatePages=/PageByPage); else keep /Rotate as is. */
  autoRotate: boolean;
  /** Factor applied to the page content about the page's centre; the page size stays. */
  scale: number;
}

/** The PostScript run before the PDF: an Install procedure scaling every page about its centre (none at scale 1). */
export function scaleProlog(scale: number): string | null {
  if (scale === 1) return null;
  const s = Number(scale.toFixed(6));
  return `<< /Install { currentpagedevice /PageSize get aload pop 2 div exch 2 div exch 2 copy translate ${s} ${s} scale neg exch neg exch translate } bind >> setpagedevice`;
}

export const needsPrepass = (o: PdfToPsOptions) => !!o.pages?.length || !o.annotations || o.autoRotate || o.scale !== 1;

/** Ghostscript pdfwrite: the page list, annotations, rotation and scale applied to a PDF, before pdftops. */
export function psPrepassArgs(input: string, output: string, o: PdfToPsOptions): string[] {
  const args = [...PDFWRITE];
  if (o.pages?.length) args.push(pageListArg(o.pages));
  if (!o.annotations) args.push('-dShowAnnots=false');
  args.push(`-dAutoRotatePages=${o.autoRotate ? '/PageByPage' : '/None'}`, `-sOutputFile=${output}`);
  const prolog = scaleProlog(o.scale);
  if (prolog) args.push('-c', prolog, '-f');
  args.push('--', input);
  return args;
}

/** pdftops: each page on paper of its own size (never shrunk onto Letter), at the level asked for. */
export const pdfToPsArgs = (input: string, output: string, o: Pick<PdfToPsOptions, 'level'>): string[] => [
  `-level${o.level}`,
  '-paper',
  'match',
  input,
  output,
];

export async function pdfToPs(input: string, output: string, o: PdfToPsOptions, ctx: EngineContext): Promise<void> {
  const opts = { cwd: ctx.cwd, signal: ctx.signal, timeoutMs: ctx.timeoutMs };
  let src = input;
  if (needsPrepass(o)) {
    src = `${output}.prepass.pdf`;
    await run('gs', psPrepassArgs(input, src, o), opts);
    await expectOutput('gs', src);
  }
  try {
    await run('pdftops', pdfToPsArgs(src, output, o), opts);
    await expectOutput('pdftops', output);
  } finally {
    if (src !== input) await rm(src, { force: true });
  }
}
