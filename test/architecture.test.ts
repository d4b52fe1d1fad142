import { readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, sep } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EngineError } from '../engines/errors.js';
import { run } from '../engines/run.js';

const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
const imports = (file: string) => [...readFileSync(file, 'utf8').matchAll(/from '([^']+)'/g)].map((m) => m[1]);

test('engines never import app code; only engines/run.ts imports execa', () => {
  for (const f of files('engines')) {
    assert.not.ok(
      imports(f).some((i) => i.includes('/app/') || i.startsWith('../app')),
      f,
    );
    if (f !== join('engines', 'run.ts')) assert.not.ok(imports(f).includes('execa'), `${f} imports execa`);
  }
  for (const f of files('app')) assert.not.ok(imports(f).includes('execa') || imports(f).includes('node:child_process'), `${f} starts processes`);
});

test('only app/config.ts reads process.env', () => {
  for (const f of [...files('app'), ...files('engines')]) {
    if (f === join('app', 'config.ts')) continue;
    assert.not.match(readFileSync(f, 'utf8'), /process\.env\b(?!\.PATH)/, f);
  }
});

// Every folder of app/ other than these layers is a domain: shared logic named after what it owns.
const LAYERS = ['http', 'mcp', 'pipelines', 'requests', 'operations', 'jobs', 'store'];
const domains = readdirSync('app').filter((n) => statSync(join('app', n)).isDirectory() && !LAYERS.includes(n));
const folderOf = (from: string, spec: string) => {
  const parts = join(dirname(from), spec).split(sep);
  return parts[0] === 'app' && parts.length > 2 ? parts[1] : parts[0] === 'engines' ? 'engines' : parts[0] === 'app' ? 'app' : null;
};

test('domains: each has an index.ts whose header says what it owns', () => {
  assert.ok(domains.length >= 8, domains.join());
  for (const d of domains) {
    const index = readFileSync(join('app', d, 'index.ts'), 'utf8');
    assert.match(index, /^\/\*\*\n( \*.*\n){2,}/, `app/${d}/index.ts header`);
  }
});

test('domains: import engines and other domains, never http, operations, jobs or store', () => {
  for (const d of domains) {
    for (const f of files(join('app', d))) {
      for (const i of imports(f).filter((i) => i.startsWith('.'))) {
        const to = folderOf(f, i);
        assert.not.ok(to && LAYERS.includes(to), `${f} imports ${i}`);
      }
    }
  }
});

test('domains: reached from outside only through their index.ts, and without cycles', () => {
  const edges = new Map(domains.map((d) => [d, new Set<string>()]));
  for (const f of [...files('app'), ...files('test'), ...files('scripts')]) {
    const parts = f.split(sep);
    const from = parts[0] === 'app' && parts.length > 2 ? parts[1] : null;
    for (const i of imports(f).filter((i) => i.startsWith('.'))) {
      const to = folderOf(f, i);
      if (!to || !domains.includes(to) || to === from) continue;
      assert.ok(i.endsWith(`${to}/index.js`), `${f} imports ${i} (use app/${to}/index.js)`);
      if (from && domains.includes(from)) edges.get(from)!.add(to);
    }
  }
  const seen = new Set<string>();
  const visit = (d: string, path: string[]) => {
    assert.not.ok(path.includes(d), `domain import cycle: ${[...path, d].join(' -> ')}`);
    if (seen.has(d)) return;
    for (const next of edges.get(d)!) visit(next, [...path, d]);
    seen.add(d);
  };
  for (const d of domains) visit(d, []);
});

// app/http is one front door among several (MCP, pipelines, watched folders): what they share lives in app/requests.
// app/server.ts assembles the doors, so it alone mounts the HTTP routes.
test('front doors: nothing outside app/http imports it but app/server.ts', () => {
  for (const f of [...files('app'), ...files('engines'), ...files('test'), ...files('scripts')]) {
    if (f.startsWith(join('app', 'http') + sep) || f === join('app', 'server.ts')) continue;
    for (const i of imports(f).filter((i) => i.startsWith('.'))) assert.not.ok(join(dirname(f), i).startsWith(join('app', 'http') + sep), `${f} imports ${i}`);
  }
});

// An operation is a declaration plus a call into its domain: engines are called from the domain that owns the work.
test('operations: none imports an engine', () => {
  const callers = files(join('app', 'operations')).filter((f) => imports(f).some((i) => i.startsWith('../../engines/')));
  assert.equal(callers, [], 'operation files importing engines: move the engine calls into the domain folder that owns them');
});

test('operations do not reach into submission, job execution or jobs', () => {
  for (const f of files(join('app', 'operations'))) {
    for (const i of imports(f)) assert.not.ok(/\/jobs\/|\/requests\/(submit|execute|uploads|webhooks|metrics)\.js/.test(i), `${f} imports ${i}`);
  }
});

test('run: minimal environment, job dir as cwd and HOME, typed error with stderr tail', async () => {
  const cwd = tmpdir();
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template
  const r = await run('sh', ['-c', 'echo "$HOME|$PWD|${API_KEYS:-unset}|$LANG"'], { cwd });
  assert.is(r.stdout.trim(), `${cwd}|${cwd}|unset|C.UTF-8`);
  try {
    await run('sh', ['-c', 'echo boom >&2; exit 7'], { cwd });
    assert.unreachable();
  } catch (e) {
    assert.instance(e, EngineError);
    assert.is((e as EngineError).details.exitCode, 7);
    assert.match((e as EngineError).details.stderr ?? '', /boom/);
  }
  try {
    await run('no-such-tool-quire', [], { cwd });
    assert.unreachable();
  } catch (e) {
    assert.instance(e, EngineError);
  }
});

test('run: arguments are never interpreted by a shell', async () => {
  const r = await run('echo', ['$(id)', '; rm -rf /', '`x`'], { cwd: tmpdir() });
  assert.is(r.stdout.trim(), '$(id) ; rm -rf / `x`');
});

test('run: timeout kills the process and reports timedOut', async () => {
  const started = Date.now();
  try {
    await run('sleep', ['20'], { cwd: tmpdir(), timeoutMs: 300 });
    assert.unreachable();
  } catch (e) {
    assert.ok((e as EngineError).details.timedOut);
  }
  assert.ok(Date.now() - started < 5000);
});

test.run();
