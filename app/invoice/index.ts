/**
 * Electronic invoices (EN 16931 in the UN/CEFACT CII syntax: Factur-X / ZUGFeRD / XRechnung): reading the XML,
 * its profiles and shipped schemas, schema and business-rule validation, a readable HTML rendering, and the
 * hybrid PDF/A-3 that carries the XML (made from a source PDF or the rendering, embedding, XMP, reading it back).
 */
export * from './cii.js';
export * as decimal from './decimal.js';
export { checkCodeLists, checkEn16931, type RuleFinding } from './en16931.js';
export { CODE_LISTS } from './en16931-code-lists.js';
export * from './facturx.js';
export * from './hybrid.js';
export * from './make.js';
export * from './profiles.js';
export * from './render.js';
export * from './thread.js';
export * from './validate.js';
