/**
 * PDF to office formats: the page model written as an editable Word document laid out like the PDF (sections
 * with columns, styled paragraphs and runs, headings, lists, tables, headers and footers, links, images), as a spreadsheet laid out on each page's grid of rows and columns, and as slides (each
 * page's graphics as a picture under editable text boxes).
 */
export * from './docx.js';
export * from './pptx.js';
export { type PageArt, readPageArt } from './table-art.js';
export * from './word.js';
export * from './xlsx.js';
