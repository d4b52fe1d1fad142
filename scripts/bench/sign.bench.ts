// npx tsx scripts/bench/sign.bench.ts: /signed-pdf's work (lib/sign.ts: pdf-lib incremental update, @signpdf byte
// range, `openssl cms` over the byte range) against the native floor measured in the same run: `openssl cms -sign`
// of the same file, which hashes the same bytes and makes the same RSA-2048 SHA-256 signature but writes no PDF.
// Best of 3.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fromPem, type SignRequest, signPdf } from '../../app/sign/index.js';

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const REGISTER = resolve(root, '../shared/corpus/pdf/federal-register-15-pages.pdf');
const work = mkdtempSync(join(tmpdir(), 'quire-bench-sign-'));
const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: work, stdio: ['ignore', 'pipe', 'pipe'] });

// The register's pages without its certification (which allows no change), once and 20 times over.
const FIFTEEN = join(work, 'fifteen.pdf');
const THREE_HUNDRED = join(work, 'three-hundred.pdf');
spawnSync('qpdf', ['--empty', '--pages', REGISTER, '1-15', '--', FIFTEEN]);
spawnSync('qpdf', ['--empty', '--pages', ...Array(20).fill([FIFTEEN, '1-15']).flat(), '--', THREE_HUNDRED]);
// Bytes rather than pages: the 15 pages carrying a 30 MB attachment, all of which the signature hashes.
const BIG = join(work, 'fifteen-30mb.pdf');
writeFileSync(join(work, 'blob.bin'), randomBytes(30 * 1048576));
spawnSync('qpdf', [FIFTEEN, '--add-attachment', join(work, 'blob.bin'), '--', BIG]);
openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '1', '-subj', '/CN=Bench Signer');
const creds = fromPem(readFileSync(join(work, 'cert.pem')), readFileSync(join(work, 'key.pem')));

const best = async (fn: () => unknown) => {
  let min = Infinity;
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    await fn();
    min = Math.min(min, performance.now() - t0);
  }
  return min / 1000;
};

const request = (visible: boolean): SignRequest => ({
  placement: visible ? { page: 1, rect: [300, 40, 560, 130] } : undefined,
  lines: ['Digitally signed by Bench Signer', "Date: 2024.01.01 00:00:00 +00'00'"],
  logoOpacity: 0.5,
  name: 'Bench Signer',
  time: new Date(),
});

async function main() {
  console.log('input | MB | ours invisible s | ours visible s | openssl cms s | ours / openssl');
  for (const [label, path] of [
    ['15 pages', FIFTEEN],
    ['300 pages', THREE_HUNDRED],
    ['15 pages + 30 MB attachment', BIG],
  ] as const) {
    const bytes = readFileSync(path);
    const invisible = await best(() => signPdf(bytes, creds, request(false), { cwd: work }));
    const visible = await best(() => signPdf(bytes, creds, request(true), { cwd: work }));
    const native = await best(() =>
      openssl('cms', '-sign', '-binary', '-md', 'sha256', '-in', path, '-signer', 'cert.pem', '-inkey', 'key.pem', '-outform', 'DER', '-out', 'sig.der'),
    );
    const mb = (statSync(path).size / 1048576).toFixed(1);
    console.log(`${label} | ${mb} | ${invisible.toFixed(3)} | ${visible.toFixed(3)} | ${native.toFixed(3)} | ${(invisible / native).toFixed(1)}x`);
  }
}

main().finally(() => rmSync(work, { recursive: true, force: true }));
