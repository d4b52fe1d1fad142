import { AppError } from '../errors.js';
import { onOff, output, text } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';
import { type PdfaType, PDFA_RASTER_DPI as RASTER_DPI, PDFA_TYPES as TYPES, toPdfa } from '../rewrite/index.js';

const NAMES = Object.keys(TYPES) as PdfaType[];

export default operation({
  path: '/pdfa',
  tag: 'Conversion to PDF and standards',
  summary: 'Convert a PDF to PDF/A',
  description:
    `output_type: ${NAMES.join(', ')}. Ghostscript pdfwrite (-dPDFA, PDFACompatibilityPolicy 1: features a part forbids are dropped, e.g. non-printing annotations, ` +
    "attachments in PDF/A-1/2, interpolation flags) converts colours to RGB with an sRGB OutputIntent (Ghostscript's srgb.icc), embeds every font (missing ones substituted) " +
    'and writes the XMP pdfaid:part/conformance. The output is read back: a missing pdfaid claim or OutputIntent is an error. u variants also need every font on a page to map to ' +
    'Unicode (ToUnicode CMap, or WinAnsi/MacRoman/MacExpert encoding; custom encodings without ToUnicode count as unmapped). rasterize_if_errors_encountered=on draws ' +
    `such pages (or the whole document when Ghostscript cannot convert it) as ${RASTER_DPI} dpi images and converts again; off answers 400 naming the pages. ` +
    'Not validated with veraPDF (not packaged in Debian 12).',
  inputs: pdfInput(),
  fields: {
    output_type: text().meta({ type: 'string', enum: NAMES }),
    rasterize_if_errors_encountered: onOff(false),
    output: output(),
  },
  output: 'file',
  engines: ['ghostscript', 'qpdf', 'poppler'],
  check: (f) => {
    if (!(f.output_type in TYPES))
      throw new AppError('out_of_range', `${f.output_type} is not within the acceptable range for output_type: one of ${NAMES.join(', ')}`);
  },
  run: async ({ fields, input, dir, signal, timeoutMs, outputName }) => {
    const ctx = { cwd: dir, signal, timeoutMs };
    const path = await toPdfa(input.path, fields.output_type as PdfaType, fields.rasterize_if_errors_encountered, dir, ctx);
    return { files: [{ path, name: `${outputName}.pdf` }] };
  },
});
