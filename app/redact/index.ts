/**
 * Redaction search: what a redaction request looks for (literal strings, RE2 regular expressions, checked presets
 * such as IBAN or credit cards) matched against each page's characters as MuPDF reads them, giving the quads the
 * /Redact annotations cover; areas drawn on a page, mapped from the page as seen into PDF user space; the preview
 * that marks them; and the annotations of a preview applied for good.
 */
export * from './apply.js';
export * from './preview.js';
export * from './redact-area.js';
export * from './redact-find.js';
