import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineContext } from '../../engines/context.js';
import { type QpdfJson, type ReadLimits, readPdfJson, streamData } from '../../engines/qpdf.js';
import { runJob } from '../../engines/qpdf-edit.js';
import { expectOutput } from '../../engines/run.js';
import { isRef, PdfObjects } from '../document/index.js';
import { cullMarkedContent } from './marked-content.js';

/**
 * Sanitizing: what a reader may run, open, send or show without the user asking is taken out of the document at
 * the object level, and qpdf writes it again (only the objects still reachable: the actions, files and old
 * revisions left behind are not written). Removed: JavaScript (document name tree, open action, additional
 * actions of the document, pages, annotations and fields, link and button actions), launch, submit-form,
 * import-data, remote and embedded go-to, rich media, rendition, movie and sound actions and annotations,
 * viewer commands other than page navigation, every additional action (/AA: run on open, close, focus, keystroke,
 * print, save...) and open action other than a plain go-to, embedded files (the name tree, associated files,
 * file attachment annotations, portfolios), XFA (it carries scripts and submit buttons of its own), thumbnails,
 * and optional content hidden in the default view (its marked content, XObjects and annotations). Optionally:
 * links to web pages (URI actions), and metadata (XMP streams, PieceInfo, the Info dictionary).
 */

export interface SanitizeOptions {
  removeLinks: boolean;
  removeMetadata: boolean;
  /** Remove the values of signed signature fields (with /Perms and /DSS) instead of refusing a signed PDF. */
  removeSignatures: boolean;
}

export interface Removal {
  kind: string;
  count: number;
}

export interface SanitizeResult {
  removed: Removal[];
  /** Signed signature fields (and a certification without a field value) found in the input. */
  signatures: number;
}

/** Actions that start a script, a program, a transfer or a file, by the kind they are reported as. */
const UNSAFE_ACTIONS: Record<string, string> = {
  '/JavaScript': 'javascript',
  '/Launch': 'launch_action',
  '/SubmitForm': 'submit_form_action',
  '/ImportData': 'import_data_action',
  '/GoToR': 'remote_goto_action',
  '/GoToE': 'embedded_goto_action',
  '/RichMediaExecute': 'rich_media',
  '/Rendition': 'rich_media',
  '/Movie': 'rich_media',
  '/Sound': 'rich_media',
};
/** Viewer commands a link may keep: page navigation. Others (Print, SaveAs, Close...) are removed. */
const NAVIGATION = new Set(['/NextPage', '/PrevPage', '/FirstPage', '/LastPage']);
/** Annotations that play media or hold files. */
const UNSAFE_ANNOTATIONS: Record<string, string> = {
  '/FileAttachment': 'file_attachment_annotation',
  '/RichMedia': 'rich_media',
  '/Screen': 'rich_media',
  '/Movie': 'rich_media',
  '/Sound': 'rich_media',
  '/3D': 'rich_media',
};
type Dict = Record<string, unknown>;
const isDict = (v: unknown): v is Dict => !!v && typeof v === 'object' && !Array.isArray(v);

/** Signed signature fields, plus a certification (/Perms) whose field was not found. */
export function countSignatures(pdf: PdfObjects): number {
  let n = 0;
  for (const { value } of pdf.all()) if (isDict(value) && value['/FT'] === '/Sig' && pdf.dict(value['/V'])) n++;
  return n || (pdf.dict(pdf.catalog['/Perms']) ? 1 : 0);
}

export async function sanitizePdf(
  input: string,
  output: string,
  opts: SanitizeOptions,
  ctx: EngineContext,
  limits: ReadLimits = {},
  onSigned: (signatures: number) => void = () => {},
): Promise<SanitizeResult> {
  // qpdf 11.3 drops JSON updates of objects stored in object streams (the stream's copy wins when it is read):
  // the document is first written without them, and every reference below is to that copy.
  const plain = join(ctx.cwd, `.sanitize-${randomUUID()}.pdf`);
  await runJob({ inputFile: input, outputFile: plain, objectStreams: 'disable' }, ctx);
  await expectOutput('qpdf', plain);
  const { json } = await readPdfJson(plain, ctx, limits);
  const pdf = new PdfObjects(json);
  const signatures = countSignatures(pdf);
  if (signatures) onSigned(signatures);
  const s = new Sanitizer(pdf, json, opts);
  s.clean();
  await s.cullHidden(plain, ctx, limits.maxBytes);
  await writeUpdates(plain, output, s.updates, ctx);
  return { removed: [...s.removed].map(([kind, count]) => ({ kind, count })), signatures };
}

