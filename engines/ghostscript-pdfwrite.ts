import { rm } from 'node:fs/promises';
import type { EngineContext } from './context.js';
import { EngineError } from './errors.js';
import { devicePageBudget, pageListArg } from './ghostscript-raster.js';
import { pageCount } from './qpdf.js';
import { writePdf } from './qpdf-edit.js';
import { expectOutput, run } from './run.js';

/** Ghostscript's own ICC profiles (Debian libgs-common, a dependency of ghostscript). */
export const GS_ICC_DIR = '/usr/share/color/icc/ghostscript';

export type ColorFamily = 'RGB' | 'CMYK' | 'Gray';

export interface ImageSettings {
  /** Target dpi per kind of image; undefined keeps the resolution. */
  colorDpi?: number;
  grayDpi?: number;
  monoDpi?: number;
  /** Downsample only images above target x threshold (Ghostscript's default 1.5). */
  threshold?: number;
  method?: 'Bicubic' | 'Average' | 'Subsample';
  /** 'jpeg' re-encodes colour and grey images as JPEG at `jpegQuality`; 'lossless' as Flate; 'auto' lets Ghostscript choose per image. */
  encoding?: 'jpeg' | 'lossless' | 'auto';
  /** 1-100; maps to the DCT QFactor. */
  jpegQuality?: number;
  /** Per image class: downsample threshold (overrides `threshold`). */
  thresholds?: Partial<Record<ImageClass, number>>;
  /**
   * Per image class: the filter images are written with (overrides `encoding` for that class; AutoFilter off,
   * JPEG/JPX pass-through off), or 'auto' (Ghostscript picks DCT or Flate per image).
   */
  filters?: Partial<Record<ImageClass, 'DCTEncode' | 'FlateEncode' | 'CCITTFaxEncode' | 'auto'>>;
  /** Per class (Color, Gray) JPEG quality 1-100 (overrides `jpegQuality` for that class). */
  qualities?: Partial<Record<'Color' | 'Gray', number>>;
}

export type ImageClass = 'Color' | 'Gray' | 'Mono';

export interface PdfwriteOptions {
  /** PostScript files run before the input (pdfmark prologs in the job dir). */
  prologs?: string[];
  /** Files the prologs open: granted one by one under -dSAFER. */
  readable?: string[];
  compatibility?: '1.3' | '1.4' | '1.5' | '1.6' | '1.7' | '2.0';
  pdfa?: 1 | 2 | 3;
  pdfx?: boolean;
  colorConversion?: ColorFamily;
  /** A directory with Ghostscript's default_{rgb,cmyk,gray}.icc: the profiles device colours are converted into. */
  iccDir?: string;
  /** Grey stays on the K plate and CMYK conversions keep the K plane (lcms2 black preservation). */
  preserveBlack?: boolean;
  images?: ImageSettings;
  subsetFonts?: boolean;
  compressFonts?: boolean;
  dropAnnotations?: boolean;
  dropOutlines?: boolean;
  /** -dDetectDuplicateImages (pdfwrite writes identical images once). */
  detectDuplicateImages?: boolean;
  /** Resolution at which transparency is flattened when the output level has none (PDF 1.3 / PDF/X-1a, X-3). */
  flattenDpi?: number;
  /** Only these pages of the input (-dFirstPage, -dLastPage; 1-based, inclusive). */
  firstPage?: number;
  lastPage?: number;
}

/** The JPEG quality scale (1-100) as Distiller's QFactor: 100 -> 0.15 (Acrobat's "maximum"), 50 -> ~1.3, 1 -> 2.4. */
export const qFactor = (quality: number) => Math.round((0.15 + ((100 - quality) / 99) * 2.25) * 100) / 100;

/** PostScript string literal: backslash, parentheses and non-ASCII bytes escaped. */
export function psString(s: string): string {
  return `(${[...Buffer.from(s, 'utf8')].map((b) => (b === 0x5c || b === 0x28 || b === 0x29 ? `\\${String.fromCharCode(b)}` : b < 0x20 || b > 0x7e ? `\\${b.toString(8).padStart(3, '0')}` : String.fromCharCode(b))).join('')})`;
}

const bool = (b: boolean) => (b ? 'true' : 'false');

