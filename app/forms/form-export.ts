import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { type PdfObjects, pdfText } from '../document/index.js';
import { AppError } from '../errors.js';
import type { FormWidget } from './form-data.js';

/**
 * Form data written out (the reverse of form-data.ts): AcroForm values as FDF, XFDF or Acrobat's AcroForm XML,
 * and XFA data as XDP, XFD (the datasets packet alone) or XML (the data element alone). Every file is written
 * so that our own importer (/pdf-with-imported-form-data) reads it back to the same values.
 */

export type AcroFormat = 'fdf' | 'xfdf' | 'xml';
export type XfaFormat = 'xdp' | 'xfd' | 'xml';

/** One field's value as the PDF holds it: a string (text, choice) or a name (button state). */
export interface ExportedField {
  name: string;
  kind: 'string' | 'name';
  /** Several for a multiple-choice list; empty when the field has no value. */
  values: string[];
}

const PUSH_BUTTON = 1 << 16;

/** The AcroForm fields with their values, one per fully qualified name (radio widgets share one), in form order. */
export function acroFormValues(objects: PdfObjects, widgets: (FormWidget & { value?: unknown })[]): ExportedField[] {
  const seen = new Map<string, ExportedField>();
  for (const w of widgets) {
    if (seen.has(w.fullname) || !w.fullname) continue;
    // Signatures and push buttons hold no data a form exports.
    if (!['/Tx', '/Ch', '/Btn'].includes(w.fieldtype) || (w.fieldtype === '/Btn' && w.fieldflags & PUSH_BUTTON)) continue;
    const raw = objects.resolve(w.value);
    const list = Array.isArray(raw) ? raw.map((v) => objects.resolve(v)) : raw === null || raw === undefined ? [] : [raw];
    const kind = w.fieldtype === '/Btn' ? 'name' : 'string';
    seen.set(w.fullname, { name: w.fullname, kind, values: list.map((v) => pdfText(v)) });
  }
  return [...seen.values()];
}

// ---------------------------------------------------------------- XML helpers

/** Characters XML 1.0 cannot carry at all (not even as references) are dropped. */
// eslint-disable-next-line no-control-regex
const xmlChars = (s: string) =>
  s.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '').replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '');
export const xmlEscape = (s: string) =>
  xmlChars(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/\r/g, '&#13;');

/** A name as an XML element name: Acrobat's way, invalid characters as `_`, the real name kept in xfdf:original. */
const elementName = (part: string) => {
  let s = part.replace(/[^A-Za-z0-9_.-]/g, '_');
  if (!/^[A-Za-z_]/.test(s)) s = `_${s}`;
  if (/^xml/i.test(s)) s = `_${s}`;
  return s;
};

interface Tree {
  part: string;
  field?: ExportedField;
  kids: Tree[];
}

/** Fully qualified names back into the field hierarchy (partial names never hold a period). */
function tree(fields: ExportedField[]): Tree[] {
  const roots: Tree[] = [];
  for (const f of fields) {
    let level = roots;
    let node: Tree | undefined;
    for (const part of f.name.split('.')) {
      node = level.find((n) => n.part === part && !n.field);
      if (!node || node.field) {
        node = { part, kids: [] };
        level.push(node);
      }
      level = node.kids;
    }
    node!.field = f;
  }
  return roots;
}

// ---------------------------------------------------------------- FDF

/** A PDF text string: literal when it is printable ASCII, else UTF-16BE with a byte order mark in hex. */
function pdfString(s: string): string {
  if (/^[\x20-\x7e]*$/.test(s)) return `(${s.replace(/[\\()]/g, (c) => `\\${c}`)})`;
  return `<FEFF${Buffer.from(s, 'utf16le').swap16().toString('hex').toUpperCase()}>`;
}

/** A PDF name: bytes outside the regular characters as #xx (UTF-8 for non-ASCII). */
function pdfName(s: string): string {
  let out = '/';
  for (const b of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(b);
    out += b > 0x20 && b < 0x7f && !'#()<>[]{}/%'.includes(c) ? c : `#${b.toString(16).padStart(2, '0').toUpperCase()}`;
  }
  return out;
}