/** qpdf's JSON update: `{value}` replaces an object, `{stream: {dict, data?}}` a stream (data as it is if omitted). */
async function writeUpdates(input: string, output: string, updates: Map<string, unknown>, ctx: EngineContext): Promise<void> {
  const entries: Dict = {};
  for (const [ref, v] of updates) {
    if (ref === 'trailer') entries.trailer = { value: v };
    else if (v instanceof StreamUpdate) entries[`obj:${ref}`] = { stream: { dict: v.dict, ...(v.data ? { data: v.data.toString('base64') } : {}) } };
    else entries[`obj:${ref}`] = { value: v };
  }
  const file = join(ctx.cwd, `.sanitize-${randomUUID()}.json`);
  await writeFile(file, JSON.stringify({ qpdf: [{ jsonversion: 2 }, entries] }));
  await runJob({ inputFile: input, outputFile: output, updateFromJson: file, objectStreams: 'generate' }, ctx);
  await expectOutput('qpdf', output);
}

class StreamUpdate {
  constructor(
    readonly dict: Dict,
    readonly data?: Buffer,
  ) {}
}

class Sanitizer {
  readonly updates = new Map<string, unknown>();
  readonly removed = new Map<string, number>();
  private readonly counted = new Set<string>();
  private readonly raw: Record<string, { value?: unknown; stream?: { dict: Dict } }>;
  private nextId: number;

  constructor(
    private readonly pdf: PdfObjects,
    private readonly json: QpdfJson,
    private readonly opts: SanitizeOptions,
  ) {
    this.raw = json.qpdf?.[1] ?? {};
    this.nextId = (json.qpdf?.[0].maxobjectid ?? 0) + 1;
  }

  private count(kind: string, n = 1, ref?: unknown): void {
    if (n <= 0) return;
    if (isRef(ref)) {
      if (this.counted.has(ref)) return;
      this.counted.add(ref);
    }
    this.removed.set(kind, (this.removed.get(kind) ?? 0) + n);
  }

  /** The object as it will be written: an earlier update of it, else the original value or stream dictionary. */
  current(ref: string): unknown {
    if (this.updates.has(ref)) {
      const u = this.updates.get(ref);
      return u instanceof StreamUpdate ? u.dict : u;
    }
    const o = this.raw[`obj:${ref}`];
    return o?.value ?? o?.stream?.dict;
  }

  private set(ref: string, value: unknown): void {
    const isStream = !!this.raw[`obj:${ref}`]?.stream;
    const prev = this.updates.get(ref);
    this.updates.set(ref, isStream && isDict(value) ? new StreamUpdate(value, prev instanceof StreamUpdate ? prev.data : undefined) : value);
  }

  clean(): void {
    const catalogRef = this.pdf.trailer['/Root'];
    const namesRef = this.pdf.catalog['/Names'];
    const formRef = this.pdf.catalog['/AcroForm'];
    const annotArrays = new Set((this.json.pages ?? []).map((p) => this.pdf.dict(p.object)?.['/Annots']).filter(isRef));
    for (const [key, o] of Object.entries(this.raw)) {
      if (key === 'trailer') continue;
      const ref = key.replace(/^obj:/, '');
      const before = o.value ?? o.stream?.dict;
      // An annotation that goes as a whole is counted once, as itself (annots), not for its actions too; it is
      // emptied where it stands, so a reference left to it (a popup's /Parent) does not keep its file or media.
      if (isDict(before) && UNSAFE_ANNOTATIONS[String(before['/Subtype'])]) {
        this.updates.set(ref, null);
        continue;
      }
      let v = this.value(before);
      if (ref === catalogRef) v = this.catalog(v as Dict);
      if (ref === namesRef) v = this.names(v as Dict);
      if (ref === formRef) v = this.form(v as Dict);
      if (annotArrays.has(ref) && Array.isArray(v)) v = this.annots(v);
      if (isDict(v) && '/Annots' in v && Array.isArray(v['/Annots'])) v = this.with(v, '/Annots', this.annots(v['/Annots'] as unknown[]));
      if (isDict(v) && this.opts.removeSignatures && v['/FT'] === '/Sig' && '/V' in v) {
        this.count('signature');
        v = this.with(v, '/V', undefined);
      }
      // An action object still referenced from a place not cleaned above is neutralised where it stands.
      if (isDict(v) && this.unsafeKind(v)) v = null;
      if (v !== before) this.set(ref, v);
    }
    if (this.opts.removeMetadata && '/Info' in this.pdf.trailer) {
      this.count('document_info');
      const { '/Info': _, ...trailer } = this.pdf.trailer;
      this.updates.set('trailer', trailer);
    }
  }

