/**
 * AI text operations: the document's text in reading order cut into parts that fit a model's context window, and
 * the client of an OpenAI-compatible server (LLM_URL). The server's failures are 503 (not the client's fault);
 * only input too large for the model is a 400.
 */
export * from './llm.js';
