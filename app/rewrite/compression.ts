import { randomUUID } from 'node:crypto';
import { copyFile, open, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { EngineContext } from '../../engines/context.js';
import { EngineError } from '../../engines/errors.js';
import { type PdfwriteOptions, rewritePdf } from '../../engines/ghostscript-pdfwrite.js';
import { type QpdfJob, runJob } from '../../engines/qpdf-edit.js';
import { expectOutput, run } from '../../engines/run.js';
import { isRef, withinPageBudget } from '../document/index.js';
import { AppError } from '../errors.js';

/**
 * The custom compression profile (a JSON upload or stored resource). Every key is optional; unknown keys are
 * refused so that a misspelt setting is not silently ignored.
 */
const dpi = z.number().int().min(10).max(2400);
export const profileSchema = z
  .object({
    color_image_dpi: dpi.optional(),
    gray_image_dpi: dpi.optional(),
    mono_image_dpi: dpi.optional(),
    downsample_threshold: z.number().min(1).max(10).optional(),
    downsample_method: z.enum(['bicubic', 'average', 'subsample']).optional(),
    image_compression: z.enum(['jpeg', 'lossless', 'auto']).optional(),
    jpeg_quality: z.number().int().min(1).max(100).optional(),
    grayscale: z.boolean().optional(),
    subset_fonts: z.boolean().optional(),
    compress_fonts: z.boolean().optional(),
    remove_annotations: z.boolean().optional(),
    remove_bookmarks: z.boolean().optional(),
    object_streams: z.boolean().optional(),
  })
  .strict();
export type CompressionProfile = z.infer<typeof profileSchema>;

export const PROFILE_DOC =
  'Profile JSON (every key optional, unknown keys refused): color_image_dpi, gray_image_dpi, mono_image_dpi (10-2400: downsample images above that resolution), ' +
  'downsample_threshold (1-10, default 1.5: only images above dpi x threshold are resampled), downsample_method (bicubic | average | subsample), ' +
  'image_compression (jpeg | lossless | auto: how colour and grey images are re-encoded; default auto = Ghostscript chooses per image and keeps JPEGs it does not resample), ' +
  'jpeg_quality (1-100), grayscale (true converts every colour to grey), subset_fonts, compress_fonts (default true), remove_annotations, remove_bookmarks, ' +
  'object_streams (default true: a final lossless qpdf pass packs objects into compressed object streams and recompresses Flate streams at level 9).';

/** Loose JSON numbers and booleans ("150", "true") as real ones, as everywhere else in the API. */
function loose(v: unknown): unknown {
  if (typeof v === 'string') {
    const t = v.trim();
    if (/^[-+]?\d+(\.\d+)?$/.test(t)) return Number(t);
    if (t === 'true' || t === 'false') return t === 'true';
  }
  return v;
}

/** The profile's own values only: every key holds a scalar, so nothing nested is walked (it may be nested 30,000 deep). */
const loosen = (v: unknown): unknown =>
  v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, loose(x)])) : v;

function profileJson(text: string): unknown {
  try {
    return JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    throw new AppError('bad_json', 'JSON data provided is not properly formatted: the compression profile is not JSON');
  }
}

/** Either schema, told apart by shape: pdfRest's nested sections (images, fonts, cleanup, ...) or Quire's flat keys. */
export type AnyProfile = { kind: 'flat'; profile: CompressionProfile } | { kind: 'pdfrest'; plan: PdfRestPlan };

/** Reads a profile in either schema; a bad one is a 400 naming the key (its path for pdfRest's). */
export function readProfile(text: string): AnyProfile {
  const raw = profileJson(text);
  if (isPdfRestProfile(raw)) return { kind: 'pdfrest', plan: pdfRestPlan(parsePdfRestProfile(raw)) };
  return { kind: 'flat', profile: flatProfile(raw) };
}

/** Reads a profile; a bad one is a 400 naming the key. */
export function parseProfile(text: string): CompressionProfile {
  return flatProfile(profileJson(text));
}

