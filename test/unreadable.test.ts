import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { explainUnreadable, formatOf, UNREADABLE, type UnreadableReason, whyUnreadable } from '../app/document/index.js';
import type { EngineContext } from '../engines/context.js';
import { EngineError } from '../engines/errors.js';
import { rewritePdf } from '../engines/ghostscript-pdfwrite.js';
import { readPageBoxes } from '../engines/mupdf.js';
import { renderRegion } from '../engines/page-images.js';
import { trimFrames } from '../engines/poppler-boxes.js';
import { pageCount } from '../engines/qpdf.js';
import { writePdf } from '../engines/qpdf-edit.js';
import { pdfFromObjects } from './fixtures.js';
import { CORPUS, corpus } from './helpers.js';

/**
 * Issue 24, point 4: a file no engine can read is refused with the reason, in words a user understands. Each case
 * runs the real engines (qpdf, MuPDF, Poppler, then the qpdf and Ghostscript rewrites a repair would try) on the
 * file, and gives whyUnreadable the EngineErrors they really threw.
 */

const work = mkdtempSync(join(tmpdir(), 'quire-unreadable-'));
test.after(() => rmSync(work, { recursive: true, force: true }));

let jobs = 0;
const newCtx = (): EngineContext => ({ cwd: mkdtempSync(join(work, `job-${++jobs}-`)), timeoutMs: 30_000 });

interface Attempts {
  failures: EngineError[];
  /** The readers that refused the file: threw, or (qpdf) found no pages. */
  refused: Set<'qpdf' | 'mupdf' | 'poppler'>;
  ctx: EngineContext;
}

/** Every engine's attempt at the file, as the read chain and the repair make them. */
async function attempts(path: string): Promise<Attempts> {
  const ctx = newCtx();
  const failures: EngineError[] = [];
  const refused = new Set<'qpdf' | 'mupdf' | 'poppler'>();
  const attempt = async (reader: 'qpdf' | 'mupdf' | 'poppler' | null, fn: () => Promise<unknown>) => {
    try {
      const r = await fn();
      if (reader === 'qpdf' && r === 0) refused.add('qpdf');
    } catch (err) {
      if (!(err instanceof EngineError)) throw err;
      failures.push(err);
      if (reader) refused.add(reader);
    }
  };
  await attempt('qpdf', () => pageCount(path, ctx));
  await attempt('mupdf', () => readPageBoxes(path, 1, ctx));
  await attempt('poppler', () => trimFrames(path, 1, ctx));
  await attempt('poppler', () => renderRegion(path, 1, { x0: 0, y0: 0, x1: 72, y1: 72 }, 10, join(ctx.cwd, 'region'), ctx));
  await attempt(null, () => writePdf(path, join(ctx.cwd, 'repaired-qpdf.pdf'), {}, ctx));
  await attempt(null, () => rewritePdf(path, join(ctx.cwd, 'repaired-gs.pdf'), {}, { ...ctx, pages: 1 }));
  return { failures, refused, ctx };
}

/** The client text for the file: of the reason expected, with no server path and no engine output in it. */
async function explained(path: string, reason: UnreadableReason, readers: ('qpdf' | 'mupdf' | 'poppler')[] = ['qpdf', 'mupdf', 'poppler']): Promise<string> {
  const { failures, refused, ctx } = await attempts(path);
  for (const r of readers) assert.ok(refused.has(r), `${r} refuses ${path}`);
  assert.ok(failures.length, 'the engines threw');
  const why = await explainUnreadable(path, failures, ctx);
  assert.is(why.reason, reason, `${path}: ${why.text}`);
  assert.is(await whyUnreadable(path, failures, ctx), why.text);
  clean(why.text, ctx);
  return why.text;
}

function clean(text: string, ctx: EngineContext): void {
  for (const leak of ['/tmp', work, ctx.cwd, CORPUS, 'stderr', 'WARNING', 'Syntax Error', 'error:']) {
    assert.not.ok(text.toLowerCase().includes(leak.toLowerCase()), `"${text}" holds "${leak}"`);
  }
  assert.ok(text.length < 400, text);
  assert.match(text, /[.]$/);
}

const file = (name: string, bytes: Buffer | string) => {
  const path = join(work, name);
  writeFileSync(path, bytes);
  return path;
};

const onePage = (extra: string[] = []) =>
  pdfFromObjects([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>',
    ...extra,
  ]);

/** A one-page PDF whose trailer names object 4 as its encryption dictionary. */
function encryptedWith(dict: string): Buffer {
  const pdf = onePage([dict]);
  const at = pdf.lastIndexOf('trailer');
  const id = '0123456789abcdef0123456789abcdef';
  const trailer = pdf.subarray(at).toString('latin1').replace('/Root 1 0 R', `/Root 1 0 R /Encrypt 4 0 R /ID [<${id}> <${id}>]`);
  return Buffer.concat([pdf.subarray(0, at), Buffer.from(trailer, 'latin1')]);
}

// ---------------------------------------------------------------- not a PDF