export function writeFdf(fields: ExportedField[], pdfName_?: string): Buffer {
  const value = (f: ExportedField) => {
    if (!f.values.length) return '';
    const one = (v: string) => (f.kind === 'name' ? pdfName(v) : pdfString(v));
    return ` /V ${f.values.length > 1 ? `[${f.values.map(one).join(' ')}]` : one(f.values[0])}`;
  };
  const node = (n: Tree): string =>
    `<< /T ${pdfString(n.part)}${n.field ? value(n.field) : ''}${n.kids.length ? ` /Kids [${n.kids.map(node).join('\n')}]` : ''} >>`;
  const file = pdfName_ ? ` /F ${pdfString(pdfName_)}` : '';
  const head = '%FDF-1.2\n%\xe2\xe3\xcf\xd3\n';
  const obj = `1 0 obj\n<< /FDF << /Fields [\n${tree(fields).map(node).join('\n')}\n]${file} >> >>\nendobj\n`;
  const xref = Buffer.byteLength(head, 'latin1') + Buffer.byteLength(obj, 'latin1');
  const tail = `xref\n0 2\n0000000000 65535 f \n${String(Buffer.byteLength(head, 'latin1')).padStart(10, '0')} 00000 n \ntrailer\n<< /Size 2 /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(head + obj + tail, 'latin1');
}

// ---------------------------------------------------------------- XFDF and AcroForm XML

export function writeXfdf(fields: ExportedField[], pdfFile?: string): Buffer {
  const node = (n: Tree): string => {
    const values = n.field?.values.map((v) => `<value>${xmlEscape(v)}</value>`).join('') ?? '';
    return `<field name="${xmlEscape(n.part)}">${values}${n.kids.map(node).join('')}</field>`;
  };
  const f = pdfFile ? `<f href="${xmlEscape(pdfFile)}"/>` : '';
  return checked(
    `<?xml version="1.0" encoding="UTF-8"?>\n<xfdf xmlns="http://ns.adobe.com/xfdf/" xml:space="preserve"><fields>\n${tree(fields).map(node).join('\n')}\n</fields>${f}</xfdf>\n`,
  );
}

/** Acrobat's "XML" export of an AcroForm: one element per field, nested by name; real names in xfdf:original. */
export function writeAcroXml(fields: ExportedField[]): Buffer {
  const node = (n: Tree): string => {
    const tag = elementName(n.part);
    const original = tag === n.part ? '' : ` xfdf:original="${xmlEscape(n.part)}"`;
    if (n.kids.length) return `<${tag}${original}>${n.kids.map(node).join('')}</${tag}>`;
    return (n.field?.values.length ? n.field.values : ['']).map((v) => `<${tag}${original}>${xmlEscape(v)}</${tag}>`).join('');
  };
  return checked(
    `<?xml version="1.0" encoding="UTF-8"?>\n<fields xmlns:xfdf="http://ns.adobe.com/xfdf-transition/">${tree(fields).map(node).join('')}</fields>\n`,
  );
}

// ---------------------------------------------------------------- XFA

const XFA_DATA_NS = 'http://www.xfa.org/schema/xfa-data/1.0/';

/** The contents of `<xfa:data>` in a datasets packet (undefined when the packet has no data element). */
export function xfaDataOf(datasets: string): string | undefined {
  const m = /<([\w.-]+:)?data\b[^>]*?(?:\/>|>([\s\S]*?)<\/\1?data\s*>)/.exec(datasets.replace(/^[\s\S]*?<([\w.-]+:)?datasets\b[^>]*>/, ''));
  return m ? (m[2] ?? '') : undefined;
}

type XNode = Record<string, unknown> & { ':@'?: Record<string, string> };
const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  trimValues: false,
  parseTagValue: false,
  parseAttributeValue: false,
});
const tagOf = (n: XNode) => Object.keys(n).find((k) => k !== ':@') ?? '';
const kidsOf = (n: XNode) => (Array.isArray(n[tagOf(n)]) ? (n[tagOf(n)] as XNode[]) : []);
const local = (t: string) => t.replace(/^.*:/, '');
const textOf = (n: XNode): string =>
  kidsOf(n)
    .map((c) => (tagOf(c) === '#text' ? String(c['#text']) : tagOf(c).startsWith('#') || tagOf(c).startsWith('?') ? '' : textOf(c)))
    .join('');

/**
 * Data for a template that has no datasets packet yet: the data the form would bind, one element per named
 * subform and field (buttons and fields bound to nothing left out), with the template's default values.
 */
export function xfaDataFromTemplate(template: string): string {
  let doc: XNode[];
  try {
    doc = parser.parse(template) as XNode[];
  } catch {
    throw new AppError('invalid_input', 'Uploaded file is not valid input for this route: its XFA template cannot be read');
  }
  const walk = (nodes: XNode[]): string =>
    nodes
      .map((n) => {
        const tag = local(tagOf(n));
        const name = n[':@']?.name;
        if (tag === 'subform' || tag === 'subformSet' || tag === 'area') {
          const inner = walk(kidsOf(n));
          return name && tag === 'subform' ? `<${elementName(name)}>${inner}</${elementName(name)}>` : inner;
        }
        if (tag === 'exclGroup' && name) return `<${elementName(name)}></${elementName(name)}>`;
        if (tag !== 'field' || !name) return tag === 'template' ? walk(kidsOf(n)) : '';
        const kids = kidsOf(n);
        const bind = kids.find((k) => local(tagOf(k)) === 'bind');
        if (bind?.[':@']?.match === 'none') return '';
        const ui = kids.find((k) => local(tagOf(k)) === 'ui');
        if (ui && kidsOf(ui).some((k) => local(tagOf(k)) === 'button')) return '';
        const value = kids.find((k) => local(tagOf(k)) === 'value');
        return `<${elementName(name)}>${value ? xmlEscape(textOf(value)) : ''}</${elementName(name)}>`;
      })
      .join('');
  return walk(doc);
}

/** XFA data in the format asked for: the data alone (xml), the datasets packet (xfd), or an XDP around it. */
export function writeXfa(data: string, format: XfaFormat, pdfFile?: string): Buffer {
  const datasets = `<xfa:datasets xmlns:xfa="${XFA_DATA_NS}"><xfa:data>${data}</xfa:data></xfa:datasets>`;
  if (format === 'xfd') return checked(`<?xml version="1.0" encoding="UTF-8"?>\n${datasets}\n`);
  if (format === 'xdp') {
    const pdf = pdfFile ? `<pdf xmlns="http://ns.adobe.com/xdp/pdf/" href="${xmlEscape(pdfFile)}"/>` : '';
    return checked(
      `<?xml version="1.0" encoding="UTF-8"?>\n<?xfa generator="Quire" APIVersion="3.3"?>\n<xdp:xdp xmlns:xdp="http://ns.adobe.com/xdp/">${datasets}${pdf}</xdp:xdp>\n`,
    );
  }
  // One root element: the data as it is, or wrapped when the packet holds several (or none).
  const roots = (parser.parse(data) as XNode[]).filter((n) => !tagOf(n).startsWith('#') && !tagOf(n).startsWith('?'));
  let body = roots.length === 1 ? data.trim() : `<form1>${data}</form1>`;
  // Data nodes may carry xfa: attributes (xfa:dataNode), bound on the datasets element the data came from.
  if (/\sxfa:/.test(body) && !/^<[^>]*xmlns:xfa=/.test(body)) body = body.replace(/^<([\w.:-]+)/, `<$1 xmlns:xfa="${XFA_DATA_NS}"`);
  return checked(`<?xml version="1.0" encoding="UTF-8"?>\n${body}\n`);
}

/** Every file we write is well-formed: checked, so a form whose own packet is broken is refused, not passed on. */
function checked(xml: string): Buffer {
  const ok = XMLValidator.validate(xml);
  if (ok !== true)
    throw new AppError(
      'invalid_input',
      `Uploaded file is not valid input for this route: its form data is not well-formed XML (line ${ok.err.line}: ${ok.err.msg})`,
    );
  return Buffer.from(xml, 'utf8');
}
