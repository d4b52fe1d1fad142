/**
 * Inputs converted to PDF: the print settings of HTML pages, checks on office files before LibreOffice sees them
 * (zip bombs by their central directory, encrypted OOXML), and e-mail (.eml, .msg) turned into one self-contained
 * HTML document for Chromium.
 */
export * from './email.js';
export * from './html-page.js';
export * from './office-input.js';