function flatProfile(raw: unknown): CompressionProfile {
  const parsed = profileSchema.safeParse(loosen(raw));
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const key = issue.code === 'unrecognized_keys' ? issue.keys[0] : issue.path.join('.');
  if (!key) throw new AppError('out_of_range', 'The compression profile must be a JSON object');
  if (issue.code === 'unrecognized_keys') throw new AppError('out_of_range', `${key} is not a known key of the compression profile`);
  return fail(key, (raw as Record<string, unknown>)?.[key]);
}

function fail(key: string, value: unknown): never {
  // An object or array is named, not printed: JSON.stringify overflows the stack on deeply nested values.
  const shown = value !== null && typeof value === 'object' ? (Array.isArray(value) ? 'An array' : 'An object') : JSON.stringify(value);
  throw new AppError('out_of_range', `${shown} is not within the acceptable range for profile key ${key}`);
}

const METHOD = { bicubic: 'Bicubic', average: 'Average', subsample: 'Subsample' } as const;

/** A profile as Ghostscript settings (null: nothing for Ghostscript to do, the qpdf pass alone). */
export function profileSettings(p: CompressionProfile): PdfwriteOptions | null {
  const lossy =
    p.color_image_dpi !== undefined ||
    p.gray_image_dpi !== undefined ||
    p.mono_image_dpi !== undefined ||
    p.jpeg_quality !== undefined ||
    (p.image_compression !== undefined && p.image_compression !== 'auto') ||
    p.grayscale ||
    p.remove_annotations ||
    p.remove_bookmarks ||
    p.subset_fonts !== undefined ||
    p.compress_fonts !== undefined;
  if (!lossy) return null;
  const jpeg = p.image_compression ?? (p.jpeg_quality !== undefined ? 'jpeg' : 'auto');
  return {
    images: {
      colorDpi: p.color_image_dpi,
      grayDpi: p.gray_image_dpi,
      monoDpi: p.mono_image_dpi,
      threshold: p.downsample_threshold,
      method: p.downsample_method && METHOD[p.downsample_method],
      encoding: jpeg,
      jpegQuality: jpeg === 'lossless' ? undefined : p.jpeg_quality,
    },
    colorConversion: p.grayscale ? 'Gray' : undefined,
    subsetFonts: p.subset_fonts,
    compressFonts: p.compress_fonts,
    dropAnnotations: p.remove_annotations,
    dropOutlines: p.remove_bookmarks,
  };
}

/**
 * The three named levels, chosen by measurement (scripts/bench/optimise.bench.ts): low is lossless (qpdf only:
 * fonts, structure, tags and forms untouched); medium and high re-encode images through Ghostscript, then
 * the lossless qpdf pass.
 */
export const LEVELS: Record<'low' | 'medium' | 'high', PdfwriteOptions | null> = {
  low: null,
  medium: { images: { colorDpi: 150, grayDpi: 150, monoDpi: 300, threshold: 1.5, encoding: 'auto', jpegQuality: 75 } },
  high: { images: { colorDpi: 96, grayDpi: 96, monoDpi: 200, threshold: 1.2, encoding: 'jpeg', jpegQuality: 50 } },
};

/** qpdf's lossless pass: Flate streams recompressed at level 9, objects packed in object streams. */
export function losslessJob(input: string, output: string, objectStreams = true): QpdfJob {
  return {
    inputFile: input,
    outputFile: output,
    recompressFlate: '',
    compressionLevel: '9',
    objectStreams: objectStreams ? 'generate' : 'preserve',
    removeUnreferencedResources: 'auto',
  };
}

export interface Compressed {
  path: string;
  size: number;
  /** The input's size: a result not smaller than it is no result. */
  inputSize: number;
}

/**
 * Runs the candidates (Ghostscript then qpdf when there are settings; qpdf alone as the lossless fallback) and
 * keeps the smallest: Ghostscript's rewrite of an already lean file (text, JPEGs at low resolution) can come
 * out larger than the lossless repack.
 */
