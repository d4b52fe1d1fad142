import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { Deps, NamedPipeline } from '../requests/context.js';
import { parseSteps, planSteps } from './plan.js';

/** A pipeline's name is its file name: it becomes a folder name under WATCH_DIR and a metrics label. */
export const PIPELINE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const MAX_FILE_BYTES = 1024 * 1024;
const fileSchema = z.object({ steps: z.unknown(), description: z.string().max(1000).optional() });

/**
 * Reads `<name>.json` files (`{"steps": [...], "description"?}`) and checks each as a request's steps are
 * checked. A bad file is left out and reported (to the log, and by GET /pipelines), never fatal to the server.
 */
export async function loadNamedPipelines(dir: string | undefined, deps: Pick<Deps, 'operations' | 'tools' | 'log'>): Promise<Deps['pipelines']> {
  const valid: NamedPipeline[] = [];
  const invalid: { file: string; error: string }[] = [];
  if (!dir) return { valid, invalid };
  const names = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    invalid.push({ file: dir, error: `PIPELINES_DIR cannot be read (${err.code})` });
    return [] as string[];
  });
  for (const file of names.filter((n) => n.endsWith('.json')).sort()) {
    const name = file.slice(0, -'.json'.length);
    try {
      if (!PIPELINE_NAME.test(name)) throw new Error('the name must be 1-64 letters, digits, - or _ (it names a watched folder)');
      const path = join(dir, file);
      if ((await stat(path)).size > MAX_FILE_BYTES) throw new Error('larger than 1 MB');
      const parsed = fileSchema.safeParse(JSON.parse(await readFile(path, 'utf8')));
      if (!parsed.success) throw new Error('not an object with "steps"');
      const steps = parseSteps(parsed.data.steps);
      planSteps(steps, deps);
      valid.push({ name, description: parsed.data.description, steps });
    } catch (err) {
      invalid.push({ file, error: (err as Error).message });
    }
  }
  for (const bad of invalid) deps.log.error(bad, 'named pipeline left out');
  if (valid.length) deps.log.info({ pipelines: valid.map((p) => p.name) }, 'named pipelines');
  return { valid, invalid };
}
