import { readFile } from 'node:fs/promises';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { EngineContext } from '../../engines/context.js';
import { readPdfJson } from '../../engines/qpdf.js';
import { PdfObjects, pdfText } from '../document/index.js';
import { AppError } from '../errors.js';

/**
 * Form data files (spec 4.10) read into one shape: field values by fully qualified name, plus, for XFA
 * data, the data packet itself. FDF is PDF syntax and is read by qpdf (it recovers the missing xref);
 * XFDF, Acrobat's AcroForm XML and XFA data (.xdp, .xfd, .xml) are XML, read with fast-xml-parser.
 */

export interface FieldValue {
  /** Fully qualified name, parts joined with "." (XFA paths as element names, without [n] indices). */
  name: string;
  /** One value; several for a multiple-choice list. A button state may come as a name ("Yes", "Off"). */
  values: string[];
}

export interface FormData {
  format: 'fdf' | 'xfdf' | 'xml' | 'xfa';
  fields: FieldValue[];
  /** XFA only: the `<xfa:datasets>` packet to put in the form. */
  datasets?: string;
}

export const DATA_EXTENSIONS = ['fdf', 'xfdf', 'xml', 'xdp', 'xfd'];

const badData = (format: string, detail: string) =>
  new AppError('invalid_input', `The data_file is not a valid ${format} file (${detail}), so the form could not be filled correctly.`);

export async function readFormData(path: string, name: string, ctx: EngineContext): Promise<FormData> {
  const ext = /\.([^.]+)$/.exec(name)?.[1]?.toLowerCase() ?? '';
  const bytes = await readFile(path);
  if (ext === 'fdf' || bytes.subarray(0, 4).toString('latin1') === '%FDF') return readFdf(path, ctx);
  const xml = bytes.toString('utf8');
  // A DTD declares entities: external ones name files or URLs to read (XXE), nested ones expand without end
  // (billion laughs). Form data never carries one, so none is read at all.
  if (/<!DOCTYPE/i.test(xml)) {
    throw new AppError(
      'invalid_input',
      'The data_file declares a DOCTYPE (a DTD or entity declarations), which is not allowed in form data, so the form could not be filled correctly.',
    );
  }
  const valid = XMLValidator.validate(xml);
  if (valid !== true) throw badData(ext === 'xfdf' ? 'XFDF' : 'XML', `line ${valid.err.line}: ${valid.err.msg}`);
  return readXml(xml, ext);
}

// ---------------------------------------------------------------- FDF

async function readFdf(path: string, ctx: EngineContext): Promise<FormData> {
  const json = await readPdfJson(path, ctx).then(
    (r) => r.json,
    () => {
      throw badData('FDF', 'unreadable');
    },
  );
  const objects = new PdfObjects(json);
  const fdf = objects.dict(objects.catalog['/FDF']);
  if (!fdf) throw badData('FDF', 'no /FDF dictionary');
  const fields: FieldValue[] = [];
  const walk = (list: unknown[], prefix: string, depth: number) => {
    for (const item of list) {
      const f = objects.dict(item);
      if (!f || depth > 32) continue;
      const part = f['/T'] === undefined ? '' : pdfText(objects.resolve(f['/T']));
      const name = part ? (prefix ? `${prefix}.${part}` : part) : prefix;
      const v = objects.resolve(f['/V']);
      if (v !== undefined && v !== null && name) {
        const values = Array.isArray(v) ? v.map((x) => pdfText(objects.resolve(x))) : [pdfText(v)];
        fields.push({ name, values });
      }
      walk(objects.array(f['/Kids']), name, depth + 1);
    }
  };
  walk(objects.array(fdf['/Fields']), '', 0);
  return { format: 'fdf', fields };
}

// ---------------------------------------------------------------- XML

type Node = Record<string, unknown> & { ':@'?: Record<string, string> };
const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  trimValues: false,
  parseTagValue: false,
  parseAttributeValue: false,
});

const tagOf = (n: Node) => Object.keys(n).find((k) => k !== ':@') ?? '';
const childrenOf = (n: Node) => (Array.isArray(n[tagOf(n)]) ? (n[tagOf(n)] as Node[]) : []);
const local = (tag: string) => tag.replace(/^.*:/, '');
const elements = (nodes: Node[]) => nodes.filter((n) => !tagOf(n).startsWith('#') && !tagOf(n).startsWith('?'));
const textOf = (n: Node): string =>
  childrenOf(n)
    .map((c) => (tagOf(c) === '#text' ? String(c['#text']) : tagOf(c).startsWith('#') || tagOf(c).startsWith('?') ? '' : textOf(c)))
    .join('');