  private with(d: Dict, key: string, v: unknown): Dict {
    if (d[key] === v) return d;
    const out = { ...d };
    if (v === undefined) delete out[key];
    else out[key] = v;
    return out;
  }

  /** The kind an action is removed as, or '' when it stays. */
  private unsafeKind(d: Dict): string {
    const s = d['/S'];
    if (typeof s !== 'string') return '';
    if (UNSAFE_ACTIONS[s]) return UNSAFE_ACTIONS[s];
    if (s === '/URI' && this.opts.removeLinks) return 'uri_action';
    if (s === '/Named' && !NAVIGATION.has(String(this.pdf.resolve(d['/N'])))) return 'named_action';
    return '';
  }

  /** An action with its /Next chain, the unsafe ones left out (undefined when none is left). */
  private action(v: unknown, depth = 0): unknown {
    const d = this.pdf.dict(v);
    if (!d || depth > 32) return v;
    const next = d['/Next'];
    let kept: unknown;
    if (Array.isArray(this.pdf.resolve(next))) {
      const list = this.pdf
        .array(next)
        .map((n) => this.action(n, depth + 1))
        .filter((n) => n !== undefined);
      kept = list.length ? list : undefined;
    } else if (next !== undefined) kept = this.action(next, depth + 1);
    const kind = this.unsafeKind(d);
    if (kind) {
      this.count(kind, 1, v);
      return Array.isArray(kept) ? kept[0] : kept;
    }
    if (kept === next) return v;
    return this.with(d, '/Next', kept);
  }

  /** Every action of an additional-actions dictionary, counted by kind (safe ones as automatic_action). */
  private countAll(v: unknown, depth = 0): void {
    const d = this.pdf.dict(v);
    if (!d || depth > 32) return;
    if ('/S' in d) {
      this.count(this.unsafeKind(d) || 'automatic_action', 1, v);
      for (const n of Array.isArray(this.pdf.resolve(d['/Next'])) ? this.pdf.array(d['/Next']) : [d['/Next']]) this.countAll(n, depth + 1);
      return;
    }
    for (const a of Object.values(d)) this.countAll(a, depth + 1);
  }

  /** Entries of a name tree (its /Names pairs, down its /Kids). */
  private treeEntries(v: unknown, depth = 0): number {
    const d = this.pdf.dict(v);
    if (!d || depth > 32) return 0;
    return this.pdf.array(d['/Names']).length / 2 + this.pdf.array(d['/Kids']).reduce<number>((n, k) => n + this.treeEntries(k, depth + 1), 0);
  }

  /** Keys every dictionary loses, at any depth of a direct value (indirect ones are cleaned as objects of their own). */
  private value(v: unknown, depth = 0): unknown {
    if (depth > 64) return v;
    if (Array.isArray(v)) {
      const out = v.map((x) => this.value(x, depth + 1));
      return out.some((x, i) => x !== v[i]) ? out : v;
    }
    if (!isDict(v)) return v;
    let d = v;
    for (const [k, x] of Object.entries(v)) {
      if (k === '/AA') {
        this.countAll(x);
        d = this.with(d, k, undefined);
      } else if (k === '/A' && this.pdf.dict(x)?.['/S'] !== undefined) {
        d = this.with(d, k, this.action(x));
      } else if (k === '/Thumb') {
        this.count('thumbnail', 1, x);
        d = this.with(d, k, undefined);
      } else if (k === '/AF') {
        this.count('associated_file', Math.max(1, this.pdf.array(x).length));
        d = this.with(d, k, undefined);
      } else if (this.opts.removeMetadata && (k === '/Metadata' || k === '/PieceInfo')) {
        this.count(k === '/Metadata' ? 'xmp_metadata' : 'private_application_data', 1, x);
        d = this.with(d, k, undefined);
      } else if (!isRef(x)) {
        d = this.with(d, k, this.value(x, depth + 1));
      }
    }
    return d;
  }

