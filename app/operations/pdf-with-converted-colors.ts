import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AppError } from '../errors.js';
import { oneOf, output, trueFalse } from '../requests/fields.js';
import { operation } from '../requests/operation.js';
import { type ColorTarget, convertColors, iccTarget, COLOR_PRESET_NAMES as NAMES, COLOR_PRESETS as PRESETS } from '../rewrite/index.js';

export default operation({
  path: '/pdf-with-converted-colors',
  tag: 'Optimisation, colour and page geometry',
  summary: 'Convert the colours of a PDF to an ICC profile',
  description:
    "Ghostscript pdfwrite converts every colour to the family of the profile (RGB, CMYK or grey) with that profile as the destination of the conversion, and embeds it as the document's OutputIntent. " +
    'Profiles (README table): srgb (Ghostscript srgb.icc), vendor-rgb / apple-rgb (colord-data AppleRGB.icc), color-match-rgb (colord-data ColorMatchRGB.icc), monitor-rgb (colord-data sRGB.icc display profile), ' +
    'gamma-18 / gamma-22 (grey power curves 1.8 / 2.2), dot-gain-10..30 (grey with that dot gain at 50% tint), viewer5-cmyk / acrobat5-cmyk (SWOP, built from CGATS TR 003 data), ' +
    'viewer9-cmyk / acrobat9-cmyk (Coated FOGRA39, built from Fogra data), both with ArgyllCMS from Debian icc-profiles-free; lab-d50 writes CIELAB D50 values as ICCBased colour spaces with a Lab D50 profile (pdfwrite has no /Lab output). ' +
    'Limits of Ghostscript 10.00: colours already in the target family as device colours (DeviceRGB into an RGB profile, DeviceCMYK into a CMYK one) keep their values and are ' +
    "tagged with the profile by the OutputIntent; ICC-tagged colours of the same family keep their own profile. preserve_black=true sets Ghostscript's DeviceGrayToK (grey on the K plate only) and " +
    'lcms2 black-plane preservation for CMYK-to-CMYK (KPreserve=2); false turns both off. (Ghostscript 10.00 already writes pure black and DeviceGray content as grey, i.e. K only, in CMYK output.)',
  inputs: {
    file: { idField: 'id', kind: 'pdf', description: 'The PDF' },
    profile: { idField: 'profile_id', kind: 'any', required: false, description: 'ICC profile (color_profile=custom)' },
  },
  fields: {
    color_profile: oneOf(NAMES, undefined, { 'apple-rgb': 'vendor-rgb', 'acrobat5-cmyk': 'viewer5-cmyk', 'acrobat9-cmyk': 'viewer9-cmyk' }),
    preserve_black: trueFalse(false),
    output: output(),
  },
  output: 'file',
  engines: ['ghostscript', 'qpdf'],
  check: (f) => {
    const p = PRESETS[f.color_profile];
    if (f.color_profile !== 'custom' && 'unavailable' in p)
      throw new AppError('out_of_range', `color_profile ${f.color_profile} is not available: ${p.unavailable}`);
  },
  run: async ({ fields, inputs, input, dir, signal, timeoutMs, outputName }) => {
    const custom = inputs.profile?.[0];
    let target = PRESETS[fields.color_profile] as ColorTarget;
    if (fields.color_profile === 'custom') {
      if (!custom) throw new AppError('out_of_range', 'profile or profile_id is required when color_profile is custom');
      const bytes = await readFile(custom.path);
      const file = join(dir, 'custom.icc');
      await writeFile(file, bytes);
      target = { file, family: iccTarget(bytes), name: `Custom (${custom.name})` };
    }
    const path = await convertColors(input.path, target, fields.preserve_black, dir, { cwd: dir, signal, timeoutMs });
    return { files: [{ path, name: `${outputName}.pdf` }] };
  },
});
