import type { Hono } from 'hono';
import { AppError, outOfRange } from '../errors.js';
import { type Body, discardUploads, readBody } from '../http/body.js';
import { baseUrlOf, clientOf, type Deps, type Env } from '../http/context.js';
import { resolveInputs } from '../http/inputs.js';
import { wantsPolling } from '../http/pipeline.js';
import { webhookOf } from '../http/webhooks.js';
import { parseSteps, type RawStep } from './plan.js';
import { submitPipeline } from './run.js';

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

  app.post('/pipeline', async (c) => {
    const owner = c.get('owner');
    const webhook = await webhookOf(c, deps.config.urlAllow);
    let body: Body | undefined;
    try {
      body = await readBody(c.req.raw, { store: deps.store, owner, maxBytes: deps.config.maxUploadBytes, fileFields: new Set(['file']) });
      const { steps, name } = stepsOf(body.fields, deps);
      // Any kind here: the first step checks them as its endpoint would.
      const { file: inputs } = await resolveInputs({ file: { idField: 'id', kind: 'any', multiple: true } }, body, deps.store, { owner });
      const polling = wantsPolling(c) || !!webhook;
      const spec = { kind: 'pipeline' as const, name, steps, inputs, owner, client: clientOf(c), baseUrl: baseUrlOf(deps.config, c.req.url) };
      const { id, done } = await submitPipeline(spec, deps, { track: polling, clientSignal: polling ? undefined : c.req.raw.signal, notify: webhook });
      if (webhook) return c.json({ requestId: id }, 202);
      if (polling) return c.json({ requestId: id });
      return c.json(await done);
    } catch (err) {
      await discardUploads(deps.store, body);
      throw err;
    }
  });
}
