import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { z } from 'zod';

const int = (min: number) => z.string().trim().regex(/^\d+$/, 'must be a whole number').transform(Number).pipe(z.number().int().min(min));

const list = z.string().transform((s) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean),
);

const schema = z.object({
  PORT: int(1).pipe(z.number().max(65535)).default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  PUBLIC_URL: z
    .url({ protocol: /^https?$/ })
    .transform((u) => u.replace(/\/+$/, ''))
    .optional(),
  DATA_DIR: z.string().min(1).default('./data'),
  MAX_UPLOAD_MB: int(1).default(1000),
  MAX_PROCESS_SECONDS: int(1).default(1800),
  CONCURRENCY: int(1).optional(),
  CPU_BUDGET: int(1).default(availableParallelism()),
  LIGHT_CONCURRENCY: int(1).default(Math.max(2, availableParallelism())),
  OFFICE_INSTANCES: int(1).default(Math.max(1, availableParallelism() - 1)),
  BROWSER_PAGES: int(1).default(Math.max(2, availableParallelism())),
  HTML_TIMEOUT_SECONDS: int(1).default(20),
  HTML_MAX_PAGES: int(1).default(1000),
  HTML_MAX_MB: int(1).default(50),
  HTML_MAX_MEMORY_MB: int(1).default(1024),
  PS_TIMEOUT_SECONDS: int(1).default(25),
  PS_MAX_PAGES: int(1).default(2000),
  OFFICE_TIMEOUT_SECONDS: int(1).default(120),
  OFFICE_MAX_PAGES: int(1).default(2000),
  RENDER_PAGE_SECONDS: int(1).default(5),
  TEXT_PAGE_SECONDS: int(1).default(5),
  OCR_PAGE_SECONDS: int(1).default(180),
  WRITE_PAGE_SECONDS: int(1).default(30),
  JOB_MAX_MEMORY_MB: int(64).default(2048),
  STORAGE_MIN_FREE_MB: int(0).default(64),
  STOP_GRACE_SECONDS: int(0).default(25),
  MAX_STREAM_MB: int(1).default(256),
  MAX_OBJECTS: int(1000).default(2_000_000),
  MAX_IMAGE_PIXELS: int(1).default(100_000_000),
  ZIP_MAX_ENTRIES: int(1).default(1000),
  INVOICE_MAX_LINES: int(1).default(10_000),
  ZIP_MAX_MB: int(1).default(1024),
  ZIP_MAX_RATIO: int(1).default(200),
  QUEUE_MAX: int(0).default(100),
  RESOURCE_TTL_SECONDS: int(0).default(1800),
  API_KEYS: z.string().optional(),
  KEY_SCOPE: z.enum(['any', 'owner']).default('any'),
  URL_FETCH: z.enum(['on', 'off']).default('on'),
  URL_ALLOW: list.default([]),
  LLM_URL: z
    .url({ protocol: /^https?$/ })
    .transform((u) => u.replace(/\/+$/, ''))
    .optional(),
  LLM_API_KEY: z.string().optional(),
  LLM_MODEL: z.string().trim().min(1).optional(),
  LLM_TIMEOUT_SECONDS: int(1).default(120),
  LLM_CONTEXT_TOKENS: int(1024).default(8192),
  REDIS_URL: z.url({ protocol: /^rediss?$/ }).optional(),
  ROLE: z.enum(['api', 'worker', 'all']).default('all'),
  // A bucket name as S3 and the stores compatible with it accept (never a path: objects go under resources/).
  S3_BUCKET: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{1,254}$/, 'must be a bucket name (letters, digits, dots, hyphens, underscores)')
    .optional(),
  S3_ENDPOINT: z
    .url({ protocol: /^https?$/ })
    .transform((u) => u.replace(/\/+$/, ''))
    .optional(),
  S3_REGION: z
    .string()
    .trim()
    .regex(/^[a-z0-9-]+$/, 'must be a region name such as us-east-1')
    .default('us-east-1'),
  METRICS: z.enum(['on', 'off']).default('off'),
  METRICS_TOKEN: z.string().trim().min(16, 'must be at least 16 characters').optional(),
  WEBHOOK_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  PIPELINES_DIR: z.string().min(1).optional(),
  WATCH_DIR: z.string().min(1).optional(),
  WATCH_SETTLE_SECONDS: int(1).default(5),
  SIGNATURE_TRUST_DIR: z.string().min(1).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export interface Config {
  port: number;
  host: string;
  publicUrl?: string;
  dataDir: string;
  /** Free space under which DATA_DIR's and the job dirs' file systems make /health answer 503. */
  storageMinFreeBytes: number;
  /** On SIGTERM, how long running jobs may go on before they are aborted (their records then read failed). */
  stopGraceMs: number;
  maxUploadBytes: number;
  maxProcessMs: number;
  /** Upper bound of CPU-bound and pooled jobs running at once (CONCURRENCY; default: budget + pools, no extra bound). */
  concurrency: number;
  /** Cores CPU-bound jobs may keep busy at once: a job running N engine processes spends N. */
  cpuBudget: number;
  /** Light jobs (qpdf, metadata) running at once, in their own lane. */
  lightConcurrency: number;
  /** Warm LibreOffice instances (the office pool). */
  officeInstances: number;
  /** Chromium pages printing at once (the browser pool). */
  browserPages: number;
  /** What one job may cost before it is cut with a 422 naming the setting. */
  limits: Limits;
  queueMax: number;
  resourceTtlMs: number;
  /** null = open server (the self-hosted default). */
  apiKeys: Set<string> | null;
  /** `owner`: a key sees (reads, processes, deletes, downloads) only the resources it created; `any`: ids are capabilities. */
  keyScope: 'any' | 'owner';
  urlFetch: boolean;
  /** Hosts, addresses or CIDR ranges that may be fetched even though they are private. */
  urlAllow: string[];
  logLevel: string;
  /** Cluster mode: queues, resource index and request records on Redis; unset = embedded (one process). */
  redisUrl?: string;
  /** api: answers HTTP and queues jobs; worker: runs jobs (serves only health); all: both. */
  role: 'api' | 'worker' | 'all';
  /** The language model of the AI text operations; null when LLM_URL is not set (they answer 503). */
  llm: LlmConfig | null;
  /** Resource bytes in an S3 bucket (S3_BUCKET); unset = in DATA_DIR/resources. */
  s3?: S3Config;
  /** GET /metrics (Prometheus) is served only when on. */
  metrics: boolean;
  /** A scraper's credential for /metrics (Bearer or Api-Key); an API key works too. Never logged. */
  metricsToken?: string;
  /** Key of the webhook signatures (Quire-Signature); unset = webhooks are sent unsigned. Never logged. */
  webhookSecret?: string;
  /** The S3 endpoint and region of any bucket the server talks to (resources, watched prefixes). */
  s3Endpoint: { endpoint?: string; region: string };
  /** Where named pipelines (`<name>.json`) are read from at start; unset = none. */
  pipelinesDir?: string;
  /** Watched folders: `<WATCH_DIR>/<pipeline>/{in,out,done,failed}` for every named pipeline (a directory, or `s3://bucket/prefix`); unset = none. */
  watchDir?: string;
  /** A dropped file is taken once its size and time have not changed for this long. */
  watchSettleMs: number;
  /** The trust anchors /pdf-signatures validates certificate chains against (PEM/DER certificates); unset = none trusted. */
  signatureTrustDir?: string;
}

/**
 * Where resource bytes go when S3_BUCKET is set: objects `resources/<id>`. Credentials are not settings of ours:
 * the AWS SDK reads its standard variables (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_PROFILE...) itself.
 */
export interface S3Config {
  bucket: string;
  /** An S3-compatible store (MinIO, Ceph...), addressed path-style; unset = AWS. */
  endpoint?: string;
  region: string;
}

/**
 * An OpenAI-compatible chat-completions server chosen by the operator, so it may be local: the URL_FETCH /
 * URL_ALLOW policy, which guards the URLs clients send, does not apply to it.
 */
export interface LlmConfig {
  /** Base URL; requests go to `<url>/chat/completions` (e.g. https://api.openai.com/v1, http://127.0.0.1:8080/v1). */
  url: string;
  /** Sent as `Authorization: Bearer`; never logged. */
  apiKey?: string;
  model: string;
  timeoutMs: number;
  /** The model's context window in tokens: long documents are cut into parts that fit it. */
  contextTokens: number;
}

/**
 * Per-engine limits that cut hostile input early. A job cut by one answers 422 naming the setting (clients do
 * not resubmit a 4xx), its processes are killed and its temp dir removed.
 */
export interface Limits {
  /** HTML, web pages and e-mail: load, scripts and print together. */
  htmlTimeoutMs: number;
  htmlMaxPages: number;
  /** Bytes a page may load in total (the document and every sub-resource). */
  htmlMaxBytes: number;
  /** Resident memory of one page's renderer process (sampled every 250 ms). */
  htmlMaxMemoryBytes: number;
  psTimeoutMs: number;
  psMaxPages: number;
  officeTimeoutMs: number;
  officeMaxPages: number;
  /**
   * Time one engine may spend on one page before the page goes to the next engine of its read chain (render:
   * MuPDF or Ghostscript, then Poppler, then Ghostscript; text: MuPDF, then Poppler), per 25 megapixels drawn.
   */
  renderPageMs: number;
  textPageMs: number;
  /** Time Tesseract may spend recognising one page; the page is then left without text (a warning says so). */
  ocrPageMs: number;
  /** Time Ghostscript may spend rewriting one page (pdfwrite); a page past it ends the job with a 422. */
  writePageMs: number;
  /** V8 heap of the thread running one job of an operation declared with `thread`; past it the job ends with a 422. */
  jobMaxMemoryMb: number;
  /** Decompressed bytes of one stream parsed inside the Node process. */
  maxStreamBytes: number;
  /** Objects of one PDF parsed inside the Node process. */
  maxObjects: number;
  /** Decoded pixels of one input image. */
  maxImagePixels: number;
  /** Lines (BG-25) of one e-invoice checked by the business rules, whose time grows with lines x findings. */
  invoiceMaxLines: number;
  /** Entries of one archive (/unzip) or inputs of one /zip. */
  zipMaxEntries: number;
  /** Uncompressed bytes of one archive, declared and really inflated. */
  zipMaxBytes: number;
  /** Uncompressed / compressed size of one archive entry (past 1 MiB). */
  zipMaxRatio: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/** The only reader of process.env. Every problem is reported at once. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const raw = Object.fromEntries(Object.keys(schema.shape).map((k) => [k, env[k] === '' ? undefined : env[k]]));
  const parsed = schema.safeParse(raw);
  const problems: string[] = [];
  if (!parsed.success) {
    for (const issue of parsed.error.issues) problems.push(`${issue.path.join('.')}=${JSON.stringify(raw[String(issue.path[0])])}: ${issue.message}`);
  }
  let apiKeys: Set<string> | null = null;
  if (parsed.success && parsed.data.API_KEYS) {
    apiKeys = readKeys(parsed.data.API_KEYS, problems);
  }
  if (parsed.success && parsed.data.ROLE !== 'all' && !parsed.data.REDIS_URL)
    problems.push(`ROLE=${parsed.data.ROLE}: needs REDIS_URL (replicas share work through Redis)`);
  if (parsed.success && parsed.data.S3_ENDPOINT && !parsed.data.S3_BUCKET && !/^s3:\/\//.test(parsed.data.WATCH_DIR ?? ''))
    problems.push('S3_ENDPOINT: needs S3_BUCKET (the bucket that holds the resources) or an s3:// WATCH_DIR');
  if (parsed.success && parsed.data.KEY_SCOPE === 'owner' && !parsed.data.API_KEYS)
    problems.push('KEY_SCOPE=owner: needs API_KEYS (resources belong to the key that created them)');
  if (parsed.success && parsed.data.WATCH_DIR && !parsed.data.PIPELINES_DIR)
    problems.push('WATCH_DIR: needs PIPELINES_DIR (each named pipeline gets a watched folder)');
  if (parsed.success && parsed.data.LLM_URL && !parsed.data.LLM_MODEL)
    problems.push('LLM_MODEL: required when LLM_URL is set (the model name the server expects)');
  if (parsed.success && parsed.data.SIGNATURE_TRUST_DIR && !existsSync(parsed.data.SIGNATURE_TRUST_DIR))
    problems.push(`SIGNATURE_TRUST_DIR: directory ${parsed.data.SIGNATURE_TRUST_DIR} does not exist`);
  if (problems.length) throw new ConfigError(problems);
  const d = parsed.data!;
  return {
    port: d.PORT,
    host: d.HOST,
    publicUrl: d.PUBLIC_URL,
    dataDir: resolve(d.DATA_DIR),
    storageMinFreeBytes: d.STORAGE_MIN_FREE_MB * 1024 * 1024,
    stopGraceMs: d.STOP_GRACE_SECONDS * 1000,
    maxUploadBytes: d.MAX_UPLOAD_MB * 1024 * 1024,
    maxProcessMs: d.MAX_PROCESS_SECONDS * 1000,
    concurrency: d.CONCURRENCY ?? d.CPU_BUDGET + d.OFFICE_INSTANCES + d.BROWSER_PAGES,
    cpuBudget: d.CPU_BUDGET,
    lightConcurrency: d.LIGHT_CONCURRENCY,
    // An explicit CONCURRENCY also bounds the pools, as it sized the office pool before the lanes existed.
    officeInstances: Math.min(d.OFFICE_INSTANCES, d.CONCURRENCY ?? Infinity),
    browserPages: Math.min(d.BROWSER_PAGES, d.CONCURRENCY ?? Infinity),
    limits: {
      htmlTimeoutMs: d.HTML_TIMEOUT_SECONDS * 1000,
      htmlMaxPages: d.HTML_MAX_PAGES,
      htmlMaxBytes: d.HTML_MAX_MB * 1024 * 1024,
      htmlMaxMemoryBytes: d.HTML_MAX_MEMORY_MB * 1024 * 1024,
      psTimeoutMs: d.PS_TIMEOUT_SECONDS * 1000,
      psMaxPages: d.PS_MAX_PAGES,
      officeTimeoutMs: d.OFFICE_TIMEOUT_SECONDS * 1000,
      officeMaxPages: d.OFFICE_MAX_PAGES,
      renderPageMs: d.RENDER_PAGE_SECONDS * 1000,
      textPageMs: d.TEXT_PAGE_SECONDS * 1000,
      ocrPageMs: d.OCR_PAGE_SECONDS * 1000,
      writePageMs: d.WRITE_PAGE_SECONDS * 1000,
      jobMaxMemoryMb: d.JOB_MAX_MEMORY_MB,
      maxStreamBytes: d.MAX_STREAM_MB * 1024 * 1024,
      maxObjects: d.MAX_OBJECTS,
      maxImagePixels: d.MAX_IMAGE_PIXELS,
      invoiceMaxLines: d.INVOICE_MAX_LINES,
      zipMaxEntries: d.ZIP_MAX_ENTRIES,
      zipMaxBytes: d.ZIP_MAX_MB * 1024 * 1024,
      zipMaxRatio: d.ZIP_MAX_RATIO,
    },
    queueMax: d.QUEUE_MAX,
    resourceTtlMs: d.RESOURCE_TTL_SECONDS * 1000,
    apiKeys,
    keyScope: d.KEY_SCOPE,
    urlFetch: d.URL_FETCH === 'on',
    urlAllow: d.URL_ALLOW,
    logLevel: d.LOG_LEVEL,
    redisUrl: d.REDIS_URL,
    role: d.ROLE,
    llm: d.LLM_URL
      ? { url: d.LLM_URL, apiKey: d.LLM_API_KEY, model: d.LLM_MODEL!, timeoutMs: d.LLM_TIMEOUT_SECONDS * 1000, contextTokens: d.LLM_CONTEXT_TOKENS }
      : null,
    s3: d.S3_BUCKET ? { bucket: d.S3_BUCKET, endpoint: d.S3_ENDPOINT, region: d.S3_REGION } : undefined,
    s3Endpoint: { endpoint: d.S3_ENDPOINT, region: d.S3_REGION },
    metrics: d.METRICS === 'on',
    metricsToken: d.METRICS_TOKEN,
    webhookSecret: d.WEBHOOK_SECRET,
    pipelinesDir: d.PIPELINES_DIR && resolve(d.PIPELINES_DIR),
    watchDir: d.WATCH_DIR && (/^s3:\/\//.test(d.WATCH_DIR) ? d.WATCH_DIR.replace(/\/+$/, '') : resolve(d.WATCH_DIR)),
    watchSettleMs: d.WATCH_SETTLE_SECONDS * 1000,
    signatureTrustDir: d.SIGNATURE_TRUST_DIR && resolve(d.SIGNATURE_TRUST_DIR),
  };
}

/** API_KEYS is a comma list, or a path to a file with one key per line ('#' comments allowed). */
function readKeys(value: string, problems: string[]): Set<string> | null {
  const looksLikePath = value.startsWith('/') || value.startsWith('./');
  let keys: string[];
  if (looksLikePath) {
    if (!existsSync(value)) {
      problems.push(`API_KEYS: file ${value} does not exist`);
      return null;
    }
    keys = readFileSync(value, 'utf8')
      .split(/\r?\n/)
      .map((l) => l.replace(/#.*/, '').trim())
      .filter(Boolean);
  } else {
    keys = value
      .split(',')
      .map((k) => k.trim())
      .filter(Boolean);
  }
  if (!keys.length) problems.push('API_KEYS: no keys found');
  const short = keys.filter((k) => k.length < 16);
  if (short.length) problems.push(`API_KEYS: ${short.length} key(s) shorter than 16 characters`);
  return new Set(keys);
}