/** pdfwrite arguments: safe flags, then the options, then the prologs and the input. */
export function pdfwriteArgs(input: string, output: string, o: PdfwriteOptions = {}): string[] {
  // Ghostscript prints its errors on stdout: to stderr, where callers look for them.
  const a = ['-dSAFER', '-dBATCH', '-dNOPAUSE', '-q', '-sstdout=%stderr', '-sDEVICE=pdfwrite'];
  for (const f of o.readable ?? []) a.push(`--permit-file-read=${f}`);
  if (o.compatibility) a.push(`-dCompatibilityLevel=${o.compatibility}`);
  if (o.pdfa) a.push(`-dPDFA=${o.pdfa}`, '-dPDFACompatibilityPolicy=1');
  if (o.pdfx) a.push('-dPDFX');
  if (o.iccDir) a.push(`-sICCProfilesDir=${o.iccDir.endsWith('/') ? o.iccDir : `${o.iccDir}/`}`);
  if (o.colorConversion) a.push(`-sColorConversionStrategy=${o.colorConversion}`, `-dProcessColorModel=/Device${o.colorConversion}`);
  if (o.preserveBlack !== undefined) a.push(`-dDeviceGrayToK=${bool(o.preserveBlack)}`, `-dKPreserve=${o.preserveBlack ? 2 : 0}`);
  if (o.flattenDpi) a.push(`-r${o.flattenDpi}`);
  if (o.subsetFonts !== undefined) a.push(`-dSubsetFonts=${bool(o.subsetFonts)}`);
  if (o.compressFonts !== undefined) a.push(`-dCompressFonts=${bool(o.compressFonts)}`);
  if (o.dropAnnotations) a.push('-dShowAnnots=false');
  if (o.dropOutlines) a.push('-dNO_PDFMARK_OUTLINES');
  if (o.firstPage) a.push(`-dFirstPage=${o.firstPage}`);
  if (o.lastPage) a.push(`-dLastPage=${o.lastPage}`);
  if (o.detectDuplicateImages !== undefined) a.push(`-dDetectDuplicateImages=${bool(o.detectDuplicateImages)}`);
  const im = o.images;
  const ps: string[] = [];
  if (im) {
    for (const [kind, dpi] of [
      ['Color', im.colorDpi],
      ['Gray', im.grayDpi],
      ['Mono', im.monoDpi],
    ] as const) {
      a.push(`-dDownsample${kind}Images=${bool(dpi !== undefined)}`);
      if (dpi !== undefined) {
        a.push(`-d${kind}ImageResolution=${dpi}`, `-d${kind}ImageDownsampleType=/${kind === 'Mono' ? 'Subsample' : (im.method ?? 'Bicubic')}`);
        a.push(`-d${kind}ImageDownsampleThreshold=${im.thresholds?.[kind] ?? im.threshold ?? 1.5}`);
      }
    }
    if (im.encoding === 'jpeg' || im.encoding === 'lossless') {
      // An image that is not resampled keeps its JPEG data unless told otherwise; re-encoding is the point here.
      a.push('-dPassThroughJPEGImages=false', '-dPassThroughJPXImages=false');
      for (const kind of ['Color', 'Gray']) {
        a.push(`-dAutoFilter${kind}Images=false`, `-d${kind}ImageFilter=/${im.encoding === 'jpeg' ? 'DCTEncode' : 'FlateEncode'}`);
      }
    }
    for (const [kind, filter] of Object.entries(im.filters ?? {}) as [ImageClass, string][]) {
      if (filter === 'auto') {
        if (kind !== 'Mono') a.push(`-dAutoFilter${kind}Images=true`);
        continue;
      }
      if (!a.includes('-dPassThroughJPEGImages=false')) a.push('-dPassThroughJPEGImages=false', '-dPassThroughJPXImages=false');
      if (kind !== 'Mono') a.push(`-dAutoFilter${kind}Images=false`);
      a.push(`-d${kind}ImageFilter=/${filter}`);
    }
    const dict = (q: number) => `<< /QFactor ${qFactor(q)} /Blend 1 /HSamples [2 1 1 2] /VSamples [2 1 1 2] >>`;
    const entries: string[] = [];
    for (const kind of ['Color', 'Gray'] as const) {
      const q = im.qualities?.[kind] ?? im.jpegQuality;
      if (q !== undefined) entries.push(`/${kind}ImageDict ${dict(q)} /${kind}ACSImageDict ${dict(q)}`);
    }
    if (entries.length) ps.push(`<< ${entries.join(' ')} >> setdistillerparams`);
  }
  a.push(`-sOutputFile=${output}`);
  if (ps.length) a.push('-c', ps.join(' '), '-f');
  a.push(...(o.prologs ?? []), input);
  return a;
}

/** Without -q Ghostscript prints "Page N" as it begins each page: with ctx.pageMs, a page past it is cut (run.ts pageBudget). */
const withPageMarks = (args: string[], ctx: EngineContext) => (ctx.pageMs ? args.filter((a) => a !== '-q') : args);

/**
 * Rewrites a PDF with pdfwrite. Ghostscript exits 0 on input it could not read, writing an empty document
 * ("Couldn't initialise file", e.g. corpus pdf/image-cmyk.pdf), so its messages and the output's page count are checked.
 */