export async function compressPdf(
  input: string,
  dir: string,
  opts: {
    settings: PdfwriteOptions | null;
    objectStreams: boolean;
    /** The lossless file may win over Ghostscript's (named levels; not a custom profile, whose settings are asked for). */
    fallback: boolean;
    /** Replaces the lossless qpdf pass (a pdfRest profile's own qpdf pass). */
    final?: (input: string, output: string) => Promise<void>;
  },
  ctx: EngineContext & { pages: number },
): Promise<Compressed> {
  const { settings, objectStreams } = opts;
  const inputSize = (await stat(input)).size;
  const candidates: string[] = [];
  const final =
    opts.final ??
    (async (from: string, to: string) => {
      await runJob(losslessJob(from, to, objectStreams), ctx);
      await expectOutput('qpdf', to);
    });
  if (!settings || opts.fallback) {
    const qpdfOnly = join(dir, 'lossless.pdf');
    await final(input, qpdfOnly);
    candidates.push(qpdfOnly);
  }
  if (settings) {
    const gs = join(dir, 'rewritten.pdf');
    const rewritten = await withinPageBudget('Writing', 'writePageMs', ctx, (c) => rewritePdf(input, gs, settings, { ...c, pages: ctx.pages })).then(
      () => true,
      (err) => {
        // Ghostscript cannot read some files qpdf can (it wrote no pages): a named level keeps the lossless result.
        if (!opts.fallback || !(err instanceof EngineError) || err.details.aborted || err.details.timedOut) throw err;
        return false;
      },
    );
    if (rewritten) {
      const packed = join(dir, 'rewritten-packed.pdf');
      await final(gs, packed);
      candidates.unshift(packed);
    }
  }
  let best = { path: candidates[0], size: (await stat(candidates[0])).size };
  for (const c of candidates.slice(1)) {
    const size = (await stat(c)).size;
    if (size < best.size) best = { path: c, size };
  }
  const out = join(dir, 'compressed.pdf');
  await copyFile(best.path, out);
  return { path: out, size: best.size, inputSize };
}

// ------------------------------------------------------------------ pdfRest's profile schema

/**
 * pdfRest's custom profile (Adobe PDF Optimizer settings): nested objects, lower-case keys, every setting off
 * unless present; booleans are true/false or "on"/"off". `cleanup.compression` is required.
 */
type Leaf = 'bool' | 'dpi' | readonly string[];
interface Spec {
  [key: string]: Leaf | Spec;
}
const TYPES = ['same', 'zip', 'jpeg', 'jpeg2000', 'zip-jpeg', 'jbig2'] as const;
const QUALITIES = ['minimum', 'low', 'medium', 'high', 'maximum', 'lossless', 'lossy'] as const;
const IMAGE_CLASS: Spec = {
  downsample: { 'trigger-dpi': 'dpi', 'target-dpi': 'dpi' },
  recompress: { type: TYPES, quality: QUALITIES },
};
const bools = (...keys: string[]): Spec => Object.fromEntries(keys.map((k) => [k, 'bool' as const]));
const PROFILES = [
  'lab-d50',
  'srgb',
  'apple-rgb',
  'color-match-rgb',
  'monitor-rgb',
  'gamma-18',
  'gamma-22',
  'dot-gain-10',
  'dot-gain-15',
  'dot-gain-20',
  'dot-gain-25',
  'dot-gain-30',
  'acrobat5-cmyk',
  'acrobat9-cmyk',
];
const TRANSPARENCY = ['high-quality', 'medium-quality', 'low-quality'];
export const PDFREST_SCHEMA: Spec = {
  images: {
    color: IMAGE_CLASS,
    grayscale: IMAGE_CLASS,
    monochrome: IMAGE_CLASS,
    ...bools(
      'optimize-images-only-if-reduction-in-size',
      'consolidate-duplicate-objects',
      'consolidate-duplicate-image-and-forms',
      'down-convert-16-to-8-bpc-images',
    ),
  },
  fonts: bools('subset-embedded-fonts', 'consolidate-duplicate-fonts', 'unembed-standard-14-fonts', 'resubset-subset-fonts', 'remove-unused-fonts'),
  objects: bools(
    'discard-javascript-actions',
    'discard-alternate-images',
    'discard-thumbnails',
    'discard-document-tags',
    'discard-bookmarks',
    'discard-output-intent',
  ),
  userdata: bools(
    'discard-comments-forms-multimedia',
    'discard-xmp-metadata-padding',
    'discard-document-information-and-metadata',
    'discard-file-attachments',
    'discard-external-crossreferences',
    'discard-private-data',
    'discard-hidden-layer-content',
  ),
  cleanup: {
    compression: ['compress-entire-file', 'compress-document-structure', 'remove-compression'],
    ...bools('flate-encode-uncompressed-streams', 'convert-lzw-to-flate', 'optimize-page-content', 'optimize-for-fast-web-view'),
  },
  general: bools('write-output-even-if-increase-in-size', 'preserve-version'),
  'color-conversion': {
    enabled: 'bool',
    'color-convert-action': ['convert', 'decalibrate'],
    'convert-intent': ['perceptual-intent', 'relative-colorimetric-intent', 'saturation-intent', 'absolute-colorimetric-intent', 'profile-intent'],
    'convert-profile': PROFILES,
  },
  'pdfa-conversion': {
    enabled: 'bool',
    type: ['1a', '1b', '2a', '2b', '2u', '3a', '3b', '3u'],
    'pdfa-target-color-space': ['rgb', 'cmyk'],
    'rasterize-if-errors-encountered': 'bool',
  },
  transparency: { quality: TRANSPARENCY },
  quality: TRANSPARENCY,
};

