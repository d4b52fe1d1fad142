// Checks a built Quire image (scripts/image.sh builds it and then runs this): the image's declarations, its packages,
// compose.yaml against the code the image ships, and the server it runs, through HTTP. Every command is started with
// an argument list (execFileSync/spawn), never through a shell. Usage: node scripts/image-check.mjs <image> [<base>]
//   1. Declarations: the user the Dockerfile's USER names (not root), DATA_DIR a declared VOLUME, HEALTHCHECK, tini.
//   2. Packages (dpkg inside the image): every runtime package of scripts/apt-packages.txt installed, none of the test
//      tools of scripts/apt-packages-test.txt (redis-server, qrencode, ...).
//   3. compose.yaml: every variable it sets or shows is read by app/config.ts; each service's environment and each
//      commented example load without problems in the image's own config code (dist/app/config.js); what its
//      comments state is true there (CONCURRENCY's default formula, STOP_GRACE_SECONDS and stop_grace_period, tini).
//   4. The server, started as the image declares it (ENTRYPOINT + CMD, its user, its environment) by
//      `buildah run --isolation chroot --network host` on a free loopback port: /health; the HEALTHCHECK command; one
//      conversion per engine, each output read on the host by an independent tool (pdfinfo/pdftotext, file):
//      office document (LibreOffice), HTML (Chromium), OCR of a corpus scan (Tesseract), a page to PNG (MuPDF),
//      PDF/A (Ghostscript); the process's user seen from the host; an upload stored in DATA_DIR lands on the volume,
//      and after stopping the container (SIGTERM to tini, as `docker stop`) and starting it again it is served by id.
//   5. The image's size (and its base's).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';

const image = process.argv[2];
const baseImage = process.argv[3];
if (!image) {
  console.error('usage: node scripts/image-check.mjs <image> [<base image>]');
  process.exit(2);
}
const corpus = process.env.QUIRE_CORPUS ?? resolve('../shared/corpus');
const scratch = mkdtempSync(join(tmpdir(), 'quire-image-check-'));
const ctrName = `quire-image-check-${process.pid}`;

