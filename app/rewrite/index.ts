/**
 * Whole-document rewrites through Ghostscript and qpdf whose result is checked afterwards: compression (levels
 * and custom profiles, never larger than the input) and standards output (PDF/A, PDF/X: claims, OutputIntents and
 * XMP read back and fixed), sanitizing (active and hidden content removed at the object level, written again by qpdf),
 * files attached (refused where the PDF/A part claimed prohibits them), and flattening (form fields, annotations,
 * layers, transparency drawn into the page content by Ghostscript).
 */
export * from './attach.js';
export * from './cmyk-batches.js';
export * from './colors.js';
export * from './compression.js';
export * from './flatten.js';
export * from './linearize.js';
export * from './pdfa.js';
export * from './pdfx.js';
export * from './sanitize.js';
export * from './standards.js';
