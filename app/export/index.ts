/**
 * PDF to office formats: the page model written as an editable Word document (sections, headings, paragraphs,
 * lists, tables, images) and as a spreadsheet laid out on each page's grid of rows and columns.
 */
export * from './docx.js';
export * from './xlsx.js';
