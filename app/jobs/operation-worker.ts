import { onProcessGroup, onRun, withPriority } from '../../engines/run.js';
import { type ReadBudgets, withReadBudgets } from '../document/index.js';
import type { Operation, RunContext } from '../requests/operation.js';
import { serializeError, type ThreadReply } from './operation-thread.js';

/** The child side of runOperationInThread: one job at a time, as long as the process lives. */
const reply = (m: ThreadReply) => process.send?.(m);
// The server gone (killed), nothing is left to answer to.
process.on('disconnect', () => process.exit(0));
onProcessGroup((group, running) => reply({ group, running }));
onRun((ran) => reply({ ran }));

/** A job's signal: never aborted here, since a cancelled job's process is ended by the server with its engines. */
const signal = new AbortController().signal;

interface RunMessage {
  module: string;
  path: string;
  ctx: Omit<RunContext<unknown>, 'signal' | 'progress'>;
  budgets: ReadBudgets;
  niceness?: number;
}

async function find(module: string, path: string): Promise<Operation> {
  const exported = Object.values(await import(module)).flat() as Operation[];
  const op = exported.find((o) => o?.path === path);
  if (!op) throw new Error(`${module} declares no operation ${path}`);
  return op;
}

/**
 * The RSS the process idles warm with: after a full collection, which gives back the young generation's pages and
 * what the job left in the old one (a warm process after a 15-page /word: 430 -> 340 MB; ~50 ms).
 */
function settledRss(): number {
  globalThis.gc?.();
  return process.memoryUsage.rss();
}

process.on('message', async (m: { run?: RunMessage }) => {
  if (!m.run) return;
  const { module, path, ctx, budgets, niceness } = m.run;
  try {
    const op = await find(module, path);
    const work = () => withReadBudgets(budgets, () => op.run({ ...ctx, signal, progress: (progress) => reply({ progress }) } as RunContext<never>));
    const result = await (niceness ? withPriority(niceness, work) : work());
    reply({ result, rss: settledRss() });
  } catch (err) {
    reply({ error: serializeError(err), rss: settledRss() });
  }
});
