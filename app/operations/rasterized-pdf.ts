import { readableXfa } from '../forms/index.js';
import { rasterizedPdf } from '../render/index.js';
import { output } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';

/** Enough for reading and printing text, small enough that a page costs ~100-300 KB. */
const RESOLUTION = 150;

export default operation({
  path: '/rasterized-pdf',
  tag: 'Optimisation, colour and page geometry',
  summary: 'Flatten every page to an image',
  description: `Each page becomes one anti-aliased RGB image at ${RESOLUTION} dpi (lossless Flate) on a page of the same size as displayed (a /Rotate is baked into the image); no text, vectors, links or form fields remain. A dynamic XFA form is rasterized as pdf.js lays it out from its template and data (said in warning), not as its placeholder page.`,
  inputs: pdfInput(),
  fields: { output: output() },
  output: 'file',
  engines: ['ghostscript', 'mupdf', 'qpdf'],
  run: async ({ input, dir, signal, timeoutMs, outputName, limits }) => {
    const { path: source, warning } = await readableXfa(input.path, { dir, signal, timeoutMs, limits });
    const path = await rasterizedPdf(source, RESOLUTION, dir, { cwd: dir, signal, timeoutMs });
    return { files: [{ path, name: `${outputName}.pdf` }], warning };
  },
});
