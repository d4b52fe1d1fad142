/**
 * The document as Quire reads it. Access to input PDFs (open, unlock with a password, repair, write back; a
 * password-protected input is a 401, an unreadable one a 400; passwords and restrictions set and removed),
 * read-only navigation over qpdf's object dump, the one page-selection grammar, paper sizes, and the page model
 * every text-reading endpoint shares: words with geometry and style from MuPDF's structured text, grouped into
 * rows, columns, tables, paragraphs, headings and lists in reading order; what /pdf-info answers about a file
 * (pdf-info.ts) and the images of pages as stored (images.ts). Other domains build on it; it depends on engines only.
 */
export { bidi } from './bidi.js';
export * from './destinations.js';
export * from './images.js';
export * from './layout.js';
export * from './links.js';
export * from './markdown.js';
export * from './page-sizes.js';
export * from './pages.js';
export * from './pdf-access.js';
export { PDF_INFO_QUERIES, pdfInfo } from './pdf-info.js';
export * from './pdf-objects.js';
export * from './read-budgets.js';
export * from './read-chain.js';
export * from './read-markdown.js';
export * from './read-pdf.js';
export * from './repair.js';
export * from './security.js';
export * from './unreadable.js';
