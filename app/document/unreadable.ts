import { open } from 'node:fs/promises';
import type { EngineContext } from '../../engines/context.js';
import type { EngineError } from '../../engines/errors.js';
import { isPdfHeader } from './pdf-access.js';

/**
 * Why no engine could read an input, in words a user understands: the text after "Uploaded file is not valid
 * input for this route: ". Each reason has one fixed sentence (or a fixed start followed by what was found:
 * the file's format, the security handler's name), so clients can match it. Only the file's first 1 KB and
 * last 2 KB are read, and the engines' messages are used as evidence but never quoted: they hold server paths.
 *
 * The stderr lines each rule relies on were observed with qpdf 11.3, MuPDF 1.21 and Poppler 22.12 on
 * ../shared/corpus/malformed, ../shared/corpus/realworld-qpdf and files built for test/unreadable.test.ts.
 */

export type UnreadableReason =
  | 'empty'
  | 'not-pdf'
  | 'security-handler'
  | 'page-tree-loop'
  | 'truncated'
  | 'no-objects'
  | 'no-pages'
  | 'no-catalog'
  | 'broken-xref'
  | 'unknown';

/**
 * The fixed words of each reason's sentence: the whole sentence; for not-pdf and security-handler its start, which
 * what was found follows; for unknown its end, after the names of the engines that tried.
 */
export const UNREADABLE: Record<UnreadableReason, string> = {
  empty: 'the file is empty (0 bytes).',
  'not-pdf': 'the file is not a PDF: it is ',
  'security-handler': 'the file is encrypted with a security handler that is not supported',
  'page-tree-loop': "the document's page tree loops back on itself, so it leads to no pages.",
  truncated:
    'the PDF is cut short: it ends without a cross-reference table or an end-of-file marker (%%EOF), and no pages could be ' +
    'recovered from what it holds. It may have been truncated during a download or an upload.',
  'no-objects': 'the file starts with a PDF header but holds no PDF objects that could be read.',
  'no-pages': "the document's page tree is missing or holds no pages.",
  'no-catalog': 'the document catalog (/Root) is missing or damaged, so no pages could be found.',
  'broken-xref': "the cross-reference table is broken beyond repair: no trailer could be found, so the document's objects cannot be located.",
  unknown: ' could not read it as a PDF, and it could not be repaired.',
};

export interface Unreadable {
  reason: UnreadableReason;
  text: string;
}

/**
 * One or two sentences saying why `path` could not be read, once every engine and the repair have failed
 * with `failures`. Same reason, same sentence.
 */
export async function whyUnreadable(path: string, failures: EngineError[], ctx: EngineContext): Promise<string> {
  return (await explainUnreadable(path, failures, ctx)).text;
}

/**
 * whyUnreadable with the reason as a name, for callers and tests that branch on it. `ctx` is the job's engine
 * context: reading 3 KB needs neither its dir nor its signal, but a later probe by an engine would.
 */
