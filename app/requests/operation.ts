import { availableParallelism } from 'node:os';
import type { z } from 'zod';
import type { ToolName } from '../../engines/tools.js';
import type { Limits, LlmConfig } from '../config.js';
import type { Cost } from '../jobs/index.js';
import type { FetchPolicy } from './fetch-url.js';

/** What an input accepts: `pdf` is checked by its header; `any` takes whatever was uploaded. */
export type InputKind = 'pdf' | 'any';

export interface InputSpec {
  /** The field that references a stored resource instead of an upload (`id`, `image_id`, ...). */
  idField: string;
  kind: InputKind;
  /** Default true. */
  required?: boolean;
  /** Several files allowed (merge). */
  multiple?: boolean;
  /** Extensions accepted (without dot) when kind is `any`; checked case-insensitively. */
  extensions?: string[];
  description?: string;
}

export interface InputFile {
  id: string;
  name: string;
  type: string;
  /** Bytes, from the record: what a cost may depend on before the job runs. */
  size: number;
  /** Read-only local path of the stored bytes (with S3, a copy fetched for the job). */
  path: string;
}

/** An input as the request names it, before its job runs: no local path yet (it may be an S3 object). */
export type StoredFile = Omit<InputFile, 'path'>;

export interface OutputFile {
  path: string;
  /** File name with extension; default: the output name + `ext`. */
  name?: string;
  ext?: string;
}

export interface OperationResult {
  files?: OutputFile[];
  /** The inputs in the client's order, when it differs from uploads-then-ids (merge with type[]). */
  inputs?: InputFile[];
  json?: Record<string, unknown>;
  warning?: string;
}

export interface RunContext<F> {
  fields: F;
  /** Inputs by upload field name, in order. */
  inputs: Record<string, InputFile[]>;
  /** The first input of the first declared kind: most endpoints take one document. */
  input: InputFile;
  dir: string;
  signal: AbortSignal;
  progress: (fraction: number) => void;
  /** `output` if given, else the endpoint's default name (no extension). */
  outputName: string;
  /** The time left before the job's limit, for engine timeouts. */
  timeoutMs: number;
  /** Which URLs may be fetched (URL_FETCH, URL_ALLOW): for url inputs and web-page sub-resources. */
  urlPolicy: FetchPolicy;
  /** Jobs allowed at once (CONCURRENCY): sizes engine pools. */
  concurrency: number;
  /** Per-engine limits (time, pages, bytes, pixels); exceeding one is `limitExceeded(...)`. */
  limits: Limits;
  /** The language model (LLM_*) of the AI text operations, or null when none is configured. */
  llm: LlmConfig | null;
  /** The directory of trust anchors for signature validation (SIGNATURE_TRUST_DIR), or undefined: none trusted. */
  signatureTrustDir?: string;
}

export interface Operation<S extends z.ZodRawShape = z.ZodRawShape> {
  path: string;
  summary: string;
  description?: string;
  tag: string;
  inputs: Record<string, InputSpec>;
  fields: S;
  /** The kind of success body, for the docs: single file, several files, or JSON (text output). */
  output: 'file' | 'files' | 'json' | 'json-or-file';
  /**
   * Extensions of the files it writes, so a pipeline can tell before running whether the next step takes them;
   * `*` when only the run knows (an archive's contents). Default: `pdf`, none for JSON operations.
   */
  produces?: string[];
  /** Also answer `files: [{name, id, outputUrl}]`, one per output (/unzip, as pdfRest answers it). */
  listFiles?: boolean;
  /** Native tools needed; if one is missing the endpoint answers 503 naming its Debian package. */
  engines: ToolName[];
  /**
   * What a job costs the scheduler (lane and, for cpu, engine processes at once); may depend on the request
   * (/pdf: office, browser or cpu by input type). Default: one cpu process.
   */
  cost?: Cost | ((req: { fields: z.infer<z.ZodObject<S>>; inputs: Record<string, StoredFile[]> }) => Cost);
  /** Default output name; default `[input name]_service_<path>`. */
  defaultName?: (inputName: string | undefined) => string;
  /**
   * `import.meta.url` of the module declaring it, for operations whose JavaScript memory grows with the document
   * (page models, office formats): each job runs in a worker thread whose heap is capped (JOB_MAX_MEMORY_MB,
   * app/jobs/operation-thread.ts), so a document past the cap ends its own job with a 422, not the process. Also for
   * pixel work in sharp (scan tools): libvips and malloc keep what a long run grew, and that memory should leave
   * with the job's process rather than stay in the server's.
   */
  thread?: string;
  /** Extra checks across fields (zod checks one field at a time). */
  check?: (fields: z.infer<z.ZodObject<S>>) => void;
  run: (ctx: RunContext<z.infer<z.ZodObject<S>>>) => Promise<OperationResult>;
}

/** Declares an endpoint; typing `fields` once types `run`'s fields. */
export function operation<S extends z.ZodRawShape>(def: Operation<S>): Operation<S> {
  return def;
}

/** The cost of a job that runs one engine process per core (rendering, OCR): its share is the whole budget. */
export const perCore = (): Cost => ({ lane: 'cpu', processes: availableParallelism() });

/** What an operation's files are, for pipelines (see `produces`). */
export const producesOf = (op: Operation): string[] => op.produces ?? (op.output === 'json' ? [] : ['pdf']);

/** The input files flow into in a pipeline: `file`, else the first declared. */
export const primaryInput = (op: Operation): [string, InputSpec] | undefined => (op.inputs.file ? ['file', op.inputs.file] : Object.entries(op.inputs)[0]);

/** The input almost every endpoint takes: `file` or `id`, a PDF. */
export const pdfInput = (description = 'The PDF to process'): Record<string, InputSpec> => ({
  file: { idField: 'id', kind: 'pdf', description },
});