const find = (nodes: Node[], name: string): Node | undefined => {
  for (const n of elements(nodes)) {
    if (local(tagOf(n)) === name) return n;
    const inner = find(childrenOf(n), name);
    if (inner) return inner;
  }
  return undefined;
};

function readXml(xml: string, ext: string): FormData {
  let doc: Node[];
  try {
    doc = parser.parse(xml) as Node[];
  } catch (err) {
    // Well-formed XML the parser still refuses (its nesting and entity limits): the client's file.
    throw badData(ext === 'xfdf' ? 'XFDF' : 'XML', (err as Error).message);
  }
  const root = elements(doc)[0];
  if (!root) throw badData('XML', 'no root element');
  const rootName = local(tagOf(root));
  if (rootName === 'xfdf') return readXfdf(root);
  if (rootName === 'xdp' || find([root], 'datasets') || ext === 'xdp' || ext === 'xfd') return readXfa(xml, root);
  // Acrobat's "XML" export of an AcroForm: one element per field, nested for hierarchical names; a name that
  // is not a valid XML name is kept in an xfdf:original attribute. The same file may also be XFA data.
  const fields: FieldValue[] = [];
  leaves(childrenOf(root), '', fields);
  return { format: 'xml', fields, datasets: datasetsPacket(xml.slice(xml.indexOf(`<${tagOf(root)}`))) };
}

function readXfdf(root: Node): FormData {
  const fields: FieldValue[] = [];
  const walk = (nodes: Node[], prefix: string) => {
    for (const n of elements(nodes)) {
      if (local(tagOf(n)) !== 'field') continue;
      const part = n[':@']?.name ?? '';
      const name = prefix ? `${prefix}.${part}` : part;
      const values = elements(childrenOf(n))
        .filter((c) => ['value', 'value-richtext'].includes(local(tagOf(c))))
        .map(textOf);
      if (values.length) fields.push({ name, values });
      walk(childrenOf(n), name);
    }
  };
  const list = find([root], 'fields');
  if (!list) throw badData('XFDF', 'no <fields> element: it holds no form field values');
  walk(childrenOf(list), '');
  return { format: 'xfdf', fields };
}

/** Leaf elements as dotted paths (XFA data and AcroForm XML alike). */
function leaves(nodes: Node[], prefix: string, out: FieldValue[]) {
  for (const n of elements(nodes)) {
    const part = n[':@']?.['xfdf:original'] ?? local(tagOf(n));
    const name = prefix ? `${prefix}.${part}` : part;
    const kids = elements(childrenOf(n));
    if (kids.length) leaves(childrenOf(n), name, out);
    else out.push({ name, values: [textOf(n)] });
  }
}

const XFA_DATA_NS = 'http://www.xfa.org/schema/xfa-data/1.0/';

/** The `<xfa:datasets>` packet for some data: the given one, or the data wrapped in datasets/data. */
function datasetsPacket(dataXml: string): string {
  return `<xfa:datasets xmlns:xfa="${XFA_DATA_NS}"><xfa:data>${dataXml}</xfa:data></xfa:datasets>`;
}

function readXfa(xml: string, root: Node): FormData {
  const datasets = find([root], 'datasets');
  let packet: string;
  let data: Node | undefined;
  if (datasets) {
    // The packet is copied as written; its prefix must be bound on the element itself once it stands alone.
    const m = /<([\w.-]+:)?datasets\b[\s\S]*?<\/\1?datasets\s*>/.exec(xml);
    if (!m) throw badData('XFA', 'no datasets packet');
    packet = m[0];
    const prefix = (m[1] ?? '').replace(/:$/, '');
    if (prefix && !new RegExp(`xmlns:${prefix}\\s*=`).test(packet.slice(0, packet.indexOf('>')))) {
      packet = packet.replace(new RegExp(`^<${prefix}:datasets`), `<${prefix}:datasets xmlns:${prefix}="${XFA_DATA_NS}"`);
    }
    data = find(childrenOf(datasets), 'data');
  } else {
    const inner = xml.slice(xml.indexOf(`<${tagOf(root)}`));
    packet = datasetsPacket(inner);
    data = { data: [root] } as unknown as Node;
  }
  const fields: FieldValue[] = [];
  if (data) leaves(childrenOf(data), '', fields);
  return { format: 'xfa', fields, datasets: packet };
}

