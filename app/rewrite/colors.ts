/**
 * Colour conversion into an ICC profile with Ghostscript pdfwrite: the named presets and where their profiles come
 * from, the checks an uploaded profile must pass, and the Lab D50 output pdfwrite cannot write directly.
 */
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EngineContext } from '../../engines/context.js';
import { type ColorFamily, GS_ICC_DIR, outputIntentProlog, rewritePdf } from '../../engines/ghostscript-pdfwrite.js';
import { openPdf, withinPageBudget } from '../document/index.js';
import { AppError } from '../errors.js';
import { rewriteAnyLength } from './cmyk-batches.js';

/** colord-data's profiles (Debian package colord-data, listed in scripts/apt-packages.txt). */
const COLORD = '/usr/share/color/icc/colord';
/**
 * Quire's generated profiles (engines/icc, made by scripts/make-icc-profiles.mjs from their definitions and from the
 * CGATS/Fogra characterisation data of Debian icc-profiles-free); next to the sources, or next to dist/ in the image.
 */
const OWN =
  [new URL('../../engines/icc/', import.meta.url), new URL('../../../engines/icc/', import.meta.url)]
    .map((u) => fileURLToPath(u))
    .find((d) => existsSync(join(d, 'lab-d50.icc'))) ?? fileURLToPath(new URL('../../engines/icc/', import.meta.url));

/** lab: colours become CIELAB D50 values, written as ICCBased colour spaces with the Lab D50 profile (two passes). */
type Preset = { file: string; family: ColorFamily; name: string; lab?: boolean } | { unavailable: string };

/** Every name of the spec and the profile that stands for it (README: "/pdf-with-converted-colors"). */
export const COLOR_PRESETS: Record<string, Preset> = {
  srgb: { file: `${GS_ICC_DIR}/srgb.icc`, family: 'RGB', name: 'sRGB IEC61966-2.1 (Ghostscript srgb.icc)' },
  'vendor-rgb': { file: `${COLORD}/AppleRGB.icc`, family: 'RGB', name: 'Apple RGB (colord-data AppleRGB.icc)' },
  'color-match-rgb': { file: `${COLORD}/ColorMatchRGB.icc`, family: 'RGB', name: 'ColorMatch RGB (colord-data ColorMatchRGB.icc)' },
  'monitor-rgb': { file: `${COLORD}/sRGB.icc`, family: 'RGB', name: 'sRGB display profile (colord-data sRGB.icc)' },
  'gamma-18': { file: join(OWN, 'gray-gamma-1.8.icc'), family: 'Gray', name: 'Gray Gamma 1.8 (Quire engines/icc)' },
  'gamma-22': { file: join(OWN, 'gray-gamma-2.2.icc'), family: 'Gray', name: 'Gray Gamma 2.2 (Quire engines/icc)' },
  ...Object.fromEntries(
    [10, 15, 20, 25, 30].map((n) => [
      `dot-gain-${n}`,
      { file: join(OWN, `dot-gain-${n}.icc`), family: 'Gray', name: `Dot Gain ${n}% grey (Quire engines/icc)` },
    ]),
  ),
  'lab-d50': { file: join(OWN, 'lab-d50.icc'), family: 'RGB', lab: true, name: 'Lab D50 (CIELAB values, Quire engines/icc)' },
  'viewer5-cmyk': {
    file: join(OWN, 'swop-tr003.icc'),
    family: 'CMYK',
    name: 'U.S. Web Coated SWOP, CGATS TR 003 (Acrobat 5 CMYK stand-in, ArgyllCMS from Debian icc-profiles-free)',
  },
  'viewer9-cmyk': {
    file: join(OWN, 'fogra39.icc'),
    family: 'CMYK',
    name: 'Coated FOGRA39, ISO 12647-2:2004 (Acrobat 9 CMYK stand-in, ArgyllCMS from Debian icc-profiles-free)',
  },
  custom: { unavailable: 'profile or profile_id is required when color_profile is custom' },
};
export const COLOR_PRESET_NAMES = Object.keys(COLOR_PRESETS) as [string, ...string[]];

const FAMILIES: Record<string, ColorFamily> = { 'RGB ': 'RGB', CMYK: 'CMYK', GRAY: 'Gray' };
const COMPONENTS = { RGB: 3, CMYK: 4, Gray: 1 } as const;