/** A validated pdfRest profile: key paths ("images.color.downsample.target-dpi") to values (booleans already true/false). */
export type PdfRestProfile = Map<string, boolean | number | string>;

/** True when the profile is in pdfRest's schema (any top-level key of it), rather than Quire's flat keys. */
export function isPdfRestProfile(raw: unknown): boolean {
  return !!raw && typeof raw === 'object' && !Array.isArray(raw) && Object.keys(raw).some((k) => k !== 'quality' && Object.hasOwn(PDFREST_SCHEMA, k));
}

function leafValue(path: string, leaf: Leaf, v: unknown): boolean | number | string {
  if (leaf === 'bool') {
    const t = typeof v === 'string' ? v.trim().toLowerCase() : v;
    if (t === true || t === 'on' || t === 'true') return true;
    if (t === false || t === 'off' || t === 'false') return false;
  } else if (leaf === 'dpi') {
    const n = typeof v === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(v) ? Number(v) : v;
    if (typeof n === 'number' && Number.isFinite(n) && n >= 9 && n <= 2400) return n;
  } else if (typeof v === 'string' && leaf.includes(v.trim().toLowerCase())) {
    return v.trim().toLowerCase();
  }
  return fail(path, v);
}

/** Validates a pdfRest profile against the schema: an unknown key or a bad value is a 400 naming its path. */
export function parsePdfRestProfile(raw: unknown): PdfRestProfile {
  const out: PdfRestProfile = new Map();
  const walk = (value: unknown, spec: Spec, prefix: string) => {
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      if (!prefix) throw new AppError('out_of_range', 'The compression profile must be a JSON object');
      return fail(prefix, value);
    }
    for (const [k, v] of Object.entries(value)) {
      const path = prefix ? `${prefix}.${k}` : k;
      if (!Object.hasOwn(spec, k)) throw new AppError('out_of_range', `${path} is not a known key of the compression profile`);
      const s = spec[k];
      if (typeof s === 'string' || Array.isArray(s)) out.set(path, leafValue(path, s as Leaf, v));
      else walk(v, s as Spec, path);
    }
  };
  walk(raw, PDFREST_SCHEMA, '');
  if (!out.has('cleanup.compression'))
    throw new AppError(
      'out_of_range',
      'cleanup.compression is required in the compression profile (compress-entire-file, compress-document-structure or remove-compression)',
    );
  for (const cls of ['color', 'grayscale', 'monochrome']) {
    const trigger = out.get(`images.${cls}.downsample.trigger-dpi`) as number | undefined;
    const target = out.get(`images.${cls}.downsample.target-dpi`) as number | undefined;
    if ((trigger === undefined) !== (target === undefined)) {
      const missing = trigger === undefined ? 'trigger-dpi' : 'target-dpi';
      throw new AppError('out_of_range', `images.${cls}.downsample.${missing} is required with images.${cls}.downsample`);
    }
    if (trigger !== undefined && target !== undefined && trigger < target) {
      throw new AppError('out_of_range', `images.${cls}.downsample.trigger-dpi (${trigger}) must not be below images.${cls}.downsample.target-dpi (${target})`);
    }
    if (out.has(`images.${cls}.recompress.quality`) && !out.has(`images.${cls}.recompress.type`)) {
      throw new AppError('out_of_range', `images.${cls}.recompress.type is required with images.${cls}.recompress`);
    }
  }
  return out;
}

