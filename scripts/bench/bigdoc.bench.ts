// Big documents (issue 38): every operation that takes a PDF, sent to one real Quire process (node + tsx, scratch
// DATA_DIR, resources kept for the whole run) on text PDFs of 150, 600 and 2,010 pages and on a 2,000-page scan.
// Each document is uploaded once (POST /upload, raw body) and every request names it by id (JSON body).
// Every document is built and uploaded first; then each operation runs on every document in turn (smallest first)
// and for each operation and document it prints:
// - the time of the whole request and its HTTP status; a 4xx is an outcome, its message is printed (a 422 naming
//   a limit is an acceptable answer to a document past it);
// - the time of the raw engine doing the same work on the same file in the same run, where one exists, and the
//   ratio: text and Markdown vs `mutool draw -F stext` (every character with its box), split / merge / rotate /
//   reorder / linearize / encrypt vs the qpdf command doing it, compress / PDF/A / colours / rasterize / flatten vs
//   the Ghostscript command, /png vs `mutool draw` of that page, stamps (watermark, page numbers, added text,
//   shapes, tables, image, boxes, TDM) vs qpdf copying the file (`qpdf in out`: what rewriting it costs);
// - the peak resident memory of the server process plus every process below it (VmRSS of each, from /proc, every
//   100 ms during the request; shared pages counted once per process; the jobs' own Node processes included, a
//   child forked but not yet exec'd left out: it would count the server twice), above the idle server's (measured
//   once after start, before any request), and
//   above the tree's RSS when the request was sent (the server keeps heap grown by earlier requests).
// Then the time per page at each text size and its growth (seconds per page at the largest size / at the
// smallest) per operation, and a Markdown table for the README. A warm-up pass over the 15-page source file runs
// first (not printed) so the smallest size does not pay for first loads. Outputs are deleted after each request.
// The documents:
// - text: ../shared/corpus/pdf/federal-register-15-pages.pdf repeated with `qpdf --empty --pages f 1-z f 1-z ... --`
//   (the same file named again, so qpdf shares its fonts and content streams: 2,010 pages make ~2 MiB, the issue's
//   file); a size that is not a multiple of 15 ends with `f 1-r`;
// - scan: the page image of scans/huckleberry-finn-p22-scan.pdf (800x981 RGB JPEG at 150 dpi), decoded once; every
//   page gets its own copy of the pixels with its page number drawn in as a row of 20 black or white 8x8 squares at
//   the bottom left, encoded as its own JPEG (sharp, quality 75: ~175 KB like the original), written here as an
//   image-only PDF (one image XObject and one content stream per page, pages of the original's size) and then
//   rewritten by `qpdf`. No two pages share an object, nor even an image's bytes or pixels, so no engine can draw,
//   store or deduplicate one page for all (`qpdf --empty --pages` of one file repeated shares the image object).
//   OCR-class work on every page of the scan (/pdf-with-ocr-text) is skipped and said so.
// Run: npm run bench -- bigdoc   (full size: hours on 2 cores; needs ~5 GB free under the temp dir)
//   BIGDOC_PAGES=30,60 BIGDOC_SCAN_PAGES=40 npm run bench -- bigdoc   a quick run (BIGDOC_SCAN_PAGES=0: no scan)
//   BIGDOC_OPS=extracted-text,png   only the operations whose path contains one of these words
//   BIGDOC_WARMUP=0                 no warm-up pass
//   BIGDOC_KEEP=1                   keep the documents and the server's data (the scratch folder is printed)
// The server's settings (JOB_MAX_MEMORY_MB, MAX_PROCESS_SECONDS, ...) come from the environment, as for `npm start`;
// RESOURCE_TTL_SECONDS is 0 (the uploads must outlive a run of hours).
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, createReadStream, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { operations } from '../../app/operations/index.js';
import { descendants, type Proc, started, startQuire, stop, tail } from '../../test/processes.js';

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const CORPUS = resolve(process.env.QUIRE_CORPUS ?? join(root, '../shared/corpus'));
const FED = join(CORPUS, 'pdf/federal-register-15-pages.pdf');
const FED_PAGES = 15;
const SCAN = join(CORPUS, 'scans/huckleberry-finn-p22-scan.pdf');
const IMAGE = join(CORPUS, 'images/hopper.png');
const ATTACHMENT = join(CORPUS, 'scans/tesseract-phototest.expected.txt');
const CERT = join(CORPUS, 'signing/gotenberg-localhost-selfsigned-cert.pem');
const KEY = join(CORPUS, 'signing/gotenberg-localhost-selfsigned-key.pem');
const sizes = (v: string | undefined, d: string) =>
  (v ?? d)
    .split(',')
    .map((s) => Number(s.trim()))
    .filter((n) => Number.isInteger(n) && n > 0);
const TEXT_SIZES = sizes(process.env.BIGDOC_PAGES, '150,600,2010').sort((a, b) => a - b);
const SCAN_PAGES = Number(process.env.BIGDOC_SCAN_PAGES ?? 2000);
const ONLY = (process.env.BIGDOC_OPS ?? '')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const WARMUP = process.env.BIGDOC_WARMUP !== '0';
const KEEP = process.env.BIGDOC_KEEP === '1';
const REQUEST_MS = 30 * 60_000;
const PASSWORD = 'bench-password';
const work = mkdtempSync(join(tmpdir(), 'qbench-bigdoc-'));
const rawDir = join(work, 'raw');
const MB = (kb: number) => `${Math.round(kb / 1024)} MB`;

