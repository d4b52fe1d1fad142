/**
 * Pages as pixels: rendering plans for the image formats (MuPDF or Ghostscript, chosen by measured speed, pages
 * split into runs, one process per core) and OCR (the pages that need it drawn at scan resolution, read by one
 * Tesseract per core, text laid on the original pages).
 */
export type { ColorModel, ImageFormat } from '../../engines/images.js';
export * from './ocr.js';
export * from './parallel.js';
export * from './render.js';
export * from './whole.js';