/** Distiller's JPEG quality steps (QFactor 2.4, 1.3, 0.76, 0.4, 0.15) on Quire's 1-100 scale (see qFactor). */
export const JPEG_QUALITY = { minimum: 1, low: 49, medium: 73, high: 89, maximum: 100 } as const;

/** What Quire does with a pdfRest profile: Ghostscript settings (or none), the qpdf pass, and the keys not honoured. */
export interface PdfRestPlan {
  gs: PdfwriteOptions | null;
  /** Objects removed by the final qpdf pass. */
  discard: Discard;
  qpdf: QpdfJob;
  /** Keep the input's PDF version (else at least 1.7). */
  preserveVersion: boolean;
  writeEvenIfLarger: boolean;
  /** Key paths (with their values where it matters) that Quire cannot honour. */
  notApplied: string[];
}

export interface Discard {
  javascript?: boolean;
  alternateImages?: boolean;
  thumbnails?: boolean;
  tags?: boolean;
  bookmarks?: boolean;
  outputIntents?: boolean;
  annotations?: boolean;
  metadata?: boolean;
  attachments?: boolean;
  externalLinks?: boolean;
  privateData?: boolean;
}

const CLASSES = [
  ['color', 'Color'],
  ['grayscale', 'Gray'],
  ['monochrome', 'Mono'],
] as const;

