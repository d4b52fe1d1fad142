import { randomBytes } from 'node:crypto';
import { getEventListeners } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodedText, MAX_LISTED_PAGES, resolvePages, selectedPages } from '../app/document/index.js';
import { EngineError } from '../engines/errors.js';
import { pageArg } from '../engines/mupdf-stext.js';
import { pageCount } from '../engines/qpdf.js';
import { onRun, run } from '../engines/run.js';
import { pdfFromObjects, pngOf, zerosZlib } from './fixtures.js';
import { corpus, type FormValue, sleep, startApp, type TestApp } from './helpers.js';

/**
 * Issue 19: hostile inputs that hung the service or exhausted its memory. Each is built here, sent while `/up`
 * is probed, and must come back fast as a 4xx (or a bounded, correct result) without the server's memory growing
 * by gigabytes: page trees claiming 2^31 pages, images that decode to billions of pixels, multipart headers busboy
 * cannot parse, engine stderr in the log, and abort listeners piling up on one signal.
 * "Fast" is measured against an ordinary request of the same kind sent just before (same endpoint, an honest
 * input of about the same size), so the verdict holds on a machine ten times slower or faster than this one.
 */

let t: TestApp;
const work = mkdtempSync(join(tmpdir(), 'quire-hostile-'));
test.before(async () => {
  t = await startApp();
});
test.after(async () => {
  await t.close();
  rmSync(work, { recursive: true, force: true });
});

// ---------------------------------------------------------------- builders

/** Two real pages saying "Hello", under a page tree whose /Count claims `count`. */
function claimingPages(count: string): Buffer {
  const text = 'BT /F1 24 Tf 20 100 Td (Hello) Tj ET';
  return pdfFromObjects([
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [3 0 R 4 0 R] /Count ${count} >>`,
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Resources << /Font << /F1 6 0 R >> >> /Contents 5 0 R >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Resources << /Font << /F1 6 0 R >> >> /Contents 5 0 R >>',
    `<< /Length ${text.length} >>\nstream\n${text}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ]);
}

/** A valid 8-bit grey PNG of w x h black pixels: ~875 KB for 30000 x 30000 (900 MB decoded). */
const blackPng = (w: number, h: number) => pngOf(w, h, 0, zerosZlib((w + 1) * h));

/** A grey PNG of w x h random pixels: as many bytes as it has pixels (noise does not compress). */
const noisePng = (w: number, h: number) => {
  const rows = randomBytes((w + 1) * h);
  for (let y = 0; y < h; y++) rows[y * (w + 1)] = 0; // filter type None
  return pngOf(w, h, 0, deflateSync(rows));
};

/**
 * A 24-bit BMP of w x h pixels followed by `pixels`: by default none, only a header claiming them (refused on the
 * header, before decodeBmp allocates).
 */
function bmpClaiming(w: number, h: number, pixels = Buffer.alloc(16)): Buffer {
  const b = Buffer.concat([Buffer.alloc(54), pixels]);
  b.write('BM', 0, 'latin1');
  b.writeUInt32LE(b.length, 2);
  b.writeUInt32LE(54, 10);
  b.writeUInt32LE(40, 14);
  b.writeInt32LE(w, 18);
  b.writeInt32LE(h, 22);
  b.writeUInt16LE(1, 26);
  b.writeUInt16LE(24, 28);
  return b;
}

/** A grey Flate image object of w x h black pixels (its data inflates to w*h bytes). */
const greyImage = (w: number, h: number, data = zerosZlib(w * h)) =>
  Buffer.concat([
    Buffer.from(
      `<< /Type /XObject /Subtype /Image /Width ${w} /Height ${h} /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode /Length ${data.length} >>\nstream\n`,
    ),
    data,
    Buffer.from('\nendstream'),
  ]);