export async function rewritePdf(input: string, output: string, opts: PdfwriteOptions, ctx: EngineContext & { pages?: number }): Promise<{ stderr: string }> {
  const r = await run('gs', withPageMarks(pdfwriteArgs(input, output, opts), ctx), { ...ctx, pageBudget: devicePageBudget(ctx) });
  await expectOutput('gs', output);
  // It may also write one blank page for a file it could not open at all.
  if (/Couldn't initialise file|No pages will be processed/.test(r.stderr)) {
    if (PASSWORD_ASKED.test(r.stderr) && !input.endsWith(DECRYPTED)) return rewriteDecrypted(input, output, opts, ctx);
    throw new EngineError('gs', 'could not read the input', { stderr: r.stderr });
  }
  const written = await pageCount(output, ctx).catch(() => 0);
  // Without the count expected (a file qpdf cannot count, being repaired), any page at all.
  if (ctx.pages === undefined ? written < 1 : written !== ctx.pages)
    throw new EngineError('gs', `wrote ${written} of ${ctx.pages ?? 'some'} pages`, { stderr: r.stderr });
  return { stderr: r.stderr };
}

const PASSWORD_ASKED = /requires a password for access/;
const DECRYPTED = '.decrypted.pdf';

/**
 * Ghostscript 10.00 asks a password of some files that open without one in qpdf and MuPDF (an Encrypt dictionary
 * whose key /Length is wrong: realworld-qpdf bad-encryption-length). A file that needs a real one never gets here:
 * reading it with qpdf first is a 401. pdfwrite never carries an input's encryption into its output, so the copy
 * qpdf decrypts (with the empty user password) is written from instead, with the same result.
 */
async function rewriteDecrypted(input: string, output: string, opts: PdfwriteOptions, ctx: EngineContext & { pages?: number }): Promise<{ stderr: string }> {
  const copy = `${output}${DECRYPTED}`;
  try {
    await writePdf(input, copy, { decrypt: true }, ctx);
    return await rewritePdf(copy, output, opts, ctx);
  } finally {
    await rm(copy, { force: true });
  }
}

export interface OutputIntent {
  /** ICC profile file (readable by gs). */
  profile: string;
  components: 1 | 3 | 4;
  /** GTS_PDFA1 for PDF/A, GTS_PDFX for PDF/X. */
  subtype: 'GTS_PDFA1' | 'GTS_PDFX';
  identifier: string;
  info?: string;
  condition?: string;
  registry?: string;
}

/**
 * A pdfmark prolog that embeds an ICC profile as the document's OutputIntent and sets Info entries. pdfwrite
 * writes broken "PDF/A" with exit 0 when the profile cannot be read, so callers check the output.
 */
export function outputIntentProlog(intent: OutputIntent, docinfo: Record<string, string> = {}): string {
  const info = Object.entries(docinfo).map(([k, v]) => `/${k} ${v.startsWith('/') ? v : psString(v)}`);
  const optional = [
    intent.info !== undefined ? `/Info ${psString(intent.info)}` : '',
    intent.condition !== undefined ? `/OutputCondition ${psString(intent.condition)}` : '',
    intent.registry !== undefined ? `/RegistryName ${psString(intent.registry)}` : '',
  ].filter(Boolean);
  return [
    '%!',
    ...(info.length ? [`[ ${info.join(' ')} /DOCINFO pdfmark`] : []),
    '[/_objdef {quire_icc} /type /stream /OBJ pdfmark',
    `[{quire_icc} << /N ${intent.components} >> /PUT pdfmark`,
    `[{quire_icc} ${psString(intent.profile)} (r) file /PUT pdfmark`,
    '[/_objdef {quire_intent} /type /dict /OBJ pdfmark',
    `[{quire_intent} << /Type /OutputIntent /S /${intent.subtype} /DestOutputProfile {quire_icc} /OutputConditionIdentifier ${psString(intent.identifier)} ${optional.join(' ')} >> /PUT pdfmark`,
    '[{Catalog} << /OutputIntents [ {quire_intent} ] >> /PUT pdfmark',
    '',
  ].join('\n');
}

/** Arguments of the pdfimage24 device for some pages only: each becomes one RGB image page. */
export function rasterPagesArgs(input: string, output: string, pages: number[], resolution: number): string[] {
  return [
    '-dSAFER',
    '-dBATCH',
    '-dNOPAUSE',
    '-q',
    '-sstdout=%stderr',
    '-sDEVICE=pdfimage24',
    `-r${resolution}`,
    '-dTextAlphaBits=4',
    '-dGraphicsAlphaBits=4',
    pageListArg(pages),
    `-sOutputFile=${output}`,
    input,
  ];
}

/** The given pages (strictly increasing) drawn as images into one PDF, in order. */
export async function rasterizePages(input: string, output: string, pages: number[], resolution: number, ctx: EngineContext): Promise<void> {
  await run('gs', withPageMarks(rasterPagesArgs(input, output, pages, resolution), ctx), { ...ctx, pageBudget: devicePageBudget(ctx) });
  await expectOutput('gs', output);
}