/** Maps each key onto Ghostscript pdfwrite and qpdf, listing what neither can do. */
export function pdfRestPlan(p: PdfRestProfile): PdfRestPlan {
  const on = (k: string) => p.get(k) === true;
  const notApplied: string[] = [];
  const images: NonNullable<PdfwriteOptions['images']> = { thresholds: {}, filters: {}, qualities: {} };
  let gsNeeded = false;
  for (const [cls, kind] of CLASSES) {
    const target = p.get(`images.${cls}.downsample.target-dpi`) as number | undefined;
    const trigger = p.get(`images.${cls}.downsample.trigger-dpi`) as number | undefined;
    if (target !== undefined && trigger !== undefined) {
      gsNeeded = true;
      if (kind === 'Color') images.colorDpi = target;
      if (kind === 'Gray') images.grayDpi = target;
      if (kind === 'Mono') images.monoDpi = target;
      images.thresholds![kind] = Math.max(1, trigger / target);
    }
    const type = p.get(`images.${cls}.recompress.type`) as (typeof TYPES)[number] | undefined;
    const quality = p.get(`images.${cls}.recompress.quality`) as (typeof QUALITIES)[number] | undefined;
    if (!type || type === 'same') continue;
    const key = `images.${cls}.recompress.type=${type}`;
    if (type === 'jpeg2000' || type === 'jbig2') {
      notApplied.push(key); // pdfwrite has no JPX or JBIG2 encoder
      continue;
    }
    if (kind === 'Mono') {
      if (type === 'zip') {
        images.filters!.Mono = 'FlateEncode';
        gsNeeded = true;
      } else notApplied.push(key); // JPEG is not a bilevel encoding
      continue;
    }
    gsNeeded = true;
    images.filters![kind] = type === 'zip' ? 'FlateEncode' : type === 'jpeg' ? 'DCTEncode' : 'auto';
    if (type !== 'zip' && quality) {
      if (quality === 'lossless' || quality === 'lossy') notApplied.push(`images.${cls}.recompress.quality=${quality}`);
      else images.qualities![kind as 'Color' | 'Gray'] = JPEG_QUALITY[quality];
    }
  }
  if (on('images.optimize-images-only-if-reduction-in-size')) notApplied.push('images.optimize-images-only-if-reduction-in-size');
  if (on('images.down-convert-16-to-8-bpc-images')) notApplied.push('images.down-convert-16-to-8-bpc-images');
  const dedupe = on('images.consolidate-duplicate-objects') || on('images.consolidate-duplicate-image-and-forms');
  if (dedupe) gsNeeded = true;

  const subset = on('fonts.subset-embedded-fonts') || on('fonts.resubset-subset-fonts');
  if (subset || on('fonts.consolidate-duplicate-fonts')) gsNeeded = true; // pdfwrite re-embeds each font once, subset to the glyphs used
  if (on('fonts.unembed-standard-14-fonts')) notApplied.push('fonts.unembed-standard-14-fonts');

  const discard: Discard = {
    javascript: on('objects.discard-javascript-actions'),
    alternateImages: on('objects.discard-alternate-images'),
    thumbnails: on('objects.discard-thumbnails'),
    tags: on('objects.discard-document-tags'),
    bookmarks: on('objects.discard-bookmarks'),
    outputIntents: on('objects.discard-output-intent'),
    annotations: on('userdata.discard-comments-forms-multimedia'),
    metadata: on('userdata.discard-document-information-and-metadata'),
    attachments: on('userdata.discard-file-attachments'),
    externalLinks: on('userdata.discard-external-crossreferences'),
    privateData: on('userdata.discard-private-data'),
  };
  if (on('userdata.discard-xmp-metadata-padding') && !discard.metadata) notApplied.push('userdata.discard-xmp-metadata-padding');
  if (on('userdata.discard-hidden-layer-content')) notApplied.push('userdata.discard-hidden-layer-content');

  const compression = p.get('cleanup.compression') as string;
  const qpdf: QpdfJob = { removeUnreferencedResources: on('fonts.remove-unused-fonts') ? 'yes' : 'auto' };
  if (compression === 'remove-compression') {
    Object.assign(qpdf, { objectStreams: 'disable', compressStreams: 'n', decodeLevel: 'generalized' });
    for (const k of ['cleanup.flate-encode-uncompressed-streams', 'cleanup.convert-lzw-to-flate'])
      if (on(k)) notApplied.push(`${k} (cleanup.compression=remove-compression)`);
  } else {
    Object.assign(qpdf, { objectStreams: 'generate', compressStreams: 'y' });
    // compress-entire-file also recompresses every Flate stream at level 9; LZW and uncompressed streams become Flate.
    if (compression === 'compress-entire-file') Object.assign(qpdf, { recompressFlate: '', compressionLevel: '9' });
    if (on('cleanup.convert-lzw-to-flate') || compression === 'compress-entire-file') qpdf.decodeLevel = 'generalized';
  }
  if (on('cleanup.optimize-for-fast-web-view')) qpdf.linearize = '';
  if (on('cleanup.optimize-page-content') && !gsNeeded) notApplied.push('cleanup.optimize-page-content');

  if (p.get('color-conversion.enabled') === true) {
    notApplied.push(
      `color-conversion (${p.get('color-conversion.color-convert-action') ?? 'convert'} to ${p.get('color-conversion.convert-profile') ?? 'no profile'})`,
    );
  }
  if (p.get('pdfa-conversion.enabled') === true) notApplied.push(`pdfa-conversion (type ${p.get('pdfa-conversion.type') ?? '?'})`);
  const transparency = p.get('transparency.quality') ?? p.get('quality');
  if (transparency !== undefined) notApplied.push(`transparency.quality=${transparency}`);

  const gs: PdfwriteOptions | null = gsNeeded
    ? {
        images: images.colorDpi || images.grayDpi || images.monoDpi || Object.keys(images.filters!).length ? images : undefined,
        subsetFonts: subset ? true : undefined,
        detectDuplicateImages: dedupe ? true : undefined,
      }
    : null;
  if (gs && !gs.images) {
    // Without image settings pdfwrite still applies its defaults (no downsampling is its default too): keep images as they are.
    gs.images = { thresholds: {}, filters: {}, qualities: {} };
  }
  return {
    gs,
    discard,
    qpdf,
    preserveVersion: on('general.preserve-version'),
    writeEvenIfLarger: on('general.write-output-even-if-increase-in-size'),
    notApplied,
  };
}

type Obj = Record<string, unknown>;
const isDict = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);
const EXTERNAL = new Set(['/URI', '/GoToR', '/Launch', '/GoToE', '/ImportData', '/SubmitForm']);

/**
 * The objects of a qpdf JSON v2 dump (no stream data) changed so that what `d` names is gone; returns only the
 * changed objects, in the update format. Walks every dictionary, nested ones included.
 */