export async function explainUnreadable(path: string, failures: EngineError[], _ctx: EngineContext): Promise<Unreadable> {
  const ends = await readEnds(path).catch(() => null);
  const said = evidence(failures);
  const is = (reason: UnreadableReason, text = UNREADABLE[reason]): Unreadable => ({ reason, text });

  if (ends?.size === 0) return is('empty');
  if (ends && !isPdfHeader(ends.head)) return is('not-pdf', `${UNREADABLE['not-pdf']}${formatOf(ends.head, ends.tail)}.`);

  const handler = unsupportedHandler(said, ends);
  if (handler) {
    return is('security-handler', `${UNREADABLE['security-handler']} (${handler}): only password encryption (/Standard, /V 1 to 5, /R 2 to 6) can be opened.`);
  }
  // qpdf: "(object 3 0): Loop detected in /Pages structure (getAllPages)"; MuPDF: "error: cycle in page tree";
  // Poppler: "Syntax Error: Loop in Pages tree" (it then goes on with one phantom page of 0 x 0 points).
  if (said(/Loop detected in \/Pages structure|cycle in page tree|Loop in Pages tree/)) return is('page-tree-loop');

  // A PDF that stops before its end: no "startxref" and no "%%EOF" in the last 2 KB. The engines then say qpdf
  // "can't find startxref" ... "unable to find trailer dictionary while recovering damaged file" (or "unable to find
  // /Root dictionary" when a stray trailer survived, corpus truncated-no-xref-pdfjs-bug1020226.pdf), MuPDF "error:
  // cannot find startxref" ... "error: cannot find page tree", Poppler "Couldn't read xref table".
  if (ends && !ends.tail.includes('%%EOF') && !ends.tail.includes('startxref') && failures.some(readFailure)) return is('truncated');

  // A header and an end but nothing between (corpus invalid-header-then-eof.pdf): MuPDF "error: no objects found".
  if (said(/no objects found/, 'mutool') || (ends?.whole && !/\d+\s+\d+\s+obj\b/.test(ends.tail.toString('latin1')))) return is('no-objects');

  // qpdf's verdicts first, as they are the most precise: "unable to find /Root dictionary" (a trailer without a
  // usable /Root, corpus issue-99.pdf, issue-100.pdf) and, below, "unable to find trailer dictionary while recovering
  // damaged file" (no trailer even after rebuilding the cross-reference table).
  if (said(/unable to find \/Root dictionary/, 'qpdf')) return is('no-catalog');
  // A catalog without a usable /Pages: qpdf warns "dictionary key /Pages: operation for dictionary attempted on object
  // of type null" and lists 0 pages; MuPDF "error: malformed page tree" (/Kids [] or /Pages to a missing object);
  // Poppler "Invalid page count 0" or "Top-level pages object is wrong type (null)" (corpus issue-119.pdf).
  if (
    said(/key \/Pages: operation for dictionary attempted on object of type null|malformed page tree|Invalid page count 0|Top-level pages object is wrong type/)
  ) {
    return is('no-pages');
  }
  if (said(/unable to find trailer dictionary/, 'qpdf')) return is('broken-xref');
  // Without qpdf's word: MuPDF "error: cannot find page tree" (no /Root, or a /Root without /Pages), Poppler
  // "Catalog object is wrong type (null)" / "Couldn't read page catalog", and Poppler "Couldn't read xref table".
  if (said(/cannot find page tree/, 'mutool') || said(/Catalog object is wrong type|Couldn't read page catalog/, 'poppler')) return is('no-catalog');
  if (said(/Couldn't read xref table/, 'poppler')) return is('broken-xref');

  return is('unknown', `${enginesThatTried(failures)}${UNREADABLE.unknown}`);
}

// ---------------------------------------------------------------------------------------------------------------

const HEAD = 1024;
const TAIL = 2048;

interface Ends {
  size: number;
  head: Buffer;
  tail: Buffer;
  /** The tail is the whole file. */
  whole: boolean;
}

/** The first 1 KB and the last 2 KB of the file, never more (inputs can be gigabytes). */
async function readEnds(path: string): Promise<Ends> {
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    const at = async (length: number, position: number) => {
      const buf = Buffer.alloc(length);
      const { bytesRead } = await fh.read(buf, 0, length, position);
      return buf.subarray(0, bytesRead);
    };
    const head = await at(Math.min(HEAD, size), 0);
    const tail = await at(Math.min(TAIL, size), Math.max(0, size - TAIL));
    return { size, head, tail, whole: size <= TAIL };
  } finally {
    await fh.close();
  }
}

type Engine = 'qpdf' | 'mutool' | 'poppler' | 'gs' | 'other';

function engineOf(tool: string): Engine {
  if (tool === 'qpdf' || tool === 'mutool' || tool === 'gs') return tool;
  // pdftoppm, pdftotext, pdfinfo, pdffonts, pdfimages, pdftocairo, pdfsig...
  return /^pdf/.test(tool) ? 'poppler' : 'other';
}

/** A predicate over what the engines printed (their stderr tails and messages), optionally of one engine only. */
function evidence(failures: EngineError[]) {
  const texts = failures.map((f) => ({ engine: engineOf(String(f?.tool ?? '')), text: `${f?.message ?? ''}\n${f?.details?.stderr ?? ''}` }));
  const said = (pattern: RegExp, engine?: Engine): boolean => texts.some((t) => (!engine || t.engine === engine) && pattern.test(t.text));
  said.match = (pattern: RegExp): RegExpExecArray | null => {
    for (const t of texts) {
      const m = pattern.exec(t.text);
      if (m) return m;
    }
    return null;
  };
  return said;
}
type Said = ReturnType<typeof evidence>;

/** A failure that says something about the file (not a timeout, a cancelled job or a missing tool). */
const readFailure = (f: EngineError) => !f?.details?.timedOut && !f?.details?.aborted && !f?.details?.missing && !f?.details?.limit;

/** "qpdf, MuPDF and Poppler": the readers among the failures, in a fixed order (all three when none is known). */
function enginesThatTried(failures: EngineError[]): string {
  const tried = new Set(failures.map((f) => engineOf(String(f?.tool ?? ''))));
  const names = (
    [
      ['qpdf', 'qpdf'],
      ['mutool', 'MuPDF'],
      ['poppler', 'Poppler'],
    ] as const
  )
    .filter(([e]) => tried.has(e))
    .map(([, name]) => name);
  const list = names.length ? names : ['qpdf', 'MuPDF', 'Poppler'];
  return andList(list);
}

/** "a, b and c". */
export const andList = (names: string[]) => (names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)}` : (names[0] ?? ''));

// --- Security handlers --------------------------------------------------------------------------------------------

/** A security handler name as found in the file, kept only when it is a plain PDF name of reasonable length. */
const handlerName = (raw: string | undefined) => (raw && /^[A-Za-z0-9._-]{1,40}$/.test(raw) ? raw : undefined);

/**
 * What makes the encryption unsupported ("/Adobe.PubSec, encryption to certificates", "/Standard with /V 7 and /R 9"),
 * or null when nothing says so. From the engines first, then from the encryption dictionary when it lies in the
 * first or last bytes (the trailer's /Encrypt names it).
 */
function unsupportedHandler(said: Said, ends: Ends | null): string | null {
  const dict = ends ? encryptionDictionary(`${ends.head.toString('latin1')}\n${ends.tail.toString('latin1')}`) : null;
  // MuPDF: "error: unknown encryption handler: 'Adobe.PubSec'"; Poppler: "Syntax Error: Couldn't find the
  // 'Adobe.PubSec' security handler"; qpdf: "(encryption dictionary, offset 414): unsupported encryption filter".
  const named = said.match(/unknown encryption handler: '([^'\n]*)'|Couldn't find the '([^'\n]*)' security handler/);
  if (named || said(/unsupported encryption filter/, 'qpdf')) {
    return handlerText(handlerName(named?.[1] ?? named?.[2]) ?? (dict?.filter !== 'Standard' ? dict?.filter : undefined));
  }
  if (dict?.filter && dict.filter !== 'Standard') return handlerText(dict.filter);
  // qpdf: "Unsupported /R or /V in encryption dictionary; R = 9 (max 6), V = 7 (max 5)"; Poppler: "Unimplemented
  // Feature: Unsupported version/revision (1/1) of Standard security handler"; MuPDF: "error: unknown encryption version".
  const qpdf = said.match(/Unsupported \/R or \/V in encryption dictionary; R = (\d+) \(max \d+\), V = (\d+)/);
  const poppler = said.match(/Unsupported version\/revision \((\d+)\/(\d+)\) of Standard security handler/);
  const v = qpdf?.[2] ?? poppler?.[1] ?? dict?.v;
  const r = qpdf?.[1] ?? poppler?.[2] ?? dict?.r;
  const outside = (n: string | undefined, min: number, max: number) => n !== undefined && !(Number(n) >= min && Number(n) <= max);
  const rawUnsupported = dict?.filter === 'Standard' && (outside(dict.v, 1, 5) || outside(dict.r, 2, 6));
  if (qpdf || poppler || rawUnsupported || (said(/unknown encryption version/, 'mutool') && dict?.filter === 'Standard')) {
    return `/Standard${v !== undefined || r !== undefined ? ` with ${[v && `/V ${v}`, r && `/R ${r}`].filter(Boolean).join(' and ')}` : ''}`;
  }
  return null;
}

function handlerText(name: string | undefined): string {
  if (!name) return 'an unknown handler';
  return name === 'Adobe.PubSec' ? '/Adobe.PubSec, encryption to certificates' : `/${name}`;
}

/** /Filter, /V and /R of the encryption dictionary the trailer names, when it is among the bytes read. */
function encryptionDictionary(text: string): { filter?: string; v?: string; r?: string } | null {
  let body: string | undefined;
  const ref = /\/Encrypt\s*(\d+)\s+(\d+)\s+R/.exec(text);
  if (ref) {
    const obj = new RegExp(`(?:^|[^0-9])${ref[1]}\\s+${ref[2]}\\s+obj\\b`).exec(text);
    if (obj) body = text.slice(obj.index + obj[0].length, obj.index + obj[0].length + 2000).split('endobj')[0];
  } else {
    const direct = /\/Encrypt\s*<</.exec(text);
    if (direct) body = text.slice(direct.index, direct.index + 2000);
  }
  if (body === undefined) return null;
  return {
    filter: handlerName(/\/Filter\s*\/([^\s/<>[\]()]+)/.exec(body)?.[1]),
    v: /\/V\s+(\d+)/.exec(body)?.[1],
    r: /\/R\s+(\d+)/.exec(body)?.[1],
  };
}

// --- What a file that is not a PDF is -------------------------------------------------------------------------------

/** "a PNG image", "a Word document (.docx)", 'text starting with "Hello"', "binary data starting with the bytes 1f 8b 08 00". */
export function formatOf(head: Buffer, tail: Buffer = Buffer.alloc(0)): string {
  const starts = (...bytes: number[]) => bytes.every((b, i) => head[i] === b);
  const ascii = head.subarray(0, 64).toString('latin1');
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'a PNG image';
  if (starts(0xff, 0xd8, 0xff)) return 'a JPEG image';
  if (ascii.startsWith('GIF87a') || ascii.startsWith('GIF89a')) return 'a GIF image';
  if (starts(0x49, 0x49, 0x2a, 0x00) || starts(0x4d, 0x4d, 0x00, 0x2a)) return 'a TIFF image';
  if (ascii.startsWith('RIFF') && ascii.slice(8, 12) === 'WEBP') return 'a WebP image';
  // "BM", then the file size, then four reserved zero bytes.
  if (ascii.startsWith('BM') && head.length >= 14 && head.readUInt32LE(6) === 0) return 'a BMP image';
  if (starts(0x50, 0x4b, 0x03, 0x04) || starts(0x50, 0x4b, 0x05, 0x06)) return zipKind(head, tail);
  if (starts(0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1))
    return 'a Microsoft Office compound file (OLE2: .doc, .xls, .ppt, .msg, or a password-protected .docx, .xlsx or .pptx)';
  if (starts(0xc5, 0xd0, 0xd3, 0xc6)) return 'an EPS (Encapsulated PostScript) file';
  if (ascii.startsWith('%!')) return /^%!PS-Adobe-\S+\s+EPSF/.test(ascii) ? 'an EPS (Encapsulated PostScript) file' : 'a PostScript file';
  if (ascii.startsWith('%FDF-')) return 'an FDF file (form field data, not a document)';
  if (ascii.startsWith('{\\rtf')) return 'an RTF document';

  const text = asText(head);
  if (text === null) {
    if (head.every((b) => b === 0) && tail.every((b) => b === 0)) return 'filled with zero bytes';
    // Damaged or fuzzed PDFs often start with a few characters of text ("UPDF-1.", "0000000000000") before binary.
    const lead = /^[\x20-\x7e\t\n\r]*/.exec(head.subarray(0, 64).toString('latin1'))![0].replace(/\s+/g, ' ').trim();
    if (lead.length >= 4) return `binary data starting with the text ${quoted(lead)}`;
    return `binary data starting with the bytes ${[...head.subarray(0, 4)].map((b) => b.toString(16).padStart(2, '0')).join(' ')}`;
  }
  const markup = text.trimStart();
  if (/^<!doctype html|^<html[\s>]|^<head[\s>]|^<body[\s>]/i.test(markup) || (/^<(!--|\?xml|!doctype)/i.test(markup) && /<html[\s>]/i.test(markup)))
    return 'an HTML page';
  if (/^<svg[\s>]/i.test(markup) || (/^<\?xml/i.test(markup) && /<svg[\s>]/i.test(markup))) return 'an SVG image';
  if (/^<\?xml/i.test(markup)) return 'an XML document';
  const shown = markup.replace(/\s+/g, ' ').trim();
  return shown ? `text starting with ${quoted(shown)}` : 'only blank space';
}

/** The first 20 characters, quoted with JSON's escapes, "…" when there were more. */
function quoted(text: string): string {
  const chars = [...text];
  return JSON.stringify(chars.slice(0, 20).join('').trimEnd() + (chars.length > 20 ? '…' : ''));
}

/** The head as UTF-8 text, or null when it holds control characters or invalid UTF-8 (a character cut at the end is fine). */
function asText(head: Buffer): string | null {
  const bytes = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? head.subarray(3) : head;
  if (bytes.some((b) => (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0c && b !== 0x0d) || b === 0x7f)) return null;
  for (let cut = 0; cut <= 3 && cut < bytes.length; cut++) {
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, bytes.length - cut));
    } catch {
      // A multi-byte character may be cut by the 1 KB limit: try without the last bytes.
    }
  }
  return bytes.length ? null : '';
}

/**
 * Which ZIP it is, by its entry names: the first local header (in the head) and the central directory (at the end,
 * in the tail), where Office Open XML has word/, xl/ or ppt/ and OpenDocument and EPUB a stored "mimetype" entry.
 */
function zipKind(head: Buffer, tail: Buffer): string {
  const names: string[] = [];
  const scan = (buf: Buffer, signature: string, lengthAt: number, nameAt: number) => {
    for (let i = buf.indexOf(signature, 0, 'latin1'); i >= 0 && i + nameAt <= buf.length; i = buf.indexOf(signature, i + 4, 'latin1')) {
      names.push(buf.subarray(i + nameAt, i + nameAt + buf.readUInt16LE(i + lengthAt)).toString('latin1'));
    }
  };
  scan(head, 'PK\x03\x04', 26, 30);
  scan(tail, 'PK\x01\x02', 28, 46);
  const has = (prefix: string) => names.some((n) => n.startsWith(prefix));
  if (has('word/')) return 'a Word document (.docx)';
  if (has('xl/')) return 'an Excel workbook (.xlsx)';
  if (has('ppt/')) return 'a PowerPoint presentation (.pptx)';
  const mimetype = /mimetypeapplication\/([a-z.+-]+)/.exec(head.toString('latin1'))?.[1];
  if (mimetype === 'epub+zip') return 'an EPUB e-book';
  const odf = /^vnd\.oasis\.opendocument\.(text|spreadsheet|presentation|graphics)$/.exec(mimetype ?? '')?.[1];
  if (odf) {
    return {
      text: 'an OpenDocument text (.odt)',
      spreadsheet: 'an OpenDocument spreadsheet (.ods)',
      presentation: 'an OpenDocument presentation (.odp)',
      graphics: 'an OpenDocument drawing (.odg)',
    }[odf]!;
  }
  return 'a ZIP archive';
}
