// npm run bench: runs every scripts/bench/*.bench.ts in turn (or those whose name contains an argument).
// Arguments naming an existing file or folder are passed to the selected benches instead (e.g. the extra folders
// of `npm run bench -- realworld <folder>`): a path is input, not a name filter.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const dir = new URL('.', import.meta.url).pathname;
const paths = process.argv.slice(2).filter((a) => existsSync(a));
const only = process.argv.slice(2).filter((a) => !existsSync(a));
for (const f of readdirSync(dir)
  .filter((n) => n.endsWith('.bench.ts'))
  .sort()) {
  if (only.length && !only.some((o) => f.includes(o))) continue;
  console.log(`\n## ${f}`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(dir, f), ...paths], { stdio: 'inherit' });
  if (r.status !== 0) console.log(`(${f} exited with ${r.status})`);
}