// ---------------------------------------------------------------------------------------------------------------
// Documents

interface Doc {
  label: string;
  kind: 'text' | 'scan';
  pages: number;
  path: string;
  bytes: number;
  /** Resource id on the current server. */
  id: string;
}

/** Runs a command that must succeed (qpdf's exit 3 is "succeeded with warnings"). */
function must(cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0 && !(cmd === 'qpdf' && r.status === 3)) throw new Error(`${cmd} ${args.slice(0, 6).join(' ')} ...: exit ${r.status} ${r.stderr}`);
}

function textDoc(pages: number): Omit<Doc, 'id'> {
  const path = join(work, `text-${pages}.pdf`);
  const specs: string[] = [];
  for (let i = 0; i < Math.floor(pages / FED_PAGES); i++) specs.push(FED, '1-z');
  if (pages % FED_PAGES) specs.push(FED, `1-${pages % FED_PAGES}`);
  must('qpdf', ['--empty', '--pages', ...specs, '--', path]);
  return { label: `text ${pages.toLocaleString('en')} p`, kind: 'text', pages, path, bytes: statSync(path).size };
}

/** The page number in the pixels: 20 squares of 8x8, black for a 1 bit, white for a 0, along the bottom left. */
function markPage(pixels: Buffer, width: number, height: number, channels: number, n: number): void {
  for (let bit = 0; bit < 20; bit++) {
    const v = (n >> bit) & 1 ? 0 : 255;
    for (let y = height - 16; y < height - 8; y++)
      for (let x = 8 + bit * 8; x < 16 + bit * 8; x++) pixels.fill(v, (y * width + x) * channels, (y * width + x + 1) * channels);
  }
}