  private catalog(d: Dict): Dict {
    const open = d['/OpenAction'];
    const openDict = this.pdf.dict(open);
    // A destination, or a go-to action, only opens the document at a page.
    if (openDict && openDict['/S'] !== '/GoTo') {
      this.countAll(open);
      d = this.with(d, '/OpenAction', undefined);
    }
    if (isDict(d['/Names'])) d = this.with(d, '/Names', this.names(d['/Names'] as Dict));
    if (isDict(d['/AcroForm'])) d = this.with(d, '/AcroForm', this.form(d['/AcroForm'] as Dict));
    if ('/Collection' in d) {
      this.count('portfolio');
      d = this.with(d, '/Collection', undefined);
    }
    d = this.with(d, '/NeedsRendering', undefined);
    if (this.opts.removeSignatures) {
      if ('/Perms' in d) this.count('certification');
      if ('/DSS' in d) this.count('signature_validation_data');
      d = this.with(this.with(d, '/Perms', undefined), '/DSS', undefined);
    }
    return d;
  }

  private names(d: Dict): Dict {
    if ('/JavaScript' in d) {
      this.count('javascript', this.treeEntries(d['/JavaScript']));
      d = this.with(d, '/JavaScript', undefined);
    }
    if ('/EmbeddedFiles' in d) {
      this.count('embedded_file', this.treeEntries(d['/EmbeddedFiles']));
      d = this.with(d, '/EmbeddedFiles', undefined);
    }
    return d;
  }

  private form(d: Dict): Dict {
    if ('/XFA' in d) {
      this.count('xfa_form');
      d = this.with(d, '/XFA', undefined);
    }
    if (this.opts.removeSignatures) d = this.with(d, '/SigFlags', undefined);
    return d;
  }

  private annots(list: unknown[]): unknown[] {
    const out = list.filter((a) => {
      const d = this.pdf.dict(a);
      const kind = UNSAFE_ANNOTATIONS[String(d?.['/Subtype'])];
      if (kind) this.count(kind, 1, a);
      return !kind;
    });
    return out.length === list.length ? list : out;
  }

