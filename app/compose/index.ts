/**
 * New page content drawn by Quire: the font model (standard 14 fonts while text fits WinAnsi, else embedded
 * Liberation/DejaVu/Noto subsets with per-character fallbacks), text laid out in lines (wrapping, bidi, shaping),
 * and stamp pages that qpdf lays over or under existing pages so the original objects stay untouched. Watermarks,
 * added text and images, shapes and tables (laid out across continuation pages), form and signature appearances all
 * draw through here (page and Bates numbers too), tagged as marked content (artifacts, actual text) when asked.
 */
export * from './add-tables.js';
export * from './fonts.js';
export * from './image.js';
export * from './numbering.js';
export * from './shapes.js';
export * from './stamp.js';
export * from './table.js';
export * from './text-block.js';
export * from './watermark.js';