/** An image-only PDF of `pages` distinct pages (see the header), written object by object, then rewritten by qpdf. */
async function scanDoc(pages: number): Promise<Omit<Doc, 'id'>> {
  const src = join(work, 'scan-src');
  must('pdfimages', ['-j', '-f', '1', '-l', '1', SCAN, src]);
  const { data, info } = await sharp(`${src}-000.jpg`).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const { width, height, channels } = info;
  // The original's page: 150 dpi.
  const [w, h] = [(width * 72) / 150, (height * 72) / 150].map((n) => Number(n.toFixed(2)));
  const raw = join(work, 'scan-raw.pdf');
  const fd = openSync(raw, 'w');
  let at = 0;
  const offsets: number[] = [];
  const put = (b: string | Buffer) => {
    const buf = typeof b === 'string' ? Buffer.from(b, 'latin1') : b;
    writeSync(fd, buf);
    at += buf.length;
  };
  const obj = (n: number, dict: string, stream?: Buffer) => {
    offsets[n] = at;
    put(`${n} 0 obj\n${dict}\n`);
    if (stream) {
      put('stream\n');
      put(stream);
      put('\nendstream\n');
    }
    put('endobj\n');
  };
  // Objects: 1 catalog, 2 page tree, then per page i: 3+3i page, 4+3i content, 5+3i image.
  put('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n');
  obj(1, '<< /Type /Catalog /Pages 2 0 R >>');
  obj(2, `<< /Type /Pages /Count ${pages} /Kids [${Array.from({ length: pages }, (_, i) => `${3 + 3 * i} 0 R`).join(' ')}] >>`);
  for (let i = 0; i < pages; i++) {
    const pixels = Buffer.from(data);
    markPage(pixels, width, height, channels, i + 1);
    const jpeg = await sharp(pixels, { raw: { width, height, channels } }).jpeg({ quality: 75 }).toBuffer();
    const content = Buffer.from(`q ${w} 0 0 ${h} 0 0 cm /Im0 Do Q`);
    obj(
      3 + 3 * i,
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${w} ${h}] /Resources << /XObject << /Im0 ${5 + 3 * i} 0 R >> >> /Contents ${4 + 3 * i} 0 R >>`,
    );
    obj(4 + 3 * i, `<< /Length ${content.length} >>`, content);
    obj(
      5 + 3 * i,
      `<< /Type /XObject /Subtype /Image /Width ${width} /Height ${height} /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode /Length ${jpeg.length} >>`,
      jpeg,
    );
  }
  const xref = at;
  const count = 3 + 3 * pages;
  put(`xref\n0 ${count}\n0000000000 65535 f \n`);
  for (let n = 1; n < count; n++) put(`${String(offsets[n]).padStart(10, '0')} 00000 n \n`);
  put(`trailer\n<< /Size ${count} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`);
  closeSync(fd);
  const path = join(work, `scan-${pages}.pdf`);
  must('qpdf', [raw, path]);
  rmSync(raw);
  return { label: `scan ${pages.toLocaleString('en')} p`, kind: 'scan', pages, path, bytes: statSync(path).size };
}

// ---------------------------------------------------------------------------------------------------------------
// Requests, memory, raw engines

interface Answer {
  status: number;
  body: any;
  ms: number;
  /** The connection failed (no HTTP status). */
  error?: string;
}

/** One request over node:http (no client-side timeouts but REQUEST_MS): a JSON body, or a file as a raw upload. */
function call(base: string, method: string, path: string, opts: { json?: unknown; file?: string } = {}): Promise<Answer> {
  return new Promise((done) => {
    const t0 = performance.now();
    const headers: Record<string, string | number> = { accept: 'application/json' };
    let payload: Buffer | undefined;
    if (opts.json !== undefined) {
      payload = Buffer.from(JSON.stringify(opts.json));
      headers['content-type'] = 'application/json';
      headers['content-length'] = payload.length;
    } else if (opts.file) {
      headers['content-type'] = opts.file.endsWith('.pdf') ? 'application/pdf' : 'application/octet-stream';
      headers['content-filename'] = encodeURIComponent(basename(opts.file));
      headers['content-length'] = statSync(opts.file).size;
    }
    const req = httpRequest(new URL(path, base), { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (err) => done({ status: 0, body: {}, ms: performance.now() - t0, error: err.message }));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: any;
        try {
          body = JSON.parse(text);
        } catch {
          body = { error: text.slice(0, 300) };
        }
        done({ status: res.statusCode ?? 0, body, ms: performance.now() - t0 });
      });
    });
    req.setTimeout(REQUEST_MS, () => req.destroy(new Error(`no answer within ${REQUEST_MS / 60_000} min`)));
    req.on('error', (err) => done({ status: 0, body: {}, ms: performance.now() - t0, error: err.message }));
    if (opts.file) createReadStream(opts.file).pipe(req);
    else req.end(payload);
  });
}

const rssKb = (pid: number) => {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0; // gone meanwhile
  }
};
const commandOf = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1');
  } catch {
    return '';
  }
};
/**
 * VmRSS of a process and of every process below it (found by ppid chains in /proc/<pid>/stat), in kB. A child still
 * running its parent's command line is one forked but not yet exec'd: it shows its parent's pages (shared, not
 * copied) for an instant, counted twice if summed, so it is left out. That is the server starting a job process
 * or an engine, and a job process starting an engine: a 650 MB /word job process starting pdftoppm showed a
 * second ~280 MB "node" for a sample. The jobs' own Node processes (operation-worker, their heap capped at
 * JOB_MAX_MEMORY_MB) run another command line than the server's and are counted.
 */
function treeKb(pid: number): number {
  const tree = descendants(pid);
  const commands = new Map([pid, ...tree.map((e) => e.pid)].map((p) => [p, commandOf(p)]));
  return tree.filter((e) => commands.get(e.pid) !== commands.get(e.ppid)).reduce((sum, e) => sum + rssKb(e.pid), rssKb(pid));
}

/** The tree's RSS by program name, largest first: what the idle and warmed server hold. */
function breakdown(pid: number): string {
  const by = new Map<string, number>();
  for (const e of [{ pid, comm: 'server (node)' }, ...descendants(pid)]) by.set(e.comm, (by.get(e.comm) ?? 0) + rssKb(e.pid));
  return [...by]
    .sort((a, b) => b[1] - a[1])
    .map(([comm, kb]) => `${comm} ${MB(kb)}`)
    .join(', ');
}

/** Runs `fn` while sampling the tree's RSS every 100 ms; returns its value and the peak. */
async function sampled<T>(pid: number, fn: () => Promise<T>): Promise<{ value: T; peakKb: number; startKb: number }> {
  const startKb = treeKb(pid);
  let peakKb = startKb;
  const timer = setInterval(() => (peakKb = Math.max(peakKb, treeKb(pid))), 100);
  try {
    const value = await fn();
    return { value, peakKb: Math.max(peakKb, treeKb(pid)), startKb };
  } finally {
    clearInterval(timer);
  }
}

/** A raw engine command, timed; its outputs go to rawDir, emptied afterwards. */
function runRaw(argv: string[]): Promise<{ ms: number; error?: string }> {
  mkdirSync(rawDir, { recursive: true });
  return new Promise((done) => {
    const t0 = performance.now();
    const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err = (err + d).slice(-2000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), REQUEST_MS);
    const finish = (r: { ms: number; error?: string }) => {
      clearTimeout(timer);
      rmSync(rawDir, { recursive: true, force: true });
      done(r);
    };
    child.on('error', (e) => finish({ ms: performance.now() - t0, error: e.message }));
    child.on('close', (code, signal) => {
      const ms = performance.now() - t0;
      const ok = code === 0 || (argv[0] === 'qpdf' && code === 3);
      const last = err.trim().split('\n').pop() ?? '';
      finish(ok ? { ms } : { ms, error: `exit ${code ?? signal}${last ? `: ${last.slice(0, 160)}` : ''}` });
    });
  });
}

// ---------------------------------------------------------------------------------------------------------------
// The operations

interface Assets {
  image: string;
  attachment: string;
  cert: string;
  key: string;
}

type Raw = [label: string, argv: (d: Doc, out: string) => string[]];

interface Op {
  path: string;
  /** Shown instead of the path when the fields matter. */
  label?: string;
  /** The JSON body; `id` defaults to the document's. */
  body?: (d: Doc, a: Assets) => Record<string, unknown>;
  raw?: Raw;
  /** Why it does not run on the scan. */
  notOnScan?: string;
  /** The path of an earlier operation whose output is this one's input. */
  after?: string;
}

const mid = (d: Doc) => Math.ceil(d.pages / 2);
const outPdf = (o: string) => join(o, 'out.pdf');
const stext: Raw = ['mutool draw -F stext', (d) => ['mutool', 'draw', '-q', '-F', 'stext', '-o', '/dev/null', d.path]];
const qpdfCopy: Raw = ['qpdf in out (copy)', (d, o) => ['qpdf', d.path, outPdf(o)]];
const gs = (label: string, ...args: string[]): Raw => [
  label,
  (d, o) => ['gs', '-dSAFER', '-dBATCH', '-dNOPAUSE', '-q', '-sDEVICE=pdfwrite', ...args, `-sOutputFile=${outPdf(o)}`, d.path],
];
const gsPlain = gs('gs pdfwrite');
const image = (path: string): Op => ({ path, label: `${path} (middle page, 300 dpi)`, body: (d) => ({ pages: String(mid(d)) }) });

const OPS: Op[] = [
  { path: '/pdf-info', label: '/pdf-info (all queries)', body: () => ({ queries: 'all' }) },
  { path: '/extracted-text', raw: stext },
  { path: '/markdown', raw: stext },
  { path: '/compared-pdf', label: '/compared-pdf (with itself)', body: (d) => ({ compare_id: d.id }) },
  { path: '/word' },
  { path: '/excel' },
  { path: '/powerpoint' },
  {
    path: '/pdf-with-redacted-text-preview',
    label: '/pdf-with-redacted-text-preview ("Federal")',
    body: () => ({ redactions: JSON.stringify([{ type: 'literal', value: 'Federal' }]) }),
  },
  { path: '/pdf-with-redacted-text-applied', after: '/pdf-with-redacted-text-preview' },
  { path: '/summarized-pdf-text' },
  { path: '/translated-pdf-text', label: '/translated-pdf-text (es)', body: () => ({ output_language: 'es' }) },
  { path: '/pdf-with-ocr-text', notOnScan: 'OCR of every page' },
  { path: '/deskewed-pdf' },
  { path: '/pdf-without-blank-pages' },
  { path: '/separated-pdf', label: '/separated-pdf (blank pages)', body: () => ({ separator: 'blank' }) },
  { path: '/split-pdf', label: '/split-pdf (every page)', raw: ['qpdf --split-pages', (d, o) => ['qpdf', '--split-pages', d.path, join(o, 'p-%d.pdf')]] },
  {
    path: '/merged-pdf',
    label: '/merged-pdf (itself twice)',
    body: (d) => ({ id: [d.id, d.id], type: ['id', 'id'], pages: ['1-last', '1-last'] }),
    raw: ['qpdf --empty --pages f f', (d, o) => ['qpdf', '--empty', '--pages', d.path, '1-z', d.path, '1-z', '--', outPdf(o)]],
  },
  {
    path: '/rotated-pdf',
    label: '/rotated-pdf (90)',
    body: () => ({ rotation: '90' }),
    raw: ['qpdf --rotate=+90', (d, o) => ['qpdf', d.path, outPdf(o), '--rotate=+90']],
  },
  {
    path: '/reordered-pdf',
    label: '/reordered-pdf (reversed)',
    body: (d) => ({ pages: `${d.pages}-1` }),
    raw: ['qpdf --pages f z-1', (d, o) => ['qpdf', '--empty', '--pages', d.path, 'z-1', '--', outPdf(o)]],
  },
  { path: '/n-up-pdf', label: '/n-up-pdf (2 per sheet)', body: () => ({ pages_per_sheet: '2' }) },
  { path: '/resized-pdf', label: '/resized-pdf (A4)', body: () => ({ page_size: 'A4' }) },
  { path: '/linearized-pdf', raw: ['qpdf --linearize', (d, o) => ['qpdf', '--linearize', d.path, outPdf(o)]] },
  // The register is signed (a signature field per copy): sanitizing it needs remove_signatures, or it is a 400.
  { path: '/sanitized-pdf', label: '/sanitized-pdf (signatures removed)', body: () => ({ remove_signatures: 'on' }), raw: qpdfCopy },
  { path: '/pdf-signatures' },
  {
    path: '/encrypted-pdf',
    body: () => ({ new_open_password: PASSWORD }),
    raw: ['qpdf --encrypt 256', (d, o) => ['qpdf', '--encrypt', PASSWORD, PASSWORD, '256', '--', d.path, outPdf(o)]],
  },
  { path: '/decrypted-pdf', after: '/encrypted-pdf', body: () => ({ current_open_password: PASSWORD }) },
  {
    path: '/restricted-pdf',
    body: () => ({ new_permissions_password: PASSWORD, restrictions: 'copy_content,edit_content' }),
    raw: ['qpdf --encrypt 256', (d, o) => ['qpdf', '--encrypt', '', PASSWORD, '256', '--extract=n', '--modify=none', '--', d.path, outPdf(o)]],
  },
  { path: '/unrestricted-pdf', after: '/restricted-pdf', body: () => ({ current_permissions_password: PASSWORD }) },
  {
    path: '/pdf-with-page-boxes-set',
    label: '/pdf-with-page-boxes-set (crop, all)',
    body: () => ({ boxes: JSON.stringify({ boxes: [{ box: 'crop', pages: [{ range: 'all', left: 10, top: 10, bottom: 10, right: 10 }] }] }) }),
    raw: qpdfCopy,
  },
  {
    path: '/pdf-with-added-attachment',
    body: (_d, a) => ({ id_to_attach: a.attachment }),
    raw: ['qpdf --add-attachment', (d, o) => ['qpdf', d.path, outPdf(o), '--add-attachment', ATTACHMENT, '--']],
  },
  {
    ...image('/png'),
    raw: ['mutool draw -r 300 (that page)', (d, o) => ['mutool', 'draw', '-q', '-r', '300', '-o', join(o, 'p.png'), d.path, String(mid(d))]],
  },
  image('/jpg'),
  image('/tif'),
  image('/bmp'),
  image('/gif'),
  { path: '/extracted-images', raw: ['pdfimages -all', (d, o) => ['pdfimages', '-all', d.path, join(o, 'img')]] },
  {
    path: '/pdfa',
    label: '/pdfa (PDF/A-2b)',
    body: () => ({ output_type: 'PDF/A-2b' }),
    raw: gs('gs -dPDFA=2', '-dPDFA=2', '-dPDFACompatibilityPolicy=1', '-sColorConversionStrategy=RGB'),
  },
  {
    path: '/pdfx',
    label: '/pdfx (PDF/X-4)',
    body: () => ({ output_type: 'PDF/X-4' }),
    raw: gs('gs -sColorConversionStrategy=CMYK (one run)', '-sColorConversionStrategy=CMYK', '-dProcessColorModel=/DeviceCMYK', '-dCompatibilityLevel=1.6'),
  },
  {
    path: '/compressed-pdf',
    label: '/compressed-pdf (medium)',
    body: () => ({ compression_level: 'medium' }),
    raw: gs('gs -dPDFSETTINGS=/ebook', '-dPDFSETTINGS=/ebook'),
  },
  {
    path: '/rasterized-pdf',
    raw: [
      'gs -sDEVICE=pdfimage24 -r150',
      (d, o) => [
        'gs',
        '-dSAFER',
        '-dBATCH',
        '-dNOPAUSE',
        '-q',
        '-sDEVICE=pdfimage24',
        '-r150',
        '-dTextAlphaBits=4',
        '-dGraphicsAlphaBits=4',
        `-sOutputFile=${outPdf(o)}`,
        d.path,
      ],
    ],
  },
  {
    path: '/pdf-with-converted-colors',
    label: '/pdf-with-converted-colors (srgb)',
    body: () => ({ color_profile: 'srgb' }),
    raw: gs('gs -sColorConversionStrategy=RGB', '-sColorConversionStrategy=RGB', '-dProcessColorModel=/DeviceRGB'),
  },
  {
    path: '/pdf-with-converted-colors',
    label: '/pdf-with-converted-colors (viewer9-cmyk)',
    body: () => ({ color_profile: 'viewer9-cmyk' }),
    raw: gs('gs -sColorConversionStrategy=CMYK (one run)', '-sColorConversionStrategy=CMYK', '-dProcessColorModel=/DeviceCMYK'),
  },
  { path: '/flattened-forms-pdf', raw: gsPlain },
  { path: '/flattened-annotations-pdf', raw: gsPlain },
  { path: '/flattened-layers-pdf', raw: gsPlain },
  { path: '/flattened-transparencies-pdf', label: '/flattened-transparencies-pdf (low)', body: () => ({ quality: 'low' }), raw: gsPlain },
  { path: '/postscript', raw: ['pdftops -level3', (d, o) => ['pdftops', '-level3', d.path, join(o, 'out.ps')]] },
  { path: '/watermarked-pdf', label: '/watermarked-pdf (text)', body: () => ({ watermark_text: 'CONFIDENTIAL', rotation: '45' }), raw: qpdfCopy },
  { path: '/pdf-with-page-numbers', raw: qpdfCopy },
  {
    path: '/pdf-with-added-text',
    label: '/pdf-with-added-text (all pages)',
    body: () => ({
      text_objects: JSON.stringify([
        {
          text: 'Bench copy',
          page: 'all',
          x: '36',
          y: '36',
          font: 'Helvetica',
          text_size: '12',
          text_color_rgb: '255,0,0',
          max_width: '300',
          opacity: '1',
          rotation: '0',
        },
      ]),
    }),
    raw: qpdfCopy,
  },
  {
    path: '/pdf-with-added-shapes',
    label: '/pdf-with-added-shapes (all pages)',
    body: () => ({ shape_objects: JSON.stringify([{ type: 'line', page: 'all', x1: 10, y1: 10, x2: 200, y2: 10 }]) }),
    raw: qpdfCopy,
  },
  {
    path: '/pdf-with-added-tables',
    label: '/pdf-with-added-tables (middle page)',
    body: (d) => ({
      table_objects: JSON.stringify([
        { page: mid(d), x: 36, y: 300, width: 200, columns: [{ width: 100 }, { width: 100 }], rows: [{ cells: [{ text: 'a' }, { text: 'b' }] }] },
      ]),
    }),
    raw: qpdfCopy,
  },
  {
    path: '/pdf-with-added-image',
    label: '/pdf-with-added-image (middle page)',
    body: (d, a) => ({ image_id: a.image, x: '36', y: '36', page: String(mid(d)) }),
    raw: qpdfCopy,
  },
  { path: '/tdm-reserved-pdf', body: () => ({ policy: 'https://example.com/tdm-policy' }), raw: qpdfCopy },
  {
    path: '/signed-pdf',
    label: '/signed-pdf (PEM, visible)',
    body: (_d, a) => ({
      certificate_id: a.cert,
      private_key_id: a.key,
      signature_configuration: JSON.stringify({
        type: 'new',
        name: 'Bench',
        location: { bottom_left: { x: 36, y: 36 }, top_right: { x: 300, y: 100 }, page: 1 },
      }),
    }),
  },
];

/** Endpoints not run, and why; any other endpoint missing from OPS is reported as not covered. */
const NOT_RUN: Record<string, string> = {
  '/pdf-with-imported-form-data': 'needs a form and its data file',
  '/exported-form-data': 'needs a form',
  '/pdf-with-acroforms': 'needs an XFA form',
  '/zugferd-pdf': 'takes invoice XML',
  '/validated-zugferd': 'takes invoice XML',
  '/zip': 'archives any files',
  '/unzip': 'takes a ZIP',
  '/pdf': 'takes office, image, web or PostScript input',
  '/blank-pdf': 'takes no input',
};

const selected = OPS.filter((op) => !ONLY.length || ONLY.some((w) => op.path.includes(w)));
const labelOf = (op: Op) => op.label ?? op.path;

// ---------------------------------------------------------------------------------------------------------------
// The server

interface Server {
  proc: Proc;
  assets: Assets;
  idleKb: number;
}
const dataDir = join(work, 'data');

async function upload(s: { proc: Proc }, file: string): Promise<{ id: string; ms: number }> {
  const r = await call(s.proc.base, 'POST', '/upload', { file });
  const id = r.body?.files?.[0]?.id;
  if (r.status !== 200 || !id) throw new Error(`upload of ${basename(file)}: ${r.status} ${r.error ?? JSON.stringify(r.body).slice(0, 300)}`);
  return { id, ms: r.ms };
}

async function boot(): Promise<Server> {
  // The server as users run it: compiled (npm start, the image), not the sources under tsx.
  must('npm', ['run', 'build']);
  const proc = await startQuire('bigdoc', { DATA_DIR: dataDir, RESOURCE_TTL_SECONDS: '0', LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' }, { built: true });
  const s = { proc };
  const assets: Assets = {
    image: (await upload(s, IMAGE)).id,
    attachment: (await upload(s, ATTACHMENT)).id,
    cert: (await upload(s, CERT)).id,
    key: (await upload(s, KEY)).id,
  };
  await new Promise((r) => setTimeout(r, 1000));
  const idleKb = Math.max(...[0, 1, 2].map(() => treeKb(proc.pid)));
  return { proc, assets, idleKb };
}

// ---------------------------------------------------------------------------------------------------------------
// Running

interface Result {
  op: Op;
  doc: Doc;
  /** HTTP status; 0: no answer (connection failed, timeout, server died); -1: skipped. */
  status: number;
  ms: number;
  message?: string;
  died?: boolean;
  rawMs?: number;
  rawError?: string;
  peakKb?: number;
  idleKb?: number;
  /** The tree's RSS when the request was sent. */
  startKb?: number;
  /** The machine's 1-minute load average when the request was sent. */
  load?: number;
}

const sec = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
const idsOf = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : typeof v === 'string' && v ? [v] : []);
const oneLine = (s: unknown) =>
  String(s ?? '')
    .replace(/\s+/g, ' ')
    .trim();

function describe(r: Result): string {
  if (r.status === -1) return `skipped: ${r.message}`;
  if (r.died) return `server died after ${sec(r.ms)}: ${r.message}`;
  if (r.status === 0) return `no answer after ${sec(r.ms)}: ${r.message}`;
  const ratio = r.rawMs !== undefined ? ` (${(r.ms / r.rawMs).toFixed(2)}x)` : '';
  const mem = r.peakKb !== undefined ? `, +${MB(Math.max(0, r.peakKb - r.idleKb!))} (+${MB(Math.max(0, r.peakKb - r.startKb!))})` : '';
  if (r.status !== 200) return `${r.status} after ${sec(r.ms)}${mem}: ${oneLine(r.message).slice(0, 120)}`;
  return `${sec(r.ms)}${ratio}${mem}${r.message ? ` (warning: ${oneLine(r.message).slice(0, 60)}...)` : ''}`;
}

function printRow(r: Result): void {
  const raw = r.op.raw ? `${r.op.raw[0]} ${r.rawError ? `failed (${r.rawError})` : r.rawMs !== undefined ? sec(r.rawMs) : '-'}` : '-';
  const cells = [r.doc.label.padEnd(14), labelOf(r.op).padEnd(46)];
  if (r.status === -1) {
    console.log(`${cells.join(' ')} skipped: ${r.message}`);
    return;
  }
  const status = r.died ? 'DIED' : r.status === 0 ? 'ERR' : String(r.status);
  const ratio = r.rawMs !== undefined && r.status === 200 ? `${(r.ms / r.rawMs).toFixed(2)}x` : '-';
  const mem =
    r.peakKb !== undefined ? `+${MB(Math.max(0, r.peakKb - r.idleKb!))} (peak ${MB(r.peakKb)}, +${MB(Math.max(0, r.peakKb - r.startKb!))} on its start)` : '';
  console.log(
    [...cells, status.padStart(4), sec(r.ms).padStart(9), `| raw: ${raw}`.padEnd(46), ratio.padStart(7), mem, `load ${r.load?.toFixed(1)}`].join(' ') +
      (r.message ? `\n${' '.repeat(16)}${r.status === 200 ? 'warning' : 'message'}: ${oneLine(r.message).slice(0, 300)}` : ''),
  );
}

/** Deletes stored outputs (POST /delete), so a run of hours does not fill the disk. */
async function remove(server: Server, ids: string[]): Promise<void> {
  if (ids.length) await call(server.proc.base, 'POST', '/delete', { json: { ids: ids.join(',') } });
}

/** The outputs kept for a later operation (`after`), per document. */
type Kept = Map<Doc, Map<string, string[]>>;

/** All documents uploaded again to a new server (ids change) after one took the server down. */
async function reboot(state: { server: Server }, docs: Doc[], kept: Kept): Promise<void> {
  state.server = await boot();
  for (const d of docs) d.id = (await upload(state.server, d.path)).id;
  kept.clear();
}

async function runOne(state: { server: Server }, docs: Doc[], doc: Doc, op: Op, kept: Kept, parents: Set<string>, quiet: boolean): Promise<Result> {
  const r: Result = { op, doc, status: -1, ms: 0 };
  const mine = kept.get(doc) ?? kept.set(doc, new Map()).get(doc)!;
  if (doc.kind === 'scan' && op.notOnScan) {
    r.message = `${op.notOnScan} (OCR-class, not run on the whole scan)`;
    if (!quiet) printRow(r);
    return r;
  }
  let id = doc.id;
  if (op.after) {
    const input = mine.get(op.after)?.[0];
    if (!input) {
      r.message = `no input: ${op.after} gave no output`;
      if (!quiet) printRow(r);
      return r;
    }
    id = input;
  }
  const { server } = state;
  const body = { id, ...(op.body?.(doc, server.assets) ?? {}) };
  r.load = loadavg()[0];
  const { value: answer, peakKb, startKb } = await sampled(server.proc.pid, () => call(server.proc.base, 'POST', op.path, { json: body }));
  Object.assign(r, { status: answer.status, ms: answer.ms, peakKb, startKb, idleKb: server.idleKb });
  if (answer.status === 200) r.message = answer.body?.warning;
  else r.message = answer.error ?? answer.body?.error ?? JSON.stringify(answer.body).slice(0, 300);
  const outputs = answer.status === 200 ? idsOf(answer.body?.outputId) : [];
  if (server.proc.exited) {
    // The job took the server down: say so, start another one, upload the documents again.
    r.died = true;
    r.message = `${r.message ?? ''}${tail(server.proc).split('\n').slice(-4).join(' | ')}`;
    if (!quiet) printRow(r);
    await reboot(state, docs, kept);
    return r;
  }
  if (op.raw && !quiet) {
    const raw = await runRaw(op.raw[1](doc, rawDir));
    r.rawMs = raw.ms;
    r.rawError = raw.error;
    if (raw.error) r.rawMs = undefined;
  }
  if (op.path && parents.has(op.path)) mine.set(op.path, outputs);
  else await remove(server, outputs);
  if (op.after) await remove(server, mine.get(op.after) ?? []);
  if (!quiet) printRow(r);
  return r;
}

/**
 * Each operation on every document in turn (smallest first), so the sizes an operation is compared across run
 * minutes apart, not hours: the growth per page is then measured under the same load.
 */
async function runAll(state: { server: Server }, docs: Doc[], ops: Op[], quiet = false): Promise<Result[]> {
  const results: Result[] = [];
  const kept: Kept = new Map();
  const parents = new Set(ops.map((o) => o.after).filter((p): p is string => !!p));
  for (const op of ops) for (const doc of docs) results.push(await runOne(state, docs, doc, op, kept, parents, quiet));
  return results;
}

// ---------------------------------------------------------------------------------------------------------------
// Summary

function summary(all: Result[], docs: Doc[], server: Server): void {
  const texts = docs.filter((d) => d.kind === 'text');
  const [small, large] = [texts[0], texts[texts.length - 1]];
  const find = (op: Op, d: Doc) => all.find((r) => r.op === op && r.doc === d);
  const perPage = (r: Result | undefined) => (r && r.status === 200 ? r.ms / r.doc.pages : undefined);

  if (texts.length) {
    console.log(`\n### Time per page (ms) at each text size, and growth (ms/page at ${large.label} / at ${small.label})`);
    console.log(`${'operation'.padEnd(46)} ${texts.map((d) => d.label.padStart(14)).join(' ')}   growth`);
    for (const op of selected) {
      const pp = texts.map((d) => perPage(find(op, d)));
      const growth = pp[0] !== undefined && pp.at(-1) !== undefined && texts.length > 1 ? `${(pp.at(-1)! / pp[0]!).toFixed(2)}x` : '-';
      console.log(`${labelOf(op).padEnd(46)} ${pp.map((p) => (p === undefined ? '-' : p.toFixed(2)).padStart(14)).join(' ')}   ${growth}`);
    }
  }

  const died = all.filter((r) => r.died);
  const failed = all.filter((r) => r.status !== 200 && r.status !== -1);
  console.log(`\n${all.filter((r) => r.status === 200).length} answered 200, ${failed.length} did not, ${died.length} took the server down`);
  for (const r of failed) console.log(`- ${r.doc.label} ${labelOf(r.op)}: ${describe(r)}`);

  const scan = docs.find((d) => d.kind === 'scan');
  const cols = [...texts, ...(scan ? [scan] : [])];
  const date = new Date().toISOString().slice(0, 10);
  console.log(
    `\n### Markdown (README)\n\nBig documents (\`npm run bench -- bigdoc\`, ${date}, ${availableParallelism()} cores, load ${loadavg()[0].toFixed(1)}): ` +
      `${docs.map((d) => `${d.label} ${(d.bytes / 1048576).toFixed(1)} MiB`).join(', ')}; idle server ${MB(server.idleKb)} (server + children). ` +
      'Each cell: the whole request (its ratio to the raw engine doing the same work in the same run), then the peak RSS of the server and its children above the idle server (above their RSS when the request was sent).\n',
  );
  const growthHead = texts.length > 1 ? [`s/page ${large.pages.toLocaleString('en')} ÷ ${small.pages.toLocaleString('en')}`] : [];
  const row = (cells: string[]) => console.log(`| ${cells.join(' | ')} |`);
  row(['operation', 'compared with', ...cols.map((d) => d.label), ...growthHead]);
  row(['---', '---', ...cols.map(() => '---'), ...growthHead.map(() => '---')]);
  for (const op of selected) {
    const cells = cols.map((d) => {
      const r = find(op, d);
      return r ? describe(r).replace(/\|/g, '\\|') : '-';
    });
    const pp = [perPage(find(op, small)), perPage(find(op, large))];
    const growth = texts.length > 1 ? [pp[0] !== undefined && pp[1] !== undefined ? `${(pp[1] / pp[0]).toFixed(2)}x` : '-'] : [];
    row([`\`${labelOf(op)}\``, op.raw ? `\`${op.raw[0]}\`` : '-', ...cells, ...growth]);
  }
}