  /**
   * Optional content hidden in the default view: its marked-content sequences are cut out of page and form
   * content, XObjects it governs become empty forms, and annotations it governs are removed; the hidden groups
   * then leave /OCProperties (and the alternate configurations, which could show them, go).
   */
  async cullHidden(input: string, ctx: EngineContext, maxBytes?: number): Promise<void> {
    const props = this.pdf.dict(this.pdf.catalog['/OCProperties']);
    if (!props) return;
    const groups = this.pdf.array(props['/OCGs']).filter(isRef);
    const config = this.pdf.dict(props['/D']) ?? {};
    const listed = (k: string) => new Set(this.pdf.array(config[k]).filter(isRef));
    const [on, off] = [listed('/ON'), listed('/OFF')];
    const hidden = new Set(groups.filter((g) => (config['/BaseState'] === '/OFF' ? !on.has(g) : off.has(g))));
    if (!hidden.size) return;
    const isHidden = (v: unknown) => this.hidden(v, hidden);
    let cut = 0;
    const cullStream = async (ref: string, resources: unknown): Promise<Buffer | null> => {
      const names = this.pdf.dict(this.pdf.dict(resources)?.['/Properties']) ?? {};
      const hiddenNames = new Set(Object.keys(names).filter((n) => isHidden(names[n])));
      if (!hiddenNames.size) return null;
      const data = await streamData(input, ref.replace(/ R$/, ''), ctx, { maxBytes });
      const r = cullMarkedContent(data, (name) => hiddenNames.has(name));
      cut += r.removed;
      return r.removed ? r.data : null;
    };
    for (const page of this.json.pages ?? []) {
      const contents = page.contents ?? [];
      const resources = this.pdf.inherited(page.object, '/Resources');
      if (!contents.length || !this.pdf.dict(this.pdf.dict(resources)?.['/Properties'])) continue;
      // Marked content may open in one content stream and close in the next: the page's streams are culled as one.
      const joined = await Promise.all(contents.map((c) => streamData(input, c.replace(/ R$/, ''), ctx, { maxBytes })));
      const names = this.pdf.dict(this.pdf.dict(resources)?.['/Properties']) ?? {};
      const r = cullMarkedContent(Buffer.concat(joined.flatMap((b) => [b, Buffer.from('\n')])), (n) => isHidden(names[n]));
      if (!r.removed) continue;
      cut += r.removed;
      const ref = `${this.nextId++} 0 R`;
      this.updates.set(ref, new StreamUpdate({}, r.data));
      this.set(page.object, this.with(this.current(page.object) as Dict, '/Contents', ref));
    }
    for (const [key, o] of Object.entries(this.raw)) {
      const d = o.stream?.dict;
      if (!d || (d['/Subtype'] !== '/Form' && d['/Subtype'] !== '/Image')) continue;
      const ref = key.replace(/^obj:/, '');
      if (d['/OC'] !== undefined && isHidden(d['/OC'])) {
        cut++;
        this.updates.set(ref, new StreamUpdate({ '/Type': '/XObject', '/Subtype': '/Form', '/BBox': [0, 0, 0, 0] }, Buffer.alloc(0)));
        continue;
      }
      if (d['/Subtype'] !== '/Form') continue;
      const data = await cullStream(ref, d['/Resources']);
      if (!data) continue;
      const { '/Filter': _f, '/DecodeParms': _p, '/Length': _l, ...dict } = this.current(ref) as Dict;
      this.updates.set(ref, new StreamUpdate(dict, data));
    }
    for (const page of this.json.pages ?? []) {
      const pageDict = this.current(page.object) as Dict;
      const annotsRef = pageDict['/Annots'];
      const list = isRef(annotsRef) ? (this.current(annotsRef) as unknown[]) : (annotsRef as unknown[]);
      if (!Array.isArray(list)) continue;
      const kept = list.filter((a) => {
        const oc = this.pdf.dict(a)?.['/OC'];
        return oc === undefined || !isHidden(oc);
      });
      if (kept.length === list.length) continue;
      cut += list.length - kept.length;
      if (isRef(annotsRef)) this.set(annotsRef, kept);
      else this.set(page.object, this.with(pageDict, '/Annots', kept));
    }
    this.count('hidden_content', cut);
    // The hidden groups go from the properties; alternate configurations (/Configs) could show what is left.
    const drop = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.filter((x) => !(isRef(x) && hidden.has(x))).map(drop)
        : isRef(v) && Array.isArray(this.pdf.resolve(v))
          ? drop(this.pdf.resolve(v))
          : v;
    const newConfig: Dict = {};
    for (const [k, v] of Object.entries(config)) newConfig[k] = drop(v);
    const newProps: Dict = { '/OCGs': drop(props['/OCGs']), '/D': newConfig };
    // The groups themselves go too (resources may still name them, now for nothing).
    for (const g of hidden) this.updates.set(g, null);
    const propsRef = this.pdf.catalog['/OCProperties'];
    if (isRef(propsRef)) this.set(propsRef, newProps);
    else {
      const catalogRef = String(this.pdf.trailer['/Root']);
      this.set(catalogRef, this.with(this.current(catalogRef) as Dict, '/OCProperties', newProps));
    }
  }

  /** Whether an optional content group or membership dictionary is hidden in the default view. */
  private hidden(v: unknown, hidden: Set<string>, depth = 0): boolean {
    if (isRef(v) && hidden.has(v)) return true;
    const d = this.pdf.dict(v);
    if (d?.['/Type'] !== '/OCMD' || depth > 16) return false;
    if (d['/VE'] !== undefined) return !this.visible(d['/VE'], hidden, depth + 1);
    const ocgs = Array.isArray(this.pdf.resolve(d['/OCGs'])) ? this.pdf.array(d['/OCGs']) : d['/OCGs'] === undefined ? [] : [d['/OCGs']];
    if (!ocgs.length) return false;
    const shown = ocgs.map((g) => !(isRef(g) && hidden.has(g)));
    switch (d['/P']) {
      case '/AllOn':
        return !shown.every(Boolean);
      case '/AnyOff':
        return shown.every(Boolean);
      case '/AllOff':
        return shown.some(Boolean);
      default:
        return !shown.some(Boolean);
    }
  }

  /** A visibility expression: [/And ...], [/Or ...], [/Not x], or a group. */
  private visible(v: unknown, hidden: Set<string>, depth: number): boolean {
    const e = this.pdf.resolve(v);
    if (!Array.isArray(e) || depth > 16) return !(isRef(v) && hidden.has(v));
    const [op, ...args] = e;
    const vals = args.map((a) => this.visible(a, hidden, depth + 1));
    if (op === '/Not') return !vals[0];
    if (op === '/And') return vals.every(Boolean);
    return vals.some(Boolean);
  }
}