/** One page per image, each drawn over the whole page. */
function pdfWithImages(images: Buffer[]): Buffer {
  const n = images.length;
  const draw = 'q 200 0 0 200 0 0 cm /Im1 Do Q';
  // 1 catalog, 2 pages, 3 contents, then page k at 4+2k and its image at 5+2k.
  const objs: (string | Buffer)[] = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${images.map((_, k) => `${4 + 2 * k} 0 R`).join(' ')}] /Count ${n} >>`,
    `<< /Length ${draw.length} >>\nstream\n${draw}\nendstream`,
  ];
  images.forEach((im, k) => {
    objs.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Resources << /XObject << /Im1 ${5 + 2 * k} 0 R >> >> /Contents 3 0 R >>`);
    objs.push(im);
  });
  return pdfFromObjects(objs);
}

// ---------------------------------------------------------------- probing

interface Outcome {
  res: Response;
  body: Record<string, unknown>;
  /** Until the answer, and the `/up` probe after it (50 ms at least, so even a trivial request counts some time). */
  ms: number;
  /** The slowest `/up` answer while the hostile request ran. */
  upWorstMs: number;
  /** Growth of this process's RSS over the request (sampled). */
  rssGrowthMB: number;
}

/**
 * How many times as long as an ordinary request of the same kind a hostile one may take: far more than the jitter
 * between two requests, far less than processing what the input claims.
 */
const SLOWER = 10;

/**
 * Sends one request while `/up` is asked every 50 ms. With `ordinary`, the outcome of the same kind of request
 * with an honest input, it fails once SLOWER times that is over (a hang fails soon); without, only after ten
 * minutes (the ordinary request itself, however slow the machine).
 */