const failures = [];
const check = (what, ok, detail = '') => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}${detail ? `: ${detail}` : ''}`);
  if (!ok) failures.push(what);
  return ok;
};
const run = (cmd, args, opts = {}) => execFileSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
const buildah = (...args) => run('buildah', args).trim();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const listOf = (file) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));

// --- 1. Declarations ---------------------------------------------------------------------------------------------
const inspected = JSON.parse(buildah('inspect', '--type', 'image', image));
const cfg = inspected.Docker?.config ?? {};
const env = Object.fromEntries((cfg.Env ?? []).map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
const dockerfile = readFileSync('Dockerfile', 'utf8');
const declaredUser = [...dockerfile.matchAll(/^USER\s+(\S+)/gm)].at(-1)?.[1];
check('the Dockerfile declares a non-root USER', declaredUser && declaredUser !== 'root' && declaredUser !== '0', `USER ${declaredUser}`);
check('the image runs as that user', cfg.User === declaredUser, `User ${JSON.stringify(cfg.User)}`);
check(
  'DATA_DIR is a declared VOLUME',
  env.DATA_DIR && Object.keys(cfg.Volumes ?? {}).includes(env.DATA_DIR),
  `DATA_DIR=${env.DATA_DIR}, volumes ${Object.keys(cfg.Volumes ?? {})}`,
);
const healthcheck = cfg.Healthcheck?.Test ?? [];
check('HEALTHCHECK kept', healthcheck[0] === 'CMD' && healthcheck.length > 1, JSON.stringify(healthcheck));
const command = [...(cfg.Entrypoint ?? []), ...(cfg.Cmd ?? [])];
check('tini starts the server (ENTRYPOINT)', /\/tini$/.test(cfg.Entrypoint?.[0] ?? ''), JSON.stringify(command));

const ctr = buildah('from', '--quiet', '--name', ctrName, image);
const started = Date.now();
const inCtr = (args, extra = []) => run('buildah', ['run', '--isolation', 'chroot', '--network', 'host', ...extra, ctr, '--', ...args]);
let server;
let port;
try {
  // --- 2. Packages -----------------------------------------------------------------------------------------------
  const installed = new Set(
    // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own format, not a JavaScript template
    inCtr(['dpkg-query', '-W', '-f', '${Package} ${Status}\n'])
      .split('\n')
      .filter((l) => l.endsWith(' install ok installed'))
      .map((l) => l.split(' ')[0]),
  );
  const runtime = listOf('scripts/apt-packages.txt');
  const missing = runtime.filter((p) => !installed.has(p));
  check(`all ${runtime.length} runtime packages installed (scripts/apt-packages.txt)`, !missing.length, missing.join(' '));
  // A test tool may still come in as a dependency of a runtime package (apt marks it automatic): that is the runtime's
  // need, not the test list's. One the Dockerfile installed by name would be marked manual.
  const testTools = listOf('scripts/apt-packages-test.txt');
  const auto = new Set(inCtr(['apt-mark', 'showauto']).split('\n'));
  const present = testTools.filter((p) => installed.has(p));
  const byName = present.filter((p) => !auto.has(p));
  const asDependency = present
    .filter((p) => auto.has(p))
    .map(
      (p) =>
        `${p} (a dependency of ${inCtr(['apt-cache', 'rdepends', '--installed', '--no-recommends', '--no-suggests', p])
          .split('\n')
          .slice(2)
          .map((l) => l.trim())
          .filter(Boolean)
          .join(', ')})`,
    );
  check(
    `none of the ${testTools.length} test packages of scripts/apt-packages-test.txt installed for itself`,
    !byName.length,
    byName.length
      ? `installed: ${byName.join(' ')}`
      : `absent: ${testTools.filter((p) => !installed.has(p)).join(' ')}${asDependency.length ? `; only as a runtime dependency: ${asDependency.join('; ')}` : ''}`,
  );

  // --- 3. compose.yaml -------------------------------------------------------------------------------------------
  checkCompose();

  // --- 4. The server ---------------------------------------------------------------------------------------------
  port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  // HOST=127.0.0.1: on the host network the default 0.0.0.0 would open the port to the machine's neighbours.
  // TINI_SUBREAPER: buildah run does not make tini PID 1 (as Docker does), so tini registers as the reaper of
  // orphaned processes instead, which is what PID 1 does.
  const runEnv = ['-e', `PORT=${port}`, '-e', 'HOST=127.0.0.1', '-e', 'LOG_LEVEL=warn', '-e', 'TINI_SUBREAPER=1'];
  const start = async (label) => {
    const t = Date.now();
    const child = spawn('buildah', ['run', '--isolation', 'chroot', '--network', 'host', ...runEnv, ctr, '--', ...command], {
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.exited = new Promise((r) => child.on('exit', (code, signal) => r({ code, signal })));
    let done = false;
    child.exited.then(() => {
      done = true;
    });
    // The first start builds the font cache and starts LibreOffice and Chromium: minutes on a slow machine.
    let health;
    for (const deadline = Date.now() + 180_000; !done && Date.now() < deadline; await sleep(250)) {
      health = await fetch(`${base}/health`).catch(() => undefined);
      if (health) break;
    }
    check(`${label}: /health`, health?.status === 200, health ? `${health.status} after ${((Date.now() - t) / 1000).toFixed(1)} s` : 'no answer');
    return child;
  };
  server = await start('start');

  const pid = listenerPid(port);
  const status = pid && readFileSync(`/proc/${pid}/status`, 'utf8');
  const uid = status && Number(/^Uid:\s+(\d+)/m.exec(status)[1]);
  const userUid = Number(inCtr(['id', '-u', declaredUser]).trim());
  check(`the server runs as ${declaredUser} (seen from the host)`, uid === userUid && uid !== 0, `pid ${pid}, uid ${uid}, ${declaredUser} is ${userUid}`);
  const parent = pid && Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
  const parentName = parent && readFileSync(`/proc/${parent}/comm`, 'utf8').trim();
  check('its parent is tini', parentName === 'tini', `${parentName} (pid ${parent})`);

  const hc = spawnSync('buildah', ['run', '--isolation', 'chroot', '--network', 'host', ...runEnv, ctr, '--', ...healthcheck.slice(1)], { encoding: 'utf8' });
  check('HEALTHCHECK command exits 0', hc.status === 0, `exit ${hc.status}${hc.stderr ? `, ${hc.stderr.trim().slice(0, 200)}` : ''}`);

  const convert = async (path, file, fields = {}) => {
    const fd = new FormData();
    fd.append('file', new Blob([readFileSync(join(corpus, file))]), basename(file));
    for (const [k, v] of Object.entries(fields)) fd.append(k, v);
    const t = Date.now();
    const res = await fetch(`${base}${path}`, { method: 'POST', body: fd });
    const body = await res.json();
    const seconds = ((Date.now() - t) / 1000).toFixed(1);
    if (res.status !== 200) return { status: res.status, body, seconds };
    const url = [body.outputUrl].flat()[0];
    const out = join(scratch, `${path.slice(1)}-${basename(url)}`);
    writeFileSync(out, Buffer.from(await (await fetch(url.replace(/^https?:\/\/[^/]+/, base))).arrayBuffer()));
    return { status: 200, body, seconds, out };
  };
  // Read on the host, by poppler-utils and file(1): not by the code under test.
  const pdfPages = (f) => Number(/^Pages:\s+(\d+)/m.exec(run('pdfinfo', [f]))?.[1]);
  const pdfText = (f) => run('pdftotext', ['-layout', f, '-']).replace(/\s+/g, ' ');
  const pdfCheck = (what, r, pages, words) => {
    if (r.status !== 200) return check(what, false, `${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    const n = pdfPages(r.out);
    const text = pdfText(r.out);
    const lost = words.filter((w) => !text.includes(w));
    return check(
      what,
      n === pages && !lost.length,
      `${n} pages (want ${pages})${lost.length ? `, text lacks ${JSON.stringify(lost)}` : `, text has ${JSON.stringify(words)}`}, ${r.seconds} s`,
    );
  };

  pdfCheck('LibreOffice: office/poi-SampleDoc.docx -> /pdf', await convert('/pdf', 'office/poi-SampleDoc.docx'), 2, [
    'I am a test document',
    'This is page two',
  ]);
  pdfCheck('Chromium: web/gotenberg-pages-3.html -> /pdf', await convert('/pdf', 'web/gotenberg-pages-3.html'), 3, ['Page 1', 'Page 2', 'Page 3']);
  // The scan has no text layer (checked here too), so every word read back came from Tesseract in the image.
  const scan = 'scans/french-diacritics-scan.pdf';
  check(`${scan} has no text of its own`, pdfText(join(corpus, scan)).trim() === '');
  pdfCheck(`Tesseract: ${scan} -> /pdf-with-ocr-text (French)`, await convert('/pdf-with-ocr-text', scan, { languages: 'French' }), 1, [
    'whisky',
    'juge blond',
  ]);
  const png = await convert('/png', 'pdf/federal-register-15-pages.pdf', { pages: '1', resolution: '72' });
  const pngType = png.out ? run('file', ['-b', png.out]).trim() : '';
  check(
    'render: pdf/federal-register-15-pages.pdf page 1 -> /png',
    /^PNG image data, 612 x 792\b/.test(pngType),
    `${png.status} ${pngType || JSON.stringify(png.body).slice(0, 300)}, ${png.seconds} s`,
  );
  const pdfa = await convert('/pdfa', 'pdf/google-docs-export.pdf', { output_type: 'PDF/A-2b' });
  if (pdfCheck('Ghostscript: pdf/google-docs-export.pdf -> /pdfa PDF/A-2b', pdfa, 1, ['Example document', 'Beautiful is better than ugly'])) {
    const xmp = run('pdfinfo', ['-meta', pdfa.out]);
    // written as an attribute (pdfaid:part='2') or an element (<pdfaid:part>2</pdfaid:part>)
    const part = /pdfaid:part\s*(?:=\s*["']|>\s*)(\d)/.exec(xmp)?.[1];
    const conformance = /pdfaid:conformance\s*(?:=\s*["']|>\s*)(\w)/.exec(xmp)?.[1];
    check('its XMP claims PDF/A-2B', part === '2' && conformance === 'B', `part ${part}, conformance ${conformance}`);
  }

  // DATA_DIR on the volume: an upload is written there (so the user can write it) and is found on the host in the
  // container's volume directory, not in its file system layer.
  const payload = readFileSync(join(corpus, 'pdf/google-docs-export.pdf'));
  const fd = new FormData();
  fd.append('file', new Blob([payload]), 'kept.pdf');
  const up = await fetch(`${base}/upload`, { method: 'POST', body: fd });
  const upBody = await up.json();
  const id = upBody.files?.[0]?.id;
  check('/upload stores a file in DATA_DIR', up.status === 200 && !!id, JSON.stringify(upBody).slice(0, 200));
  const onVolume = id && volumeFile(env.DATA_DIR, join('resources', id));
  check(`it is on the volume (${env.DATA_DIR})`, !!onVolume && sha(readFileSync(onVolume)) === sha(payload), onVolume || 'not found under the volume');

  const stopped = Date.now();
  const exit = await stop(server);
  check(
    'SIGTERM to tini stops the container (docker stop)',
    exit !== undefined,
    exit ? `exit ${exit.code ?? exit.signal} after ${((Date.now() - stopped) / 1000).toFixed(1)} s` : 'still running after 40 s',
  );
  server = await start('restart');
  const again = await fetch(`${base}/resource/${id}?format=file`);
  const bytes = Buffer.from(await again.arrayBuffer());
  check(
    'after the restart GET /resource/{id} serves the stored file',
    again.status === 200 && sha(bytes) === sha(payload),
    `${again.status}, ${bytes.length} bytes`,
  );
} catch (err) {
  check('image check run', false, err.stack ?? err.message);
} finally {
  if (server && server.exitCode === null && server.signalCode === null) await stop(server);
  spawnSync('buildah', ['rm', ctr], { stdio: 'ignore' });
  rmSync(scratch, { recursive: true, force: true });
}
console.log(`checks took ${((Date.now() - started) / 1000).toFixed(0)} s`);

// --- 5. Size -----------------------------------------------------------------------------------------------------
const size = (ref) => buildah('images', '--noheading', '--format', '{{.Size}}', ref);
console.log(`image ${image}: ${size(image)} uncompressed${baseImage ? `; its base ${baseImage}: ${size(baseImage)}` : ''}`);

if (failures.length) {
  console.log(`image check: ${failures.length} failed: ${failures.join('; ')}`);
  process.exit(1);
}
console.log('image check: all passed');
process.exit(0); // not waiting for the 40 s timer of a stop that ended early

// -------------------------------------------------------------------------------------------------------------------
/** `docker stop`: SIGTERM to the container's first process, tini (the parent of the process listening on the port),
 * which passes it to node; SIGKILL to all of it after 40 s (compose's stop_grace_period is 35 s). Resolves to the exit
 * of `buildah run`, or undefined when it had to be killed. */
async function stop(child) {
  const pid = listenerPid(port);
  const tini = pid && Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
  if (tini) process.kill(tini, 'SIGTERM');
  const exit = await Promise.race([child.exited, sleep(40_000).then(() => undefined)]);
  if (!exit) {
    for (const p of [tini, pid]) if (p) process.kill(p, 'SIGKILL');
    child.kill('SIGKILL');
  }
  return exit;
}

function freePort() {
  return new Promise((ok) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

function sha(buf) {
  return createHash('sha256').update(buf).digest('hex');
}

/** The process listening on 127.0.0.1:port, from the host's /proc (socket inode -> the process holding it). */
function listenerPid(port) {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f[1]?.endsWith(`:${hex}`) && f[3] === '0A') inodes.add(f[9]);
    }
  }
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    let fds = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m && inodes.has(m[1])) return Number(pid);
      } catch {}
    }
  }
  return undefined;
}

