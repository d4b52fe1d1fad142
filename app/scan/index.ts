/**
 * Scan clean-up: how much of a page is ink once a scanner's noise and dark edges are ignored (blank pages),
 * separator sheets (blank, or a barcode read by zbar) and the groups of pages between them, and straightening
 * scanned pages (skew measured by projection profiles, the image turned back, optionally cleaned by unpaper,
 * text layers made again). Pages are drawn through app/render; the PDF is rewritten with qpdf.
 */
export * from './blank.js';
export * from './deskew.js';
export * from './ink.js';
export type { GreyImage } from './pixels.js';
export * from './separate.js';
export * from './separators.js';
export * from './skew.js';
