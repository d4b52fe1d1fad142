/**
 * Inputs converted to PDF: the print settings of HTML pages, checks on office files before LibreOffice sees them
 * (zip bombs by their central directory, encrypted OOXML), e-mail (.eml, .msg) turned into one self-contained
 * HTML document for Chromium, and structured text (Markdown, plain text, CSV, JSON, XML) typeset as HTML + print
 * CSS for Chromium (structured/); and the conversion itself, each format to its engine with the engine's failures
 * made the 4xx/422 that name the input or the setting (to-pdf.ts).
 */
export * from './email.js';
export * from './html-page.js';
export * from './office-input.js';
export type { ImageInput, MarkdownImages } from './structured/markdown.js';
export { STRUCTURED_PAGE_SIZES, type StructuredOptions } from './structured/options.js';
export { type TypesetPrint, typesetFile } from './structured/thread.js';
export { STRUCTURED_FORMATS, type StructuredFormat, type Typeset, typesetStructured } from './structured/typeset.js';
export * from './to-pdf.js';