// ---------------------------------------------------------------- filling

/** One widget of qpdf's JSON `acroform.fields` list (a field with several widgets appears once per widget). */
export interface FormWidget {
  fullname: string;
  fieldtype: string;
  fieldflags: number;
  object: string;
  parent: string | null;
  ischeckbox: boolean;
  isradiobutton: boolean;
  annotation: { object: string };
}

/** Names compared without XFA's [n] indices and unnamed (#subform) levels: XFA data paths reach AcroForm names. */
export const normalName = (name: string) =>
  name
    .split('.')
    .map((p) => p.replace(/\[\d+\]$/, ''))
    .filter((p) => p && !p.startsWith('#'))
    .join('.');

const OFF = /^(off|no|false|0|)$/i;
const MULTI_SELECT = 1 << 21;
const PUSH_BUTTON = 1 << 16;

export interface FillPlan {
  /** Objects to replace ("N G R" -> new dictionary), in qpdf JSON v2 form. */
  updates: Map<string, Record<string, unknown>>;
  filled: string[];
  /** Data names with no field in the form. */
  unknown: string[];
  /** Fields found but not filled (push buttons, signatures, a state the button does not have). */
  skipped: string[];
}

/**
 * The object changes that put the values in: /V on the field (the node that carries /T), /AS on each
 * widget of a check box or radio button (its on-state named by the value, or Off). Text and choice
 * appearances are left to qpdf (--generate-appearances) through /NeedAppearances.
 */
export function planFill(objects: PdfObjects, widgets: FormWidget[], data: FieldValue[]): FillPlan {
  const updates = new Map<string, Record<string, unknown>>();
  const edit = (ref: string) => updates.get(ref) ?? updates.set(ref, { ...(objects.dict(ref) ?? {}) }).get(ref)!;
  const byName = new Map<string, FormWidget[]>();
  const byNormal = new Map<string, FormWidget[]>();
  for (const w of widgets) {
    (byName.get(w.fullname) ?? byName.set(w.fullname, []).get(w.fullname)!).push(w);
    const n = normalName(w.fullname);
    (byNormal.get(n) ?? byNormal.set(n, []).get(n)!).push(w);
  }
  const plan: FillPlan = { updates, filled: [], unknown: [], skipped: [] };
  for (const { name, values } of data) {
    const group = byName.get(name) ?? byNormal.get(normalName(name));
    if (!group) {
      plan.unknown.push(name);
      continue;
    }
    const first = group[0];
    if (!['/Tx', '/Ch', '/Btn'].includes(first.fieldtype) || (first.fieldtype === '/Btn' && first.fieldflags & PUSH_BUTTON)) {
      plan.skipped.push(name);
      continue;
    }
    const holder = objects.dict(first.object)?.['/T'] !== undefined || !first.parent ? first.object : first.parent;
    const field = () => edit(holder);
    if (first.fieldtype === '/Tx') field()['/V'] = `u:${values.join('\n')}`;
    else if (first.fieldtype === '/Ch') {
      field()['/V'] = values.length > 1 && first.fieldflags & MULTI_SELECT ? values.map((v) => `u:${v}`) : `u:${values[0] ?? ''}`;
      delete field()['/I']; // selected indices of the old value: viewers prefer them to /V
    } else {
      const states = group.map((w) => onState(objects, w.annotation.object));
      const wanted = values[0] ?? '';
      // The value names a state ("Option3", "1"); a check box with one on-state also takes yes/on/true.
      let state = states.find((s) => s && pdfText(s) === wanted);
      if (!state && !OFF.test(wanted) && !first.isradiobutton && new Set(states.filter(Boolean)).size === 1) state = states.find(Boolean);
      if (!state && !OFF.test(wanted)) {
        plan.skipped.push(name);
        continue;
      }
      field()['/V'] = state ?? '/Off';
      group.forEach((w, i) => {
        edit(w.annotation.object)['/AS'] = state && states[i] === state ? state : '/Off';
      });
    }
    plan.filled.push(name);
  }
  return plan;
}

/** A button widget's on-state: the key of its normal appearance that is not Off. */
function onState(objects: PdfObjects, widget: string): string | undefined {
  const normal = objects.dict(objects.dict(objects.dict(widget)?.['/AP'])?.['/N']);
  return Object.keys(normal ?? {}).find((k) => k !== '/Off');
}