// ---------------------------------------------------------------------------------------------------------------

async function main() {
  const missing = operations.map((o) => o.path).filter((p) => !OPS.some((op) => op.path === p) && !NOT_RUN[p]);
  console.log(
    `Text sizes ${TEXT_SIZES.join(', ')} pages, scan ${SCAN_PAGES} pages, ${selected.length} operations${ONLY.length ? ` (BIGDOC_OPS=${ONLY.join(',')})` : ''}; ` +
      `${availableParallelism()} cores, load ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
  );
  console.log(
    `Not run: ${Object.entries(NOT_RUN)
      .map(([p, why]) => `${p} (${why})`)
      .join(', ')}${missing.length ? `; NOT COVERED (add them): ${missing.join(', ')}` : ''}`,
  );

  const state = { server: await boot() };
  console.log(`Server pid ${state.server.proc.pid}, idle RSS ${MB(state.server.idleKb)} (server + children: ${breakdown(state.server.proc.pid)})`);
  const all: Result[] = [];
  const docs: Doc[] = [];
  try {
    if (WARMUP) {
      const t0 = performance.now();
      const warm: Doc = { label: 'warm-up', kind: 'text', pages: FED_PAGES, path: FED, bytes: statSync(FED).size, id: '' };
      warm.id = (await upload(state.server, FED)).id;
      const res = await runAll(state, [warm], selected, true);
      await remove(state.server, [warm.id]);
      const bad = res.filter((r) => r.status !== 200 && r.status !== -1);
      console.log(
        `Warm-up on the 15-page file: ${sec(performance.now() - t0)}, ${bad.length} not 200${bad.map((r) => `\n  ${r.op.path} ${r.status}: ${oneLine(r.message).slice(0, 200)}`).join('')}\n` +
          `Server + children after the warm-up: ${MB(treeKb(state.server.proc.pid))} (${breakdown(state.server.proc.pid)})`,
      );
    }
    const plans: Array<() => Promise<Omit<Doc, 'id'>>> = [
      ...TEXT_SIZES.map((n) => async () => textDoc(n)),
      ...(SCAN_PAGES > 0 ? [() => scanDoc(SCAN_PAGES)] : []),
    ];
    for (const plan of plans) {
      const t0 = performance.now();
      const made = await plan();
      const built = performance.now() - t0;
      const up = await upload(state.server, made.path);
      docs.push({ ...made, id: up.id });
      console.log(`${made.label}: ${(made.bytes / 1048576).toFixed(1)} MiB, built in ${sec(built)}, uploaded in ${sec(up.ms)}`);
    }
    console.log(
      `\n${'document'.padEnd(14)} ${'operation'.padEnd(46)} code      time   raw engine, same work, same run            ratio  RSS above idle (peak, above the RSS at its start)`,
    );
    all.push(...(await runAll(state, docs, selected)));
    await remove(
      state.server,
      docs.map((d) => d.id),
    );
    if (!KEEP) for (const d of docs) rmSync(d.path, { force: true });
    console.log(`\nServer + children at the end: ${MB(treeKb(state.server.proc.pid))} (${breakdown(state.server.proc.pid)})`);
    summary(all, docs, state.server);
  } finally {
    for (const p of [...started].reverse()) await stop(p);
    if (KEEP) console.log(`\nKept: ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
}

await main();