test('an empty file', async () => {
  // qpdf "can't find PDF header" ... "unable to find trailer dictionary", MuPDF "cannot tell in file", Poppler
  // "Document stream is empty". (Ghostscript "repairs" it into one blank page, exit 0: the size decides here.)
  const text = await explained(file('empty.pdf', ''), 'empty');
  assert.is(text, 'the file is empty (0 bytes).');
  assert.is(await whyUnreadable(corpus('malformed/empty-zero-bytes.pdf'), (await attempts(corpus('malformed/empty-zero-bytes.pdf'))).failures, newCtx()), text);
});

test('a PNG image, a DOCX, an HTML page, a gzip of a PDF: what the file is instead', async () => {
  assert.is(await explained(corpus('images/hopper.png'), 'not-pdf'), 'the file is not a PDF: it is a PNG image.');
  assert.is(await explained(corpus('office/poi-SampleDoc.docx'), 'not-pdf'), 'the file is not a PDF: it is a Word document (.docx).');
  assert.is(await explained(corpus('web/gotenberg-pages-3.html'), 'not-pdf'), 'the file is not a PDF: it is an HTML page.');
  const gz = file('document.pdf', gzipSync(readFileSync(corpus('pdf/text-minimal-pdflatex.pdf'))));
  assert.is(await explained(gz, 'not-pdf'), 'the file is not a PDF: it is binary data starting with the bytes 1f 8b 08 00.');
});

test('the same class gives the same sentence', async () => {
  assert.is(await explained(corpus('images/baiona-rgba-alpha.png'), 'not-pdf'), 'the file is not a PDF: it is a PNG image.');
  assert.is(await explained(corpus('office/gotenberg-pages_3.docx'), 'not-pdf'), 'the file is not a PDF: it is a Word document (.docx).');
});

test('formats recognised by their first bytes (and a ZIP by its entries)', async () => {
  const b = (...bytes: number[]) => Buffer.from(bytes);
  const head = (path: string) => readFileSync(path).subarray(0, 1024);
  const tail = (path: string) => readFileSync(path).subarray(-2048);
  const of = (rel: string) => formatOf(head(corpus(rel)), tail(corpus(rel)));
  assert.is(of('images/hopper.jpg'), 'a JPEG image');
  assert.is(of('images/hopper.gif'), 'a GIF image');
  assert.is(of('images/hopper.tif'), 'a TIFF image');
  assert.is(of('images/hopper.bmp'), 'a BMP image');
  assert.is(of('images/hopper.webp'), 'a WebP image');
  assert.is(of('office/poi-SampleSS.xlsx'), 'an Excel workbook (.xlsx)');
  assert.is(of('office/poi-SampleShow.pptx'), 'a PowerPoint presentation (.pptx)');
  assert.is(of('office/libreoffice-writer-trivial.odt'), 'an OpenDocument text (.odt)');
  assert.match(of('office/poi-SampleDoc.doc'), /^a Microsoft Office compound file \(OLE2/);
  assert.is(of('postscript/cups-testfile.ps'), 'a PostScript file');
  assert.is(of('postscript/pillow-zero_bb.eps'), 'an EPS (Encapsulated PostScript) file');
  assert.is(of('forms/annotations.xfdf'), 'an XML document');
  assert.is(of('forms/simple-form-2-fields.fdf'), 'an FDF file (form field data, not a document)');
  assert.is(
    formatOf(Buffer.from('PK\x03\x04\x14\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00notes', 'latin1')),
    'a ZIP archive',
  );
  assert.is(formatOf(Buffer.from('{\\rtf1\\ansi Hello}')), 'an RTF document');
  assert.is(formatOf(Buffer.from('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"/>')), 'an SVG image');
  assert.is(formatOf(Buffer.from('\n  <!DOCTYPE HTML>\n<html>')), 'an HTML page');
  // Plain text: the first 20 characters, whitespace collapsed, quotes escaped.
  assert.is(formatOf(Buffer.from('Invoice "2024"\n\n  total: 12 EUR, due now')), 'text starting with "Invoice \\"2024\\" total…"');
  assert.is(formatOf(Buffer.from('oops\n')), 'text starting with "oops"');
  assert.is(formatOf(Buffer.from('Grüße aus Köln')), 'text starting with "Grüße aus Köln"');
  assert.is(formatOf(Buffer.from(' \n\t ')), 'only blank space');
  assert.is(formatOf(Buffer.alloc(100)), 'filled with zero bytes');
  assert.is(formatOf(b(0x7f, 0x45, 0x4c, 0x46, 2, 1, 1)), 'binary data starting with the bytes 7f 45 4c 46');
  // A damaged header before binary (corpus realworld-qpdf/bad-direct-root.pdf starts "UPDF-1.").
  assert.is(formatOf(head(corpus('realworld-qpdf/bad-direct-root.pdf'))), 'binary data starting with the text "UPDF-1"');
});

test('only the ends of the file are read: a 5 GB file is described from its first bytes', async () => {
  const path = join(work, 'huge.png');
  const fd = openSync(path, 'w');
  writeSync(fd, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), 0, 8, 0);
  writeSync(fd, Buffer.from('IEND'), 0, 4, 5 * 1024 ** 3); // sparse: no disk space, but reading it whole would fail
  closeSync(fd);
  assert.is(await whyUnreadable(path, [], newCtx()), 'the file is not a PDF: it is a PNG image.');
});

