import { randomUUID } from 'node:crypto';
import { readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineContext } from './context.js';
import { classify, passwordArgs, type QpdfJson } from './qpdf.js';
import { expectOutput, type RunResult, run } from './run.js';

/**
 * qpdf as a writer: merge, split, linearize, encrypt, decrypt, attach, update objects. Every write goes
 * through a qpdf job file (`--job-json-file`) in the job dir, mode 0600: passwords never reach a command
 * line, and a password such as `--print=none` cannot be taken for an option as it would in argv or @file.
 */

// qpdf exits 3 when it succeeded with warnings (a damaged file it could recover).
const WARNINGS = [3];

export type QpdfJob = Record<string, unknown>;

/** Runs one qpdf job description; the job file (it may hold passwords) is removed afterwards. */
export async function runJob(job: QpdfJob, ctx: EngineContext): Promise<RunResult> {
  const file = join(ctx.cwd, `.qpdf-job-${randomUUID()}.json`);
  await writeFile(file, JSON.stringify(job), { mode: 0o600 });
  try {
    return await run('qpdf', [`--job-json-file=${file}`], { ...ctx, okExitCodes: WARNINGS });
  } catch (err) {
    throw classify(err);
  } finally {
    await rm(file, { force: true });
  }
}

/** 1-based page numbers as a qpdf range, consecutive runs folded (`1-5,9,8-6`): 1000 pages stay short. */
export function rangeText(pages: number[]): string {
  const parts: string[] = [];
  let i = 0;
  while (i < pages.length) {
    let j = i;
    const step = pages[i + 1] === pages[i] + 1 ? 1 : pages[i + 1] === pages[i] - 1 ? -1 : 0;
    if (step) while (j + 1 < pages.length && pages[j + 1] === pages[j] + step) j++;
    parts.push(j > i ? `${pages[i]}-${pages[j]}` : String(pages[i]));
    i = j + 1;
  }
  return parts.join(',');
}

export interface PageSource {
  path: string;
  /** 1-based, in output order; repeats allowed. */
  pages: number[];
  password?: string;
}

/** The job that concatenates pages of several files (`--empty --pages ...`), optionally split every n pages. */
export function assembleJob(sources: PageSource[], output: string, opts: { splitEvery?: number } = {}): QpdfJob {
  return {
    empty: '',
    outputFile: output,
    ...(opts.splitEvery ? { splitPages: String(opts.splitEvery) } : {}),
    pages: sources.map((s) => ({ file: s.path, range: rangeText(s.pages), ...(s.password !== undefined ? { password: s.password } : {}) })),
  };
}

/** One PDF of the given pages of several inputs, in order. */
export async function assemblePages(sources: PageSource[], output: string, ctx: EngineContext): Promise<void> {
  await runJob(assembleJob(sources, output), ctx);
  await expectOutput('qpdf', output);
}

/**
 * Pages of one input into several PDFs of `size` pages each, in one qpdf run whatever the count
 * (`--split-pages`): returns the written files in page order. `pattern` must contain `%d`.
 */
export async function splitPages(source: PageSource, pattern: string, size: number, ctx: EngineContext): Promise<string[]> {
  await runJob(assembleJob([source], pattern, { splitEvery: size }), ctx);
  const dir = join(pattern, '..');
  const [prefix, suffix] = pattern.slice(dir.length + 1).split('%d');
  const names = (await readdir(dir)).filter((n) => n.startsWith(prefix) && n.endsWith(suffix));
  // qpdf names each part by its first page, zero-padded: sort numerically to be safe.
  const first = (n: string) => Number(/^(\d+)/.exec(n.slice(prefix.length))?.[1] ?? 0);
  const files = names.sort((a, b) => first(a) - first(b)).map((n) => join(dir, n));
  if (files.length !== Math.ceil(source.pages.length / size))
    throw new Error(`qpdf wrote ${files.length} parts, expected ${Math.ceil(source.pages.length / size)}`);
  return files;
}

/** Permissions of a 128/256-bit security handler, as qpdf names them (true = allowed). */
export interface Permissions {
  print: 'full' | 'low' | 'none';
  extract: boolean;
  accessibility: boolean;
  assemble: boolean;
  form: boolean;
  annotate: boolean;
  modifyOther: boolean;
}

export const ALL_ALLOWED: Permissions = { print: 'full', extract: true, accessibility: true, assemble: true, form: true, annotate: true, modifyOther: true };

export interface Security {
  /** Open (user) password; '' opens without one. */
  user: string;
  /** Permissions (owner) password; never empty (qpdf refuses an empty owner with a user password on AES-256). */
  owner: string;
  permissions: Permissions;
}

const yn = (b: boolean) => (b ? 'y' : 'n');

export interface WriteOptions {
  /** Password that opens the input (user or owner). */
  password?: string;
  decrypt?: boolean;
  linearize?: boolean;
  /** AES-256 encryption. qpdf always sets the accessibility bit on R6 (PDF 2.0 deprecates it). */
  encrypt?: Security;
  attach?: { file: string; key: string; filename: string; mimetype: string }[];
  /** A qpdf JSON v2 document whose objects replace the input's (`--update-from-json`). */
  updateFromJson?: string;
}

