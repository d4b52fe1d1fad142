import { invalidInput } from '../../errors.js';
import { inputError } from './pdf-access.js';
import type { EngineContext } from '../../../engines/context.js';
import { glyphColours, pageGeometry, structuredText } from '../../../engines/mupdf-stext.js';
import { pageCount } from '../../../engines/qpdf.js';
import { buildPages, type PageModel } from './layout.js';
import { resolvePages } from './pages.js';

/**
 * Opens an input PDF for reading: a password-protected file is a 401, a file qpdf cannot read at all is a
 * 400, and the page selection is resolved against the real page count (sorted, each page once).
 */
export async function selectPages(path: string, spec: string, ctx: EngineContext): Promise<number[]> {
  let count: number;
  try {
    // qpdf reports a needed password as PasswordError here, so no separate encryption probe is run.
    count = await pageCount(path, ctx);
  } catch (err) {
    throw inputError(err);
  }
  if (!Number.isFinite(count) || count < 1) throw invalidInput();
  return [...new Set(resolvePages(spec, count))].sort((a, b) => a - b);
}

/** The page model of the selected pages; `colours` adds the original colour spaces (one more engine pass). */
export async function readPages(path: string, pages: number[], ctx: EngineContext, opts: { colours?: boolean } = {}): Promise<PageModel[]> {
  try {
    const [stext, geometry, traced] = await Promise.all([
      structuredText(path, pages, ctx),
      pageGeometry(path, pages, ctx),
      opts.colours ? glyphColours(path, pages, ctx) : Promise.resolve(undefined),
    ]);
    return buildPages(stext, geometry, traced);
  } catch (err) {
    throw inputError(err);
  }
}

/** Pages (1-based) that carry no text at all: scans, or drawings. */
export const textlessPages = (pages: PageModel[]) => pages.filter((p) => p.lines.length === 0).map((p) => p.page);

export function noTextWarning(empty: number[], total: number): string | undefined {
  if (!empty.length) return undefined;
  if (empty.length === total) return 'No text was found on the selected pages: they may be scanned images. Run /pdf-with-ocr-text first to make the text readable.';
  return `No text was found on page${empty.length > 1 ? 's' : ''} ${empty.join(', ')}: ${empty.length > 1 ? 'they' : 'it'} may be scanned images. Run /pdf-with-ocr-text first to make that text readable.`;
}
