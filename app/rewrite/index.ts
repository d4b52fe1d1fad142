/**
 * Whole-document rewrites through Ghostscript and qpdf whose result is checked afterwards: compression (levels
 * and custom profiles, never larger than the input) and standards output (PDF/A, PDF/X: claims, OutputIntents and
 * XMP read back and fixed).
 */
export * from './compression.js';
export * from './standards.js';