export function discardUpdates(objects: Record<string, { value?: unknown; stream?: { dict: Obj } }>, d: Discard): Record<string, unknown> {
  const get = (v: unknown): unknown => (isRef(v) ? (objects[`obj:${v}`]?.value ?? objects[`obj:${v}`]?.stream?.dict) : v);
  const subtype = (v: unknown) => (isDict(get(v)) ? (get(v) as Obj)['/Subtype'] : undefined);
  const action = (v: unknown) => (isDict(get(v)) ? (get(v) as Obj)['/S'] : undefined);
  const trailer = objects.trailer?.value as Obj | undefined;
  const rootRef = trailer?.['/Root'];
  const infoRef = trailer?.['/Info'];
  const namesRef = isDict(get(rootRef)) ? (get(rootRef) as Obj)['/Names'] : undefined;
  const changed: Record<string, unknown> = {};

  const clean = (dict: Obj, opts: { root: boolean; names: boolean }): boolean => {
    let dirty = false;
    const del = (k: string) => {
      if (k in dict) {
        delete dict[k];
        dirty = true;
      }
    };
    if (d.javascript) {
      del('/AA');
      for (const k of ['/A', '/OpenAction']) if (action(dict[k]) === '/JavaScript') del(k);
      if (dict['/S'] === '/JavaScript' && '/Next' in dict) del('/Next');
      if (opts.names) del('/JavaScript');
    }
    if (d.externalLinks && EXTERNAL.has(action(dict['/A']) as string)) del('/A');
    if (d.metadata) del('/Metadata');
    if (d.thumbnails) del('/Thumb');
    if (d.alternateImages) del('/Alternates');
    if (d.privateData) del('/PieceInfo');
    if (d.outputIntents) del('/OutputIntents');
    if (d.tags) {
      del('/StructParents');
      del('/StructParent');
    }
    if (opts.root) {
      if (d.bookmarks) {
        del('/Outlines');
        if (dict['/PageMode'] === '/UseOutlines') del('/PageMode');
      }
      if (d.tags) {
        del('/StructTreeRoot');
        del('/MarkInfo');
      }
      if (d.annotations) del('/AcroForm');
      if (d.attachments) del('/AF');
    }
    if (opts.names && d.attachments) del('/EmbeddedFiles');
    if (d.annotations && dict['/Type'] === '/Page') del('/Annots');
    else if (d.attachments && Array.isArray(get(dict['/Annots']))) {
      const annots = get(dict['/Annots']) as unknown[];
      const kept = annots.filter((a) => subtype(a) !== '/FileAttachment');
      if (kept.length !== annots.length) {
        dict['/Annots'] = kept;
        dirty = true;
      }
    }
    for (const v of Object.values(dict)) {
      if (isDict(v)) dirty = clean(v, { root: false, names: false }) || dirty;
      else if (Array.isArray(v)) for (const x of v) if (isDict(x)) dirty = clean(x, { root: false, names: false }) || dirty;
    }
    return dirty;
  };

  for (const [key, o] of Object.entries(objects)) {
    if (!key.startsWith('obj:')) continue;
    const ref = key.slice(4);
    const opts = { root: ref === rootRef, names: ref === namesRef };
    if (d.metadata && ref === infoRef) {
      changed[key] = { value: {} };
      continue;
    }
    if (o.stream) {
      const dict = structuredClone(o.stream.dict);
      if (clean(dict, opts)) changed[key] = { stream: { dict } };
    } else if (isDict(o.value)) {
      const dict = structuredClone(o.value);
      if (isDict(dict['/Names']) && opts.root) clean(dict['/Names'] as Obj, { root: false, names: true });
      if (clean(dict, opts)) changed[key] = { value: dict };
    }
  }
  return changed;
}

/** The PDF version in a file's header ("1.4"), or undefined. */
async function headerVersion(path: string): Promise<string | undefined> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(1024);
    const { bytesRead } = await fh.read(buf, 0, 1024, 0);
    return /%PDF-(\d\.\d)/.exec(buf.subarray(0, bytesRead).toString('latin1'))?.[1];
  } finally {
    await fh.close();
  }
}

/**
 * The final qpdf pass of a pdfRest profile: objects unpacked (qpdf 11.3's --update-from-json loses changes to
 * objects in object streams), what the profile discards removed through a JSON update, then written with the
 * profile's compression and linearization.
 */
