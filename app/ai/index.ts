/**
 * AI text operations: the document's text in reading order cut into parts that fit a model's context window, and
 * the client of an OpenAI-compatible server (LLM_URL). The server's failures are 503 (not the client's fault);
 * only input too large for the model is a 400. Without a model: source-language detection (always Quire's own),
 * extractive summaries, and Apertium translation for the language pairs installed.
 */

export * from './detect.js';
export * from './extractive.js';
export * from './llm.js';
export * from './summarize.js';
export * from './translate-offline.js';