/** Where a path under a declared volume lives on the host: buildah keeps a working container's volumes in its
 * storage directory (userdata/buildah-volumes/<sha256 of the path>), outside its file system layers. */
function volumeFile(volume, rel) {
  const info = JSON.parse(buildah('inspect', '--type', 'container', ctr));
  const graphRoot = JSON.parse(run('buildah', ['info'])).store.GraphRoot;
  const dir = join(graphRoot, 'overlay-containers', info.ContainerID, 'userdata', 'buildah-volumes', createHash('sha256').update(volume).digest('hex'));
  const file = join(dir, rel);
  return existsSync(file) ? file : undefined;
}

/** compose.yaml against the code the image ships. */
function checkCompose() {
  const compose = readFileSync('compose.yaml', 'utf8');
  const schemaSrc = /const schema = z\.object\(\{([\s\S]*?)\n\}\);/.exec(readFileSync('app/config.ts', 'utf8'))?.[1] ?? '';
  const known = new Set([...schemaSrc.matchAll(/^ {2}([A-Z][A-Z0-9_]*):/gm)].map((m) => m[1]));
  if (!check('app/config.ts: its variables found', known.size > 20, `${known.size}`)) return;

  // Services and their environment, set ("NAME: value") or shown commented out ("# NAME: value  # comment").
  const services = {};
  const examples = {};
  const comments = {};
  let section;
  let service;
  let inEnv = false;
  for (const line of compose.split('\n')) {
    const top = /^([a-z][\w-]*):/.exec(line);
    if (top) section = top[1];
    const svc = section === 'services' && /^ {2}([a-z][\w-]*):\s*$/.exec(line);
    if (svc) {
      service = svc[1];
      services[service] = { env: {}, stopGrace: undefined };
      inEnv = false;
      continue;
    }
    if (/^\S/.test(line)) {
      service = undefined;
      continue;
    }
    if (!service) continue;
    if (/^ {4}environment:\s*$/.test(line)) {
      inEnv = true;
      continue;
    }
    if (/^ {4}\S/.test(line)) inEnv = false;
    const grace = /^ {4}stop_grace_period:\s*(\d+)s\b/.exec(line);
    if (grace) services[service].stopGrace = Number(grace[1]);
    if (!inEnv) continue;
    const set = /^ {6}([A-Z][A-Z0-9_]*):\s*("[^"]*"|[^#\s]\S*)\s*(?:#\s*(.*))?$/.exec(line);
    const shown = /^ {6}#\s*([A-Z][A-Z0-9_]*):\s*("[^"]*"|\S+)\s*(?:#\s*(.*))?$/.exec(line);
    const m = set ?? shown;
    if (!m) continue;
    const value = m[2].replace(/^"|"$/g, '');
    (set ? services[service].env : examples)[m[1]] = value;
    if (m[3]) comments[m[1]] = m[3];
  }
  const names = [...new Set([...Object.values(services).flatMap((s) => Object.keys(s.env)), ...Object.keys(examples)])];
  const unknown = names.filter((n) => !known.has(n));
  check(
    `compose.yaml: its ${names.length} variables are read by app/config.ts`,
    names.length > 0 && !unknown.length,
    unknown.length ? `unknown: ${unknown.join(' ')}` : names.join(' '),
  );

  // The image's own config code, with each environment: its problems, or the values it derives.
  const envs = Object.fromEntries(Object.entries(services).map(([name, s]) => [name, s.env]));
  envs['commented examples'] = { ...services.quire?.env, ...examples };
  envs.defaults = {};
  const probe = `
    const { availableParallelism } = await import('node:os');
    const { loadConfig } = await import(${JSON.stringify(`${inspected.Docker?.config?.WorkingDir ?? '/app'}/dist/app/config.js`)});
    const out = {};
    for (const [name, env] of Object.entries(JSON.parse(process.env.QUIRE_PROBE))) {
      try { out[name] = { config: loadConfig(env) }; } catch (err) { out[name] = { problems: err.problems ?? [String(err)] }; }
    }
    console.log(JSON.stringify({ cores: availableParallelism(), out }, (k, v) => (v instanceof Set ? [...v] : v)));`;
  const { cores, out: loaded } = JSON.parse(inCtr(['node', '--input-type=module', '-e', probe], ['-e', `QUIRE_PROBE=${JSON.stringify(envs)}`]));
  for (const [name, r] of Object.entries(loaded)) {
    // A key file named by an example is the operator's secret: only its absence is tolerated.
    const problems = (r.problems ?? []).filter((p) => !(name === 'commented examples' && /^API_KEYS: file .* does not exist$/.test(p)));
    check(
      `compose.yaml: ${name === 'defaults' ? 'no environment' : name === 'commented examples' ? 'the commented examples' : `service ${name}'s environment`} load(s) in the image`,
      !problems.length,
      problems.join('; '),
    );
  }
  const defaults = loaded.defaults.config;
  if (!defaults) return;
  const field = (n) => n.toLowerCase().replace(/_([a-z])/g, (_, c) => c.toUpperCase()); // CPU_BUDGET -> cpuBudget
  // "default: <formula>" in the comment of a variable whose value is a number: the formula (settings, `cores`, whole
  // numbers, + and -; up to a ';' or '(') evaluated with the image's defaults on this machine must give the default
  // the config computes. One that cannot be evaluated fails too, so a stale comment cannot pass by being vague
  // (before issue 41, CONCURRENCY's said "cores - 1": 1 here, where the default is 5). Prose defaults of other
  // variables (PUBLIC_URL's "the address clients used") are left alone.
  for (const [name, comment] of Object.entries(comments)) {
    const stated = /default:\s*([^;(]*)/.exec(comment)?.[1]?.trim();
    const actual = defaults[field(name)];
    if (!stated || typeof actual !== 'number') continue;
    let sum = 0;
    let sign = 1;
    const parts = [];
    for (const t of stated.match(/[+-]|\w+|\S/g)) {
      if (t === '+' || t === '-') sign = t === '+' ? 1 : -1;
      else {
        const v = /^\d+$/.test(t) ? Number(t) : t === 'cores' ? cores : /^[A-Z][A-Z0-9_]*$/.test(t) ? defaults[field(t)] : undefined;
        sum += sign * (typeof v === 'number' ? v : Number.NaN);
        parts.push(`${t} = ${v}`);
      }
    }
    check(`compose.yaml: ${name}'s comment "default: ${stated}"`, sum === actual, `${parts.join(', ')}: ${sum}; the config's default ${actual}`);
  }
  // "STOP_GRACE_SECONDS (25)" in a comment, and every stop_grace_period longer than that grace.
  for (const m of compose.matchAll(/STOP_GRACE_SECONDS \((\d+)\)/g))
    check(`compose.yaml: "STOP_GRACE_SECONDS (${m[1]})"`, defaults.stopGraceMs === Number(m[1]) * 1000, `default ${defaults.stopGraceMs / 1000} s`);
  for (const [name, s] of Object.entries(services)) {
    if (s.stopGrace === undefined || name === 'redis') continue;
    const grace = Number(s.env.STOP_GRACE_SECONDS ?? defaults.stopGraceMs / 1000);
    check(`compose.yaml: ${name}'s stop_grace_period ${s.stopGrace}s outlasts STOP_GRACE_SECONDS ${grace}`, s.stopGrace > grace);
  }
  if (/init:\s*false\s*#.*tini/.test(compose))
    check('compose.yaml: "init: false # tini is already PID 1 in the image"', /\/tini$/.test(inspected.Docker?.config?.Entrypoint?.[0] ?? ''));
}