export async function pdfRestQpdfPass(input: string, output: string, plan: PdfRestPlan, ctx: EngineContext): Promise<void> {
  const job: QpdfJob = { ...plan.qpdf, inputFile: input, outputFile: output };
  if (!plan.preserveVersion) job.minVersion = '1.7';
  if (Object.values(plan.discard).some(Boolean)) {
    const unpacked = join(ctx.cwd, `unpacked-${randomUUID()}.pdf`);
    await runJob({ inputFile: input, outputFile: unpacked, objectStreams: 'disable' }, ctx);
    await expectOutput('qpdf', unpacked);
    const r = await run('qpdf', ['--json', '--json-key=qpdf', '--json-stream-data=none', '--', unpacked], { ...ctx, okExitCodes: [3] });
    const objects = (JSON.parse(r.stdout) as { qpdf: [unknown, Record<string, { value?: unknown; stream?: { dict: Obj } }>] }).qpdf[1];
    const updates = discardUpdates(objects, plan.discard);
    job.inputFile = unpacked;
    if (Object.keys(updates).length) {
      const file = join(ctx.cwd, `.discard-${randomUUID()}.json`);
      await writeFile(file, JSON.stringify({ qpdf: [{ jsonversion: 2 }, updates] }));
      job.updateFromJson = file;
    }
  }
  await runJob(job, ctx);
  await expectOutput('qpdf', output);
}

/** A pdfRest profile's Ghostscript settings with the version it asks for (preserve-version: the input's). */
export async function pdfRestGs(input: string, plan: PdfRestPlan): Promise<PdfwriteOptions | null> {
  if (!plan.gs) return null;
  const version = plan.preserveVersion ? await headerVersion(input) : '1.7';
  const ok = ['1.3', '1.4', '1.5', '1.6', '1.7', '2.0'] as const;
  const compatibility = ok.find((v) => v === version);
  return { ...plan.gs, ...(compatibility ? { compatibility } : {}) };
}

export const PDFREST_PROFILE_DOC =
  'sections images, fonts, objects, userdata, cleanup (cleanup.compression required: compress-entire-file | compress-document-structure | remove-compression), ' +
  'general, color-conversion, pdfa-conversion, transparency; lower-case keys, booleans true/false or "on"/"off", every setting off unless present, unknown keys refused naming their path. ' +
  'images.{color,grayscale,monochrome}.downsample.{trigger-dpi,target-dpi} -> Ghostscript downsampling to target-dpi with threshold trigger/target; ' +
  'recompress.type zip -> Flate, jpeg -> JPEG (quality minimum|low|medium|high|maximum = Distiller QFactor 2.4|1.3|0.76|0.4|0.15), zip-jpeg -> Ghostscript chooses per image, same -> kept; ' +
  'fonts subset/resubset/consolidate -> Ghostscript rewrite (fonts subset, each written once); fonts.remove-unused-fonts -> qpdf --remove-unreferenced-resources=yes; ' +
  'objects.* and userdata.discard-{comments-forms-multimedia,document-information-and-metadata,file-attachments,external-crossreferences,private-data} -> removed by qpdf (JavaScript actions, /Alternates, /Thumb, /StructTreeRoot, /Outlines, /OutputIntents, annotations and /AcroForm, /Info and /Metadata, /EmbeddedFiles, external link actions, /PieceInfo); ' +
  'cleanup -> qpdf object streams, Flate level 9, LZW to Flate, --compress-streams=n for remove-compression, linearization for optimize-for-fast-web-view; ' +
  'general.write-output-even-if-increase-in-size answers the output even when larger; general.preserve-version keeps the input version (else at least 1.7). ' +
  'Listed in warning as not applied: recompress jpeg2000/jbig2 (and JPEG for monochrome), quality lossless/lossy with jpeg, optimize-images-only-if-reduction-in-size, down-convert-16-to-8-bpc-images, ' +
  'fonts.unembed-standard-14-fonts, discard-xmp-metadata-padding (unless the metadata is discarded), discard-hidden-layer-content, optimize-page-content without a Ghostscript pass, color-conversion and pdfa-conversion when enabled, transparency quality.';
