import type { Hono } from 'hono';
import { AppError, outOfRange } from '../errors.js';
import { parseSteps, type RawStep } from '../pipelines/plan.js';
import { submitPipeline } from '../pipelines/run.js';
import type { Deps, Env } from '../requests/context.js';
import { resolveInputs } from '../requests/inputs.js';
import { acceptRequest } from './accept.js';

/** `steps`, or `pipeline` naming one of PIPELINES_DIR; exactly one of them. */
function stepsOf(fields: Record<string, unknown>, deps: Deps): { steps: RawStep[]; name?: string } {
  const name = typeof fields.pipeline === 'string' ? fields.pipeline.trim() : fields.pipeline;
  const sent = (v: unknown) => v !== undefined && v !== null && v !== '';
  if (sent(name) && sent(fields.steps)) throw new AppError('invalid_request', 'Send either steps or pipeline (the name of a stored pipeline), not both.');
  if (sent(name)) {
    const named = deps.pipelines.valid.find((p) => p.name === name);
    if (!named) {
      const known = deps.pipelines.valid.map((p) => p.name);
      throw outOfRange(name, `pipeline (${known.length ? `one of: ${known.join(', ')}` : 'this server has no named pipelines: PIPELINES_DIR'})`);
    }
    return { steps: named.steps, name: named.name };
  }
  if (!sent(fields.steps))
    throw new AppError('out_of_range', 'steps is required (a JSON array of {"operation", "fields"}), or pipeline: the name of a stored pipeline');
  return { steps: parseSteps(fields.steps) };
}

/** POST /pipeline (steps or a named pipeline over uploads or ids) and GET /pipelines. */
export function mountPipelines(app: Hono<Env>, deps: Deps): void {
  app.get('/pipelines', (c) => c.json({ pipelines: deps.pipelines.valid, invalid: deps.pipelines.invalid.length ? deps.pipelines.invalid : undefined }));

  const fileFields = new Set(['file']);
  app.post('/pipeline', (c) =>
    acceptRequest(c, deps, fileFields, async (body, how) => {
      const { steps, name } = stepsOf(body.fields, deps);
      // Any kind here: the first step checks them as its endpoint would.
      const { file: inputs } = await resolveInputs({ file: { idField: 'id', kind: 'any', multiple: true } }, body, deps.store, { owner: how.owner });
      const spec = { kind: 'pipeline' as const, name, steps, inputs, owner: how.owner, client: how.client, baseUrl: how.baseUrl };
      return submitPipeline(spec, deps, how);
    }),
  );
}
