/**
 * Comparing two PDFs by their text: every word of both in reading order with its box on the page as seen, a
 * word-level alignment (jsdiff's Myers diff between anchors, so inserted pages and long documents stay cheap),
 * the differences as inserted, deleted and changed runs per page, and the second document with them highlighted.
 */
export * from './align.js';
export * from './compare.js';
export * from './differences.js';
export * from './words.js';
