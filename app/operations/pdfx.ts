import { AppError } from '../errors.js';
import { output, text } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';
import { CMYK_BATCH_PAGES, PDFX_FLATTEN_DPI as FLATTEN_DPI, type PdfxType, PDFX_TYPES as TYPES, toPdfx } from '../rewrite/index.js';

const NAMES = Object.keys(TYPES) as PdfxType[];

export default operation({
  path: '/pdfx',
  tag: 'Conversion to PDF and standards',
  summary: 'Convert a PDF to PDF/X',
  description:
    `output_type: ${NAMES.join(', ')} (exactly as written). Every output: colours converted to DeviceCMYK, fonts embedded, a GTS_PDFX OutputIntent carrying Ghostscript's CMYK (SWOP) profile ` +
    '(identifier Custom), GTS_PDFXVersion in the Info dictionary (X-6: in XMP only; Ghostscript writes no Info for PDF 2.0), Trapped False, and a TrimBox and BleedBox on every page (the crop box where the input sets none). ' +
    `PDF/X-1a (PDF/X-1a:2001, also GTS_PDFXConformance) and PDF/X-3 (PDF/X-3:2002) come from Ghostscript's -dPDFX: PDF 1.3, so pages with transparency are flattened to a ${FLATTEN_DPI} dpi image (their text is no longer text). ` +
    'Ghostscript 10.00 writes no PDF/X-4 or X-6 itself: those are Ghostscript CMYK output at PDF 1.6 (X-4) or 2.0 (X-6), transparency kept, labelled by us with the version in Info and ' +
    'in XMP (pdfxid:GTS_PDFXVersion, with the media-management keys PDF/X-4 requires). Outputs are not checked by a PDF/X validator (none is packaged in Debian). ' +
    `Documents of more than ${CMYK_BATCH_PAGES} pages are converted ${CMYK_BATCH_PAGES} pages per Ghostscript run (its CMYK conversion holds memory for every page) and joined by qpdf, the outline and internal links kept; each run embeds its own font subsets.`,
  inputs: pdfInput(),
  fields: {
    output_type: text().meta({ type: 'string', enum: NAMES }),
    output: output(),
  },
  output: 'file',
  engines: ['ghostscript', 'qpdf'],
  check: (f) => {
    if (!(f.output_type in TYPES))
      throw new AppError('out_of_range', `${f.output_type} is not within the acceptable range for output_type: one of ${NAMES.join(', ')}`);
  },
  run: async ({ fields, input, dir, signal, timeoutMs, outputName }) => {
    const path = await toPdfx(input.path, fields.output_type as PdfxType, dir, { cwd: dir, signal, timeoutMs });
    return { files: [{ path, name: `${outputName}.pdf` }] };
  },
});
