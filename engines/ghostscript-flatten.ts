import type { EngineContext } from './context.js';
import { EngineError } from './errors.js';
import { pdfwriteArgs } from './ghostscript-pdfwrite.js';
import { pageCount } from './qpdf.js';
import { runJob } from './qpdf-edit.js';
import { expectOutput, run } from './run.js';

/**
 * Flattening with Ghostscript's pdfwrite (10.00), whose PDF interpreter draws what a viewer would show:
 * - form fields: pdfwrite never writes an AcroForm; each widget's appearance is drawn into the page content,
 *   while other annotations are kept (PreserveAnnots, the default) unless `annotations` is set;
 * - annotations (`-dPreserveAnnots=false`): every visible annotation is drawn, with an appearance synthesised
 *   for those that have none (highlight, ink, note icons), and none is written;
 * - optional content: only the content visible in the default configuration (/OCProperties /D) is drawn, and
 *   no OCProperties are written;
 * - transparency (`-dCompatibilityLevel=1.3`): pages using it are drawn as images at `-r` dpi.
 */
export interface FlattenOptions {
  /** Draw and drop every annotation, not only form widgets. */
  annotations?: boolean;
  /** Visibility as printed (annotation Print flags, optional content print usage) instead of on screen. */
  printed?: boolean;
  /** Write PDF 1.3, flattening transparency at this resolution (dpi). */
  transparencyDpi?: number;
}

/** pdfwrite arguments for a flattening pass (the shared builder plus the flattening switches). */
export function flattenArgs(input: string, output: string, o: FlattenOptions): string[] {
  const args = pdfwriteArgs(input, output, o.transparencyDpi ? { compatibility: '1.3', flattenDpi: o.transparencyDpi } : {});
  const extra = [...(o.annotations ? ['-dPreserveAnnots=false'] : []), ...(o.printed ? ['-dPrinted'] : [])];
  const at = args.findIndex((a) => a.startsWith('-sOutputFile='));
  args.splice(at, 0, ...extra);
  return args;
}

/**
 * Rewrites `input` flattened. Ghostscript exits 0 on input it could not read, so its messages and the
 * output's page count are checked (as `rewritePdf` does).
 */
export async function flattenPdf(input: string, output: string, opts: FlattenOptions, ctx: EngineContext & { pages: number }): Promise<{ stderr: string }> {
  const r = await run('gs', flattenArgs(input, output, opts), ctx);
  await expectOutput('gs', output);
  if (/Couldn't initialise file|No pages will be processed/.test(r.stderr)) throw new EngineError('gs', 'could not read the input', { stderr: r.stderr });
  const written = await pageCount(output, ctx).catch(() => 0);
  if (written !== ctx.pages) throw new EngineError('gs', `wrote ${written} of ${ctx.pages} pages`, { stderr: r.stderr });
  return { stderr: r.stderr };
}

/**
 * qpdf draws appearance streams for text and choice fields whose value has none, or a stale one
 * (/NeedAppearances true): Ghostscript would otherwise draw the old, often empty, appearance.
 */
export async function generateAppearances(input: string, output: string, ctx: EngineContext): Promise<void> {
  await runJob({ inputFile: input, outputFile: output, generateAppearances: '' }, ctx);
  await expectOutput('qpdf', output);
}
