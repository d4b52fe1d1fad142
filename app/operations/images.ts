import { resolvePages } from '../document/index.js';
import { readableXfa } from '../forms/index.js';
import { type ColorModel, checkPixelBudget, type ImageFormat, openForRendering, PIXEL_CAP_DOC, renderImages } from '../render/index.js';
import { int, list, oneOf, output, pages } from '../requests/fields.js';
import { operation, pdfInput, perCore } from '../requests/operation.js';

/** The five image converters (spec 4.4): one declaration each, sharing everything but the format and its colour models. */

const SMOOTHING = ['none', 'all', 'text', 'line', 'image'] as const;

/** BMP and RGB/gray JPEG come from Ghostscript's own devices (faster there), the rest from MuPDF: see lib/render.ts. */
const GS_SMOOTHING =
  'smoothing: none (the default) draws without anti-aliasing and images without interpolation; text anti-aliases glyphs, line anti-aliases line art, image interpolates every image, all does the three; each kind only its own.';
const MUPDF_SMOOTHING =
  'smoothing: none (the default) draws without anti-aliasing; text, line, image or all turn on anti-aliasing (MuPDF smooths text, line art and image edges together, so any of them smooths all three; image content is always resampled smoothly).';
const SMOOTHING_DOC: Record<ImageFormat, string> = {
  bmp: GS_SMOOTHING,
  jpg: `${GS_SMOOTHING} (For cmyk, drawn by MuPDF: ${MUPDF_SMOOTHING.replace('smoothing: ', '')})`,
  png: MUPDF_SMOOTHING,
  gif: MUPDF_SMOOTHING,
  tif: MUPDF_SMOOTHING,
};

const FORMATS: { path: string; format: ImageFormat; models: [ColorModel, ...ColorModel[]]; name: string; notes: string }[] = [
  { path: '/bmp', format: 'bmp', models: ['rgb', 'gray'], name: 'BMP', notes: 'rgb is 24-bit, gray 8-bit with a grey palette; DPI in the header.' },
  { path: '/jpg', format: 'jpg', models: ['rgb', 'cmyk', 'gray'], name: 'JPEG', notes: 'cmyk is a 4-channel CMYK JPEG; DPI in the JFIF header.' },
  {
    path: '/png',
    format: 'png',
    models: ['rgb', 'rgba', 'gray'],
    name: 'PNG',
    notes: 'rgba has a transparent background where the page has no content; DPI in pHYs.',
  },
  {
    path: '/gif',
    format: 'gif',
    models: ['rgb', 'gray'],
    name: 'GIF',
    notes: 'Palette of up to 256 colours, no dithering; GIF has no field for the resolution.',
  },
  {
    path: '/tif',
    format: 'tif',
    models: ['rgb', 'rgba', 'cmyk', 'lab', 'gray'],
    name: 'TIFF',
    notes: 'Deflate-compressed; cmyk is a separated (CMYK) TIFF, lab an 8-bit CIELAB TIFF (D50); DPI in the resolution tags.',
  },
];

const XFA_DOC = 'A dynamic XFA form is rendered as pdf.js lays it out from its template and data (said in `warning`), not as its placeholder page.';

const converter = ({ path, format, models, name, notes }: (typeof FORMATS)[number]) =>
  operation({
    path,
    tag: 'Conversion to images',
    summary: `Render PDF pages to ${name} images`,
    description: `One ${name} per selected page, named <output>_<n>.${format} in the order of pages. ${notes} ${XFA_DOC} ${SMOOTHING_DOC[format]} ${PIXEL_CAP_DOC}`,
    inputs: pdfInput(),
    fields: {
      pages: pages(),
      resolution: int(12, 2400, 300),
      color_model: oneOf(models, 'rgb'),
      smoothing: list(SMOOTHING).optional(),
      ...(format === 'jpg' ? { jpeg_quality: int(1, 100, 75) } : {}),
      output: output(),
    },
    output: 'files',
    produces: [format],
    engines: ['mupdf', 'qpdf'],
    cost: perCore,
    run: async ({ fields, input, dir, signal, timeoutMs, progress, outputName, limits }) => {
      // A dynamic XFA form is rendered as laid out, not as its placeholder page.
      const { path: source, warning } = await readableXfa(input.path, { dir, signal, timeoutMs, limits });
      const { boxes } = await openForRendering(source, { cwd: dir, signal, timeoutMs });
      const selected = resolvePages(fields.pages, boxes.length);
      checkPixelBudget(boxes, selected, fields.resolution);
      const files = await renderImages(
        {
          input: source,
          boxes,
          pages: selected,
          format,
          colorModel: fields.color_model as ColorModel,
          resolution: fields.resolution,
          jpegQuality: (fields as { jpeg_quality?: number }).jpeg_quality,
          smoothing: fields.smoothing,
        },
        { dir, signal, timeoutMs, progress },
      );
      return { files: files.map((path, i) => ({ path, name: `${outputName}_${i + 1}.${format}` })), warning };
    },
  });

export default FORMATS.map(converter);