async function hostile(send: () => Promise<Response>, ordinary?: Outcome): Promise<Outcome> {
  const limitMs = ordinary ? SLOWER * ordinary.ms : 600_000;
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const started = Date.now();
  let done = false;
  let upWorstMs = 0;
  const request = send().finally(() => (done = true));
  const probe = (async () => {
    while (!done) {
      const s = Date.now();
      const up = await t.request('/up');
      assert.is(up.status, 200);
      upWorstMs = Math.max(upWorstMs, Date.now() - s);
      await sleep(50);
    }
  })();
  let timer: NodeJS.Timeout | undefined;
  let res: Response;
  try {
    res = await Promise.race([
      request,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${limitMs} ms`)), limitMs))),
    ]).finally(() => clearTimeout(timer));
    await probe;
  } finally {
    clearInterval(sampler);
  }
  const text = await res.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { text };
  }
  return { res, body, ms: Date.now() - started, upWorstMs, rssGrowthMB: Math.round((peak - rss0) / 1048576) };
}

/** An ordinary request for the bounds of hostile ones of its kind: it must succeed. */
async function ordinary(send: () => Promise<Response>, what: string): Promise<Outcome> {
  const o = await hostile(send);
  assert.is(o.res.status, 200, `ordinary ${what}: ${JSON.stringify(o.body)}`);
  return o;
}

/**
 * The server kept answering, stayed small and answered about as fast as it does an ordinary request of the kind:
 * the input was cut early, not processed as far as it claims. `/up` waits at most 2 s (a blocked event loop
 * waits as long as the hostile work), or the whole ordinary request on a machine too slow for that.
 */
function bounded(o: Outcome, what: string, ordinary: Outcome) {
  assert.ok(o.ms < SLOWER * ordinary.ms, `${what}: took ${o.ms} ms, an ordinary request of the kind ${ordinary.ms} ms`);
  assert.ok(o.upWorstMs < Math.max(2000, ordinary.ms), `${what}: /up took ${o.upWorstMs} ms meanwhile (an ordinary request ${ordinary.ms} ms)`);
  assert.ok(o.rssGrowthMB < 1024, `${what}: the server grew by ${o.rssGrowthMB} MB`);
  assert.ok(o.res.status < 500, `${what}: ${o.res.status} ${JSON.stringify(o.body)}`);
}

/**
 * `hostile` held to `bounded`, sent again while over its time bounds (three times at most): a busy machine may stall
 * one request for longer than a trivial one takes (~50 ms, the bound ~0.5 s), an input processed as far as it
 * claims is as slow each time.
 */
async function boundedHostile(send: () => Promise<Response>, what: string, ordinary: Outcome): Promise<Outcome> {
  for (let attempt = 1; ; attempt++) {
    const o = await hostile(send, ordinary).catch((err: unknown) => {
      if (attempt === 3) throw err;
      return undefined;
    });
    if (o && (attempt === 3 || (o.ms < SLOWER * ordinary.ms && o.upWorstMs < Math.max(2000, ordinary.ms)))) {
      bounded(o, what, ordinary);
      return o;
    }
  }
}

const form = (path: string, fields: Record<string, FormValue>) => () => {
  const fd = new FormData();
  for (const [k, v] of Object.entries(fields)) {
    if (typeof v === 'string') fd.append(k, v);
    else if ('bytes' in v) fd.append(k, new Blob([v.bytes]), v.name);
    else throw new Error('bytes only');
  }
  return t.request(path, { method: 'POST', body: fd });
};

// ---------------------------------------------------------------- 1. page trees claiming huge counts

const CLAIMS = ['2147483647', '999999999999', '-5'];

test('page count: the real page tree, not the /Count a file claims', async () => {
  for (const claim of CLAIMS) {
    const file = join(work, `claims-${claim}.pdf`);
    writeFileSync(file, claimingPages(claim));
    assert.is(await pageCount(file, { cwd: work }), 2, `/Count ${claim}`);
  }
});

test('page selections: never listed beyond the pages that exist', () => {
  // Repeats are merged before anything is listed: each page once, ascending.
  const many = Array(50_000).fill('1-last').join(',');
  assert.equal(selectedPages(many, 10), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  assert.equal(selectedPages('7-9,1-3,2,8,even', 10, { reverse: true, parity: true }), [1, 2, 3, 4, 6, 7, 8, 9, 10]);
  assert.equal(selectedPages('odd', 5, { parity: true }), [1, 3, 5]);
  assert.throws(() => selectedPages('3', 2), /3 is not within the acceptable range for pages/);
  // In the order asked, repeats kept, but counted first: no list longer than max(pages, MAX_LISTED_PAGES).
  assert.equal(resolvePages('3,1-2,2', 3), [3, 1, 2, 2]);
  const err = (() => {
    try {
      resolvePages(many, 10);
    } catch (e) {
      return e as Error & { status: number };
    }
  })();
  assert.is(err?.status, 400);
  assert.match(err!.message, new RegExp(`lists 500000 pages, more than the ${MAX_LISTED_PAGES}`));
  assert.ok(err!.message.length < 400, 'the selection is not echoed whole');
  // MuPDF's page list: runs as ranges (an argument stays far below the kernel's 128 KB), order kept, never "N".
  assert.is(pageArg(Array.from({ length: 30_000 }, (_, i) => i + 1)), '1-30000');
  assert.is(pageArg([5, 1, 2, 3, 9]), '5,1-3,9');
  assert.throws(
    () => pageArg([]),
    (e: unknown) => e instanceof EngineError,
  );
});

test('page trees claiming 2^31, 10^12 or -5 pages: fast and bounded on every reading endpoint, correct where readable', async () => {
  const ENDPOINTS: Record<string, Record<string, FormValue>> = {
    '/extracted-text': {},
    '/markdown': {},
    '/png': { resolution: '36' },
    '/pdf-with-ocr-text': {},
    '/split-pdf': {},
    '/extracted-images': {},
    '/word': {},
    '/jpg': { resolution: '36' },
  };
  for (const [path, fields] of Object.entries(ENDPOINTS)) {
    // The same two pages under their true /Count, and under /Count 0: a broken tree, repaired (qpdf, MuPDF,
    // Ghostscript) as those claiming 10^12 or -5 pages are. The hostile files hold no more work than the slower.
    const plainCount = (count: string) => form(path, { file: { bytes: claimingPages(count), name: 'plain.pdf' }, ...fields });
    const whole = await ordinary(plainCount('2'), path);
    const repaired = await ordinary(plainCount('0'), `${path} with /Count 0`);
    const plain = whole.ms > repaired.ms ? whole : repaired;
    for (const claim of CLAIMS) {
      const pdf = { bytes: claimingPages(claim), name: `claims-${claim}.pdf` };
      const what = `${path} with /Count ${claim}`;
      const o = await boundedHostile(form(path, { file: pdf, ...fields }), what, plain);
      assert.ok([200, 400].includes(o.res.status), `${what}: ${o.res.status} ${JSON.stringify(o.body)}`);
      if (o.res.status !== 200) continue;
      // A result is that of the two real pages.
      if (path === '/extracted-text') assert.is((o.body.fullText as string).match(/Hello/g)?.length, 2, what);
      if (path === '/markdown') assert.is((o.body.markdown as string).match(/Hello/g)?.length, 2, what);
      if (['/png', '/split-pdf', '/jpg'].includes(path)) assert.is((o.body.outputId as string[]).length, 2, what);
      // Nothing to recognise (the pages carry text): the file comes back as it was, its two pages with it.
      if (path === '/pdf-with-ocr-text') assert.is(await pageCount(await t.download(String(o.body.outputUrl)), { cwd: work }), 2, what);
    }
  }
  // The claimed pages do not exist: asking for one is a 400 naming pages.
  const third = await hostile(form('/extracted-text', { file: { bytes: claimingPages('2147483647'), name: 'c.pdf' }, pages: '3' }));
  assert.is(third.res.status, 400);
  assert.match(String(third.body.error), /3 is not within the acceptable range for pages/);
});

// ---------------------------------------------------------------- 2. images decoding to billions of pixels

const HUGE_PNG = blackPng(30_000, 30_000);

test('image inputs above MAX_IMAGE_PIXELS: 422 naming the setting, refused on the header', async () => {
  assert.ok(HUGE_PNG.length < 1_000_000, `the PNG is ${HUGE_PNG.length} bytes`);
  const png = { bytes: HUGE_PNG, name: 'huge.png' };
  // Ordinary images of about the same size in bytes, with a thousandth of the pixels: decoded whole in the time
  // the huge ones may take to be refused.
  const plainPng = { bytes: noisePng(1000, 900), name: 'plain.png' };
  const plainBmp = { bytes: bmpClaiming(520, 580, randomBytes(1560 * 580)), name: 'plain.bmp' };
  const page = { bytes: claimingPages('2'), name: 'doc.pdf' };
  const cases: [string, FormValue, FormValue, (image: FormValue) => () => Promise<Response>][] = [
    ['/pdf PNG', png, plainPng, (image) => form('/pdf', { file: image })],
    ['/pdf BMP header', { bytes: bmpClaiming(40_000, 40_000), name: 'huge.bmp' }, plainBmp, (image) => form('/pdf', { file: image })],
    ['/pdf-with-added-image', png, plainPng, (image) => form('/pdf-with-added-image', { file: page, image_file: image, x: '10', y: '10', page: '1' })],
    [
      '/signed-pdf logo',
      png,
      plainPng,
      (image) =>
        form('/signed-pdf', {
          file: page,
          certificate_file: { bytes: Buffer.from(readCorpus('signing/gotenberg-localhost-selfsigned-cert.pem')), name: 'cert.pem' },
          private_key_file: { bytes: Buffer.from(readCorpus('signing/gotenberg-localhost-selfsigned-key.pem')), name: 'key.pem' },
          logo_file: image,
          signature_configuration: JSON.stringify({ type: 'new', location: { bottom_left: { x: 10, y: 10 }, top_right: { x: 150, y: 60 }, page: 1 } }),
        }),
    ],
  ];
  for (const [what, huge, plain, send] of cases) {
    const plainOutcome = await ordinary(send(plain), what);
    const o = await boundedHostile(send(huge), what, plainOutcome);
    assert.is(o.res.status, 422, `${what}: ${JSON.stringify(o.body)}`);
    assert.match(String(o.body.error), /MAX_IMAGE_PIXELS=100000000/, what);
  }
});

test('MAX_IMAGE_PIXELS is the setting: a small limit refuses an ordinary image, the default takes it', async () => {
  const small = await startApp({ MAX_IMAGE_PIXELS: '1000' });
  try {
    const res = await small.form('/pdf', { file: { file: corpus('images/hopper.png') } });
    assert.is(res.status, 422);
    assert.match(((await res.json()) as { error: string }).error, /hopper\.png \(\d+x\d+ pixels\).*MAX_IMAGE_PIXELS=1000\b/);
  } finally {
    await small.close();
  }
  const ok = await t.form('/pdf', { file: { file: corpus('images/hopper.png') } });
  assert.is(ok.status, 200);
  // JPEGs still go in as they are (no decoding): the output holds the DCT stream.
  const jpg = await t.form('/pdf', { file: { file: corpus('images/hopper.jpg') } });
  assert.is(jpg.status, 200);
});

// ---------------------------------------------------------------- 3. multipart headers busboy cannot parse

const BOUNDARY = 'QuireHostileBoundary';
function multipart(filename: string, opts: { close?: boolean; field?: string } = {}): Buffer {
  const head = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${opts.field ?? 'file'}"; filename="${filename}"\r\nContent-Type: application/pdf\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), claimingPages('2'), Buffer.from(opts.close === false ? '' : `\r\n--${BOUNDARY}--\r\n`, 'latin1')]);
}
const raw = (path: string, body: Buffer) => () =>
  t.request(path, { method: 'POST', body, headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` } });

test('multipart: a NUL byte in a file name, control characters, a cut body: 400 at once, nothing stored', async () => {
  const PATHS = ['/upload', '/split-pdf', '/extracted-text'];
  // The same body with a plain name is taken: the ordinary request of each kind.
  const plain = new Map<string, Outcome>();
  for (const path of PATHS) plain.set(path, await ordinary(raw(path, multipart('plain.pdf')), path));
  const names = () => readdirSync(join(t.dataDir, 'resources'));
  const resources = () => names().length;
  const known = new Set(names());
  const before = resources();
  const cases: [string, Buffer][] = [
    ['NUL in the file name', multipart('a\0b.pdf')],
    ['only a NUL', multipart('\0')],
    ['NUL before the extension', multipart('x.pdf\0.exe')],
    ['control characters', multipart('\u0001\u0002.pdf')],
    ['a body cut inside the file', multipart('cut.pdf', { close: false })],
    ['a part header that never ends', Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="x.pdf"\r\n`, 'latin1')],
  ];
  for (const path of PATHS) {
    for (const [what, body] of cases) {
      const o = await boundedHostile(raw(path, body), `${path} ${what}`, plain.get(path)!);
      assert.is(o.res.status, 400, `${path} ${what}: ${o.res.status} ${JSON.stringify(o.body)}`);
      assert.match(String(o.body.error), /multipart|upload/i, `${path} ${what}`);
    }
  }
  assert.is(
    resources(),
    before,
    `the uploads of refused requests are removed (left: ${names()
      .filter((n) => !known.has(n))
      .join(', ')})`,
  );
});

// ---------------------------------------------------------------- 4. extracted images inflating past the limit

test('/extracted-images: an image inflating to 48000x48000 is not written; 422 naming MAX_IMAGE_PIXELS, or a warning when others remain', async () => {
  const bomb = greyImage(48_000, 48_000);
  assert.ok(bomb.length < 3_000_000);
  const small = greyImage(20, 10, deflateSync(Buffer.alloc(200, 128)));
  // An ordinary image of about the bomb's size in bytes (noise does not compress), beside the small one.
  const plainImage = greyImage(1500, 1500, deflateSync(randomBytes(1500 * 1500)));
  const plain = await ordinary(form('/extracted-images', { file: { bytes: pdfWithImages([plainImage, small]), name: 'plain.pdf' } }), 'images');
  assert.is((plain.body.outputId as string[]).length, 2);

  const alone = await boundedHostile(form('/extracted-images', { file: { bytes: pdfWithImages([bomb]), name: 'bomb.pdf' } }), 'bomb alone', plain);
  assert.is(alone.res.status, 422, JSON.stringify(alone.body));
  assert.match(String(alone.body.error), /48000x48000 pixels.*MAX_IMAGE_PIXELS=100000000/);

  // With an ordinary image on the next page: that one is extracted, the bomb's page named in the warning.
  const mixed = await boundedHostile(
    form('/extracted-images', { file: { bytes: pdfWithImages([bomb, small]), name: 'mixed.pdf' } }),
    'bomb and a small image',
    plain,
  );
  assert.is(mixed.res.status, 200, JSON.stringify(mixed.body));
  assert.is((mixed.body.outputId as string[]).length, 1);
  assert.match(String(mixed.body.warning), /Page 1 holds an image larger than the limit MAX_IMAGE_PIXELS=100000000/);
  const names = await t.request(`/resource/${(mixed.body.outputId as string[])[0]}?format=info`).then((r) => r.json() as Promise<{ name: string }>);
  assert.match(names.name, /-img001-page002\.png$/);

  // Selecting only the small image's page needs nothing of the bomb.
  const second = await hostile(form('/extracted-images', { file: { bytes: pdfWithImages([bomb, small]), name: 'mixed.pdf' }, pages: '2' }));
  assert.is(second.res.status, 200);
  assert.is(second.body.warning, undefined);
});

// ---------------------------------------------------------------- 5. engine stderr and abort listeners

test('engine stderr is text, trimmed, in errors and for the log, also for binary runs', async () => {
  const seen: string[] = [];
  onRun((e) => e.tool === 'sh' && seen.push(e.stderr));
  for (const binary of [false, true]) {
    const err = await run('sh', ['-c', 'printf "first line\\nbad thing happened\\n" >&2; exit 2'], { cwd: work, binary }).catch((e: unknown) => e);
    assert.instance(err, EngineError);
    assert.is((err as EngineError).details.stderr, 'first line\nbad thing happened');
  }
  assert.equal(seen, ['first line\nbad thing happened', 'first line\nbad thing happened']);
});

/** Counts the abort listeners of `signal` each time one is added: the most it held at once. */
function watchListeners(signal: AbortSignal): () => number {
  let peak = 0;
  const add = signal.addEventListener.bind(signal);
  signal.addEventListener = ((...args: Parameters<AbortSignal['addEventListener']>) => {
    add(...args);
    peak = Math.max(peak, getEventListeners(signal, 'abort').length);
  }) as AbortSignal['addEventListener'];
  return () => peak;
}

test('abort listeners: 30 engine calls on one signal leave none behind, whatever their end', async () => {
  const controller = new AbortController();
  const { signal } = controller;
  const peak = watchListeners(signal);
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.name);
  process.on('warning', onWarning);
  try {
    const kinds: [string, string[], object][] = [
      ['true', [], {}],
      ['false', [], {}],
      ['quire-no-such-tool', [], {}],
      ['sleep', ['5'], { timeoutMs: 50 }],
      ['sh', ['-c', 'head -c 5000 /dev/zero'], { maxBuffer: 100 }],
      ['sh', ['-c', 'echo x >&2; exit 3'], { binary: true }],
    ];
    for (let i = 0; i < 30; i++) {
      const [tool, args, o] = kinds[i % kinds.length];
      await run(tool, args, { cwd: work, signal, ...o }).catch(() => undefined);
    }
    assert.is(getEventListeners(signal, 'abort').length, 0, 'after 30 sequential calls');
    assert.ok(peak() <= 2, `sequential calls held ${peak()} listeners at once`);

    // A text read whose pages MuPDF cannot decode (14 pages with Symbol/ZapfDingbats) reads them with Poppler:
    // a few processes at a time, not one per page at once.
    await decodedText(
      corpus('pdf/standard-14-fonts-14-pages.pdf'),
      Array.from({ length: 14 }, (_, i) => i + 1),
      { cwd: work, signal },
    );
    assert.is(getEventListeners(signal, 'abort').length, 0, 'after the text read');
    assert.ok(peak() <= 4, `the text read held ${peak()} listeners at once`);
  } finally {
    process.off('warning', onWarning);
  }
  assert.not.ok(warnings.includes('MaxListenersExceededWarning'), warnings.join(', '));
});

test('abort listeners: jobs run for one client signal leave none on it', async () => {
  const client = new AbortController();
  for (let i = 0; i < 30; i++) {
    await t.deps.jobs.submit(async () => ({ ok: true }), { owner: null, clientSignal: client.signal, cost: { lane: 'light' } }).done;
    assert.is(getEventListeners(client.signal, 'abort').length, 0, `after job ${i + 1}`);
  }
});

function readCorpus(rel: string): string {
  return readFileSync(corpus(rel), 'utf8');
}

test.run();
