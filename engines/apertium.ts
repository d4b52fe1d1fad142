import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EngineContext } from './context.js';
import { run } from './run.js';

/**
 * Apertium, rule-based machine translation for the language pairs installed as Debian packages
 * (apertium-eng-spa...). Its html-noent format keeps tags in place as "superblanks" and writes characters as
 * they are (no entities), so callers wrap text runs in tags to keep their structure.
 */

let modes: Promise<string[]> | undefined;

/** Installed translation directions (mode names such as `eng-spa`, `en-gl`, `eng-cat_valencia`), read once. */
export function apertiumModes(): Promise<string[]> {
  modes ??= run('apertium', ['-l'], { cwd: tmpdir(), timeoutMs: 20_000 })
    .then((r) =>
      r.stdout
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean),
    )
    // Not installed: no offline pairs.
    .catch(() => []);
  return modes;
}

/**
 * Translates an HTML fragment; `-u` drops the `*` marks of unknown words, which stay as they were written.
 * Files, not pipes: its HTML reader (transfuse) fails on a socket as stdin, which is what Node gives a child.
 */
export async function apertiumTranslateHtml(mode: string, html: string, ctx: EngineContext): Promise<string> {
  const input = join(ctx.cwd, 'apertium-in.html');
  const output = join(ctx.cwd, 'apertium-out.html');
  await writeFile(input, html);
  await run('apertium', ['-u', '-f', 'html-noent', mode, input, output], ctx);
  return readFile(output, 'utf8');
}