/** The colour family of an ICC profile usable as a conversion target, or a 400 naming the profile. */
export function iccTarget(b: Buffer): ColorFamily {
  const bad = (why: string) => new AppError('out_of_range', `The profile is not a usable ICC output profile: ${why}`);
  if (b.length < 132 || b.toString('latin1', 36, 40) !== 'acsp') throw bad('no ICC header');
  if (b.readUInt32BE(0) > b.length) throw bad(`it is truncated: its header declares ${b.readUInt32BE(0)} bytes, the file has ${b.length}`);
  const family = FAMILIES[b.toString('latin1', 16, 20)];
  if (!family) throw bad(`its colour space is ${b.toString('latin1', 16, 20).trim()}, not RGB, CMYK or grey`);
  const cls = b.toString('latin1', 12, 16);
  if (!['mntr', 'prtr', 'scnr', 'spac'].includes(cls)) throw bad(`its device class is ${cls}`);
  const tags = new Set<string>();
  const n = b.readUInt32BE(128);
  if (132 + n * 12 > b.length) throw bad(`it is truncated: its tag table lists ${n} tags`);
  for (let i = 0; i < n; i++) {
    const at = 132 + i * 12;
    // A tag whose data lies past the end would have Ghostscript read beyond the profile.
    if (b.readUInt32BE(at + 4) + b.readUInt32BE(at + 8) > b.length)
      throw bad(`its tag ${b.toString('latin1', at, at + 4).trim()} lies past the end of the file`);
    tags.add(b.toString('latin1', at, at + 4));
  }
  // Converting into a profile needs its PCS-to-device direction: a B2A table, or the matrix/curves of RGB and grey.
  const invertible = tags.has('B2A0') || (family === 'RGB' && tags.has('rTRC') && tags.has('rXYZ')) || (family === 'Gray' && tags.has('kTRC'));
  if (!invertible) throw bad('it has no PCS-to-device table (B2A0), so colours cannot be converted into it');
  return family;
}

/** A profile to convert into: a preset's, or an uploaded one (its family read by iccTarget). */
export type ColorTarget = { file: string; family: ColorFamily; name: string; lab?: boolean };

/**
 * `input` with every colour converted into `target` by Ghostscript pdfwrite, the profile embedded as the OutputIntent
 * (lab: as ICCBased spaces, see below); the path of the result in `dir`.
 */
export async function convertColors(input: string, target: ColorTarget, preserveBlack: boolean, dir: string, ctx: EngineContext): Promise<string> {
  const { pageCount } = await openPdf(input, ctx);

  // pdfwrite converts into its default profile of the target family: a profiles dir of the job where that
  // default is the target (Ghostscript 10.00 ignores -sOutputICCProfile for pdfwrite).
  const icc = join(dir, 'icc');
  await mkdir(icc);
  const defaults = { RGB: 'default_rgb.icc', CMYK: 'default_cmyk.icc', Gray: 'default_gray.icc' } as const;
  for (const f of await readdir(GS_ICC_DIR)) if (f !== defaults[target.family]) await symlink(join(GS_ICC_DIR, f), join(icc, f));
  await copyFile(target.file, join(icc, defaults[target.family]));

  const out = join(dir, 'converted.pdf');
  const opts = { iccDir: icc, preserveBlack: preserveBlack, readable: [target.file, icc] };
  if (target.lab) {
    // pdfwrite cannot write /Lab spaces. Pass 1 converts every colour into the Lab D50 profile, whose three
    // channels are L*, a*, b* (written as DeviceRGB numbers); pass 2 reads those DeviceRGB numbers as that profile
    // and writes them unchanged as ICCBased colour spaces embedding it (UseDeviceIndependentColor), so readers
    // see the right colours and the numbers are CIELAB D50. No OutputIntent: Lab is no output condition.
    const lab = join(dir, 'lab.pdf');
    const e1 = await withinPageBudget('Writing', 'writePageMs', ctx, (c) =>
      rewritePdf(input, lab, { ...opts, colorConversion: 'RGB' }, { ...c, pages: pageCount }),
    );
    const strategy = join(dir, 'strategy.ps');
    await writeFile(strategy, '%!\n<< /ColorConversionStrategy /UseDeviceIndependentColor >> setdistillerparams\n');
    const e2 = await withinPageBudget('Writing', 'writePageMs', ctx, (c) =>
      rewritePdf(lab, out, { iccDir: icc, readable: [icc], prologs: [strategy] }, { ...c, pages: pageCount }),
    );
    failedLink(e1.stderr + e2.stderr);
    return out;
  }
  const prolog = join(dir, 'intent.ps');
  await writeFile(
    prolog,
    outputIntentProlog({ profile: target.file, components: COMPONENTS[target.family], subtype: 'GTS_PDFA1', identifier: 'Custom', info: target.name }),
  );
  const { stderr } = await withinPageBudget('Writing', 'writePageMs', ctx, (c) =>
    rewriteAnyLength(input, out, { ...opts, colorConversion: target.family, prologs: [prolog] }, { ...c, pages: pageCount }),
  );
  failedLink(stderr);
  return out;
}

/** Ghostscript exits 0 and leaves colours out when it cannot build a transform from a profile. */
function failedLink(stderr: string): void {
  if (/failed to create ICC profile link|icc.*error/i.test(stderr)) {
    throw new AppError('out_of_range', 'The profile could not be used for the conversion (Ghostscript could not build a colour transform with it)');
  }
}