// ---------------------------------------------------------------- PDFs that are broken

test('a PDF header and an end, nothing between (corpus invalid-header-then-eof.pdf)', async () => {
  const text = await explained(corpus('malformed/invalid-header-then-eof.pdf'), 'no-objects');
  assert.is(text, UNREADABLE['no-objects']);
});

test('a PDF cut short (corpus truncated-no-xref-pdfjs-bug1020226.pdf, and the first 10% of a real one)', async () => {
  const text = await explained(corpus('malformed/truncated-no-xref-pdfjs-bug1020226.pdf'), 'truncated');
  assert.match(text, /^the PDF is cut short: it ends without a cross-reference table or an end-of-file marker \(%%EOF\)/);
  const whole = readFileSync(corpus('pdf/text-4-pages-pdflatex.pdf'));
  assert.is(await explained(file('cut.pdf', whole.subarray(0, Math.floor(whole.length / 10))), 'truncated'), text);
});

test('a trailer without a document catalog (/Root)', async () => {
  const pdf = Buffer.from(onePage().toString('latin1').replace('/Root 1 0 R', '/Info 1 0 R'), 'latin1');
  assert.is(await explained(file('no-root.pdf', pdf), 'no-catalog'), 'the document catalog (/Root) is missing or damaged, so no pages could be found.');
  // qpdf "unable to find /Root dictionary" on a fuzzed file too.
  assert.is(await explained(corpus('realworld-qpdf/issue-99.pdf'), 'no-catalog'), UNREADABLE['no-catalog']);
});

test('an encryption dictionary with a security handler other than /Standard (/Adobe.PubSec)', async () => {
  const path = file(
    'certificates.pdf',
    encryptedWith(
      '<< /Filter /Adobe.PubSec /SubFilter /adbe.pkcs7.s5 /V 4 /R 4 /Length 128 /CF << /DefaultCryptFilter << /CFM /AESV2 /Recipients [<3082010a>] >> >> ' +
        '/StmF /DefaultCryptFilter /StrF /DefaultCryptFilter /P -4 >>',
    ),
  );
  // qpdf "(encryption dictionary, offset 414): unsupported encryption filter", MuPDF "unknown encryption handler:
  // 'Adobe.PubSec'", Poppler "Couldn't find the 'Adobe.PubSec' security handler".
  const text = await explained(path, 'security-handler');
  assert.is(
    text,
    'the file is encrypted with a security handler that is not supported (/Adobe.PubSec, encryption to certificates): only password encryption (/Standard, /V 1 to 5, /R 2 to 6) can be opened.',
  );
  // The encryption dictionary alone says it, when the engines' messages are not at hand.
  assert.is(await whyUnreadable(path, [], newCtx()), text);
  // Another handler's name is given as found.
  const other = file('other-handler.pdf', encryptedWith('<< /Filter /FooCrypt /V 2 /R 3 /Length 128 /O <00> /U <00> /P -4 >>'));
  assert.match(await explained(other, 'security-handler'), /^the file is encrypted with a security handler that is not supported \(\/FooCrypt\): /);
});

test('an empty page tree and a page tree that loops', async () => {
  // qpdf lists 0 pages, MuPDF "error: malformed page tree", Poppler "Invalid page count 0".
  const empty = file('no-pages.pdf', pdfFromObjects(['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [] /Count 0 >>']));
  assert.is(await explained(empty, 'no-pages'), "the document's page tree is missing or holds no pages.");
  // qpdf "Loop detected in /Pages structure (getAllPages)", MuPDF "error: cycle in page tree". Poppler says "Loop in
  // Pages tree" but goes on with one phantom page of 0 x 0 points, so it is not asked to refuse here.
  const loop = file(
    'pages-loop.pdf',
    pdfFromObjects([
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      '<< /Type /Pages /Parent 2 0 R /Kids [2 0 R] /Count 1 >>',
    ]),
  );
  assert.is(await explained(loop, 'page-tree-loop', ['qpdf', 'mupdf']), "the document's page tree loops back on itself, so it leads to no pages.");
});

test('otherwise: the engines that tried, by name', async () => {
  const path = file('fine.pdf', onePage());
  assert.is(await whyUnreadable(path, [], newCtx()), 'qpdf, MuPDF and Poppler could not read it as a PDF, and it could not be repaired.');
  // A failure that says nothing about the file (MuPDF cut at its page budget, as engines/run.ts reports it: no
  // stderr of a page) names only the engine. (Cutting a real mutool at 1 ms raced with its start on a busy machine.)
  const cut = new EngineError('mutool', 'spent more than 5000 ms on page 1', { timedOut: true, stalledPage: 1 });
  assert.is(await whyUnreadable(path, [cut], newCtx()), 'MuPDF could not read it as a PDF, and it could not be repaired.');
});

test.run();
