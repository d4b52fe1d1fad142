// npm run bench: runs every scripts/bench/*.bench.ts in turn (or those whose name contains an argument).
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const dir = new URL('.', import.meta.url).pathname;
const only = process.argv.slice(2);
for (const f of readdirSync(dir).filter((n) => n.endsWith('.bench.ts')).sort()) {
  if (only.length && !only.some((o) => f.includes(o))) continue;
  console.log(`\n## ${f}`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(dir, f)], { stdio: 'inherit' });
  if (r.status !== 0) console.log(`(${f} exited with ${r.status})`);
}
