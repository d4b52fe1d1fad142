import { copyFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { AppError } from '../errors.js';
import type { EngineContext } from '../../engines/context.js';
import { rewritePdf, type PdfwriteOptions } from '../../engines/ghostscript-pdfwrite.js';
import { EngineError } from '../../engines/errors.js';
import { runJob, type QpdfJob } from '../../engines/qpdf-edit.js';
import { expectOutput } from '../../engines/run.js';

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

/** Reads a profile; a bad one is a 400 naming the key. */
export function parseProfile(text: string): CompressionProfile {
  let raw: unknown;
  try {
    raw = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    throw new AppError('bad_json', 'JSON data provided is not properly formatted: the compression profile is not JSON');
  }
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
    p.color_image_dpi !== undefined || p.gray_image_dpi !== undefined || p.mono_image_dpi !== undefined || p.jpeg_quality !== undefined ||
    (p.image_compression !== undefined && p.image_compression !== 'auto') || p.grayscale || p.remove_annotations || p.remove_bookmarks ||
    p.subset_fonts !== undefined || p.compress_fonts !== undefined;
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
  opts: { settings: PdfwriteOptions | null; objectStreams: boolean; /** The lossless file may win over Ghostscript's (named levels; not a custom profile, whose settings are asked for). */ fallback: boolean },
  ctx: EngineContext & { pages: number },
): Promise<Compressed> {
  const { settings, objectStreams } = opts;
  const inputSize = (await stat(input)).size;
  const candidates: string[] = [];
  if (!settings || opts.fallback) {
    const qpdfOnly = join(dir, 'lossless.pdf');
    await runJob(losslessJob(input, qpdfOnly, objectStreams), ctx);
    await expectOutput('qpdf', qpdfOnly);
    candidates.push(qpdfOnly);
  }
  if (settings) {
    const gs = join(dir, 'rewritten.pdf');
    const rewritten = await rewritePdf(input, gs, settings, ctx).then(
      () => true,
      (err) => {
        // Ghostscript cannot read some files qpdf can (it wrote no pages): a named level keeps the lossless result.
        if (!opts.fallback || !(err instanceof EngineError) || err.details.aborted || err.details.timedOut) throw err;
        return false;
      },
    );
    if (rewritten) {
      const packed = join(dir, 'rewritten-packed.pdf');
      await runJob(losslessJob(gs, packed, objectStreams), ctx);
      await expectOutput('qpdf', packed);
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
