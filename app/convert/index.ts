/**
 * Inputs converted to PDF: the print settings of HTML pages, checks on office files before LibreOffice sees them
 * (zip bombs by their central directory, encrypted OOXML), e-mail (.eml, .msg) turned into one self-contained
 * HTML document for Chromium, and structured text (Markdown, plain text, CSV, JSON, XML) typeset as HTML + print
 * CSS for Chromium (structured/).
 */
export * from './email.js';
export * from './html-page.js';
export * from './office-input.js';
export { STRUCTURED_FORMATS, typesetStructured, type StructuredFormat, type Typeset } from './structured/typeset.js';
export { typesetFile, type TypesetPrint } from './structured/thread.js';
export { STRUCTURED_PAGE_SIZES, type StructuredOptions } from './structured/options.js';
export type { ImageInput, MarkdownImages } from './structured/markdown.js';