export function writeJob(input: string, output: string, o: WriteOptions): QpdfJob {
  const job: QpdfJob = { inputFile: input, outputFile: output };
  if (o.password !== undefined) job.password = o.password;
  if (o.decrypt) job.decrypt = '';
  if (o.linearize) job.linearize = '';
  if (o.updateFromJson) job.updateFromJson = o.updateFromJson;
  if (o.attach?.length) job.addAttachment = o.attach.map((a) => ({ ...a }));
  if (o.encrypt) {
    const p = o.encrypt.permissions;
    job.encrypt = {
      userPassword: o.encrypt.user,
      ownerPassword: o.encrypt.owner,
      '256bit': {
        print: p.print,
        extract: yn(p.extract),
        assemble: yn(p.assemble),
        form: yn(p.form),
        annotate: yn(p.annotate),
        modifyOther: yn(p.modifyOther),
        ...(p.accessibility ? {} : { accessibility: 'n' }),
      },
    };
  }
  return job;
}

/** Reads one PDF and writes it again with the given changes. */
export async function writePdf(input: string, output: string, opts: WriteOptions, ctx: EngineContext): Promise<void> {
  await runJob(writeJob(input, output, opts), ctx);
  await expectOutput('qpdf', output);
}

export interface Inspection {
  pageCount: number;
  encrypt: NonNullable<QpdfJson['encrypt']>;
}

/** Page count and security state in one cheap call (no object dump). */
export async function inspectPdf(input: string, ctx: EngineContext, opts: { password?: string } = {}): Promise<Inspection> {
  try {
    const r = await run('qpdf', ['--json', '--json-key=encrypt', '--json-key=pages', ...(await passwordArgs(opts.password, ctx)), '--', input], {
      ...ctx,
      okExitCodes: WARNINGS,
    });
    const json = JSON.parse(r.stdout) as QpdfJson;
    return { pageCount: json.pages?.length ?? 0, encrypt: json.encrypt! };
  } catch (err) {
    throw classify(err);
  }
}

/** `qpdf --check-linearization`: true when the file is linearized and its hint tables are right. */
export async function isLinearized(input: string, ctx: EngineContext): Promise<boolean> {
  const r = await run('qpdf', ['--check-linearization', '--', input], { ...ctx, okExitCodes: [2, 3] });
  return r.exitCode === 0 && /no linearization errors/.test(r.stdout);
}

export interface StampPlan {
  /** 1-based target pages, ascending. */
  to: number[];
  /** For each target, the 1-based page of the stamp file laid on it. */
  from: number[];
  /** Under the page's content instead of over it. */
  behind: boolean;
}

/**
 * Lays pages of a stamp PDF over (or under) pages of `input` (`--overlay` / `--underlay`). qpdf fits each stamp
 * page into the target's trim box and undoes the target's /Rotate, so a stamp page drawn at the page's visible
 * size lands upright at scale 1; the original content streams are kept as they are (wrapped in a form).
 */
export async function stampPages(input: string, stamp: string, output: string, plan: StampPlan, ctx: EngineContext): Promise<void> {
  const layer = { file: stamp, to: rangeText(plan.to), from: plan.from.join(',') };
  await runJob({ inputFile: input, outputFile: output, [plan.behind ? 'underlay' : 'overlay']: layer }, ctx);
  await expectOutput('qpdf', output);
}

export type QuarterTurn = 90 | 180 | 270;

/**
 * Turns pages clockwise by adding to their /Rotate, as viewers do (`--rotate=+angle:pages`); nothing is drawn
 * again. qpdf's job file takes one rotation per run, so each distinct angle is one run (at most three).
 */
export async function rotatePages(input: string, output: string, turns: { angle: QuarterTurn; pages: number[] }[], ctx: EngineContext): Promise<void> {
  const steps = turns.filter((t) => t.pages.length);
  if (!steps.length) steps.push({ angle: 90, pages: [] });
  let from = input;
  for (const [i, t] of steps.entries()) {
    const to = i === steps.length - 1 ? output : join(ctx.cwd, `rotate-${i}.pdf`);
    // An empty selection still writes the file (a copy), so the caller always gets its output.
    await runJob({ inputFile: from, outputFile: to, ...(t.pages.length ? { rotate: `+${t.angle}:${rangeText(t.pages)}` } : {}) }, ctx);
    await expectOutput('qpdf', to);
    from = to;
  }
}

/**
 * Pages of `sources` in order, with `primary` as qpdf's primary file: its catalog (outlines, form, names,
 * metadata) is kept, form fields of its pages left out go, and a repeated page's fields are copied under new
 * names (`Name+1`). What else pointed to pages left out is for the caller to prune.
 */
export async function arrangePages(primary: string, sources: PageSource[], output: string, ctx: EngineContext): Promise<void> {
  const { pages } = assembleJob(sources, output);
  await runJob({ inputFile: primary, outputFile: output, pages }, ctx);
  await expectOutput('qpdf', output);
}

/** The input's own pages in a new order, repeats allowed (arrangePages with the input as its only source). */
export async function reorderPages(input: string, output: string, pages: number[], ctx: EngineContext): Promise<void> {
  await arrangePages(input, [{ path: input, pages }], output, ctx);
}
