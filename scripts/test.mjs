// Runs the whole uvu suite (TypeScript through tsx) and ends with one line: "N passed, N failed".
// The suites run on the Node.js major the Docker image ships (24, a pinned binary from the npm registry, fetched
// once by scripts/fetch-node.sh), whatever Node runs this script; QUIRE_TEST_NODE=<path of a node binary> runs
// them on that one instead (the machine's: QUIRE_TEST_NODE=$(command -v node)).
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const files = [];
const walk = (dir) => {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (name.endsWith('.test.ts')) files.push(p);
  }
};
walk('test');
const only = process.argv.slice(2);
const selected = only.length ? files.filter((f) => only.some((o) => f.includes(o))) : files;

const node = process.env.QUIRE_TEST_NODE || execFileSync('bash', ['scripts/fetch-node.sh', '24'], { encoding: 'utf8' }).trim();
console.log(`== the suite on Node ${execFileSync(node, ['--version'], { encoding: 'utf8' }).trim()} (${node})`);

let passed = 0;
let failed = 0;
// One process per file: a crash or a leaked handle in one suite cannot hide the others' results.
for (const file of selected) {
  const { code, out } = await new Promise((resolve) => {
    const child = spawn(node, ['--import', 'tsx', file], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, NODE_ENV: 'test' },
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      process.stdout.write(d);
    });
    child.on('close', (code) => resolve({ code, out }));
  });
  const clean = out.replace(/\x1b\[[0-9;]*m/g, '');
  const total = Number(/Total:\s+(\d+)/.exec(clean)?.[1] ?? 0);
  const ok = Number(/Passed:\s+(\d+)/.exec(clean)?.[1] ?? 0);
  const skipped = Number(/Skipped:\s+(\d+)/.exec(clean)?.[1] ?? 0);
  passed += ok;
  let bad = total - ok - skipped;
  if (code !== 0 && bad === 0) bad = 1; // the file crashed before uvu could count
  if (bad) console.log(`FAILED: ${file} (${bad})`);
  failed += bad;
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
