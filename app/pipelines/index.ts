/**
 * Pipelines: operations composed inside the server, a layer above app/operations. A pipeline's steps are
 * checked with the operations' own schemas before anything runs, then run as ordinary jobs in their lanes, each
 * taking the files the step before produced (once per file, or all at once for merge-like operations). Three
 * front doors: POST /pipeline, named pipeline files (PIPELINES_DIR), and watched folders (WATCH_DIR).
 */

import type { JobContext } from '../jobs/index.js';
import type { Deps } from '../requests/context.js';
import { executeJob, type JobSpec } from '../requests/execute.js';
import { isPipelineSpec, runPipeline } from './run.js';

export { loadNamedPipelines } from './named.js';
export { type PipelineSpec, submitPipeline } from './run.js';
export { type Watcher, watchFolders } from './watch.js';

/** Runs any queued spec: a pipeline, or one operation's request (what cluster workers take from Redis). */
export const runSpec = (spec: unknown, ctx: JobContext, deps: Deps) =>
  isPipelineSpec(spec) ? runPipeline(spec, ctx, deps) : executeJob(spec as JobSpec, ctx, deps);
