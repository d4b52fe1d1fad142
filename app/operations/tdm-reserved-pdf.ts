import { join } from 'node:path';
import { inputError, openPdf } from '../document/index.js';
import { outOfRange } from '../errors.js';
import { output, text } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';
import { readWritten, updateObjects } from '../rewrite/index.js';

/** The TDMRep vocabulary (W3C Community Group report, "PDF" binding: XMP properties in this namespace). */
export const TDM_NS = 'http://www.w3.org/ns/tdmrep/';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The rdf:Description that carries the reservation (and the policy URL when there is one). */
export function tdmDescription(policy: string | undefined): string {
  return (
    `<rdf:Description rdf:about="" xmlns:tdm="${TDM_NS}">` +
    '<tdm:reservation>1</tdm:reservation>' +
    (policy ? `<tdm:policy>${esc(policy)}</tdm:policy>` : '') +
    '</rdf:Description>'
  );
}

/**
 * The document's XMP with the TDMRep properties merged in: every other property is kept; earlier tdm:reservation /
 * tdm:policy values (as elements or attributes, with any prefix bound to the TDMRep namespace) are replaced.
 * A document without XMP gets a packet holding only the TDMRep description.
 */
export function mergeTdm(xmp: string, policy: string | undefined): string {
  const desc = tdmDescription(policy);
  if (!/<rdf:RDF[\s>]/.test(xmp) || !/<\/rdf:RDF>/.test(xmp)) {
    return [
      '<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?>',
      '<x:xmpmeta xmlns:x="adobe:ns:meta/">',
      '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">',
      desc,
      '</rdf:RDF>',
      '</x:xmpmeta>',
      `${`${' '.repeat(100)}\n`.repeat(10)}<?xpacket end="w"?>`,
    ].join('\n');
  }
  const prefixes = new Set(['tdm']);
  for (const m of xmp.matchAll(/xmlns:([A-Za-z_][\w.-]*)\s*=\s*["']http:\/\/www\.w3\.org\/ns\/tdmrep\/?["']/g)) prefixes.add(m[1]);
  let out = xmp;
  for (const p of prefixes) {
    for (const prop of ['reservation', 'policy']) {
      out = out.replace(new RegExp(`<${p}:${prop}\\b[^>]*/>`, 'g'), '');
      out = out.replace(new RegExp(`<${p}:${prop}\\b[^>]*>[\\s\\S]*?</${p}:${prop}>`, 'g'), '');
      out = out.replace(new RegExp(`\\s${p}:${prop}\\s*=\\s*("[^"]*"|'[^']*')`, 'g'), '');
    }
  }
  const at = out.lastIndexOf('</rdf:RDF>');
  return `${out.slice(0, at)}${desc}\n${out.slice(at)}`;
}

const isHttpUrl = (s: string) => {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && !!u.hostname;
  } catch {
    return false;
  }
};

export default operation({
  path: '/tdm-reserved-pdf',
  tag: 'Optimisation, colour and page geometry',
  summary: 'Reserve text and data mining rights (W3C TDMRep)',
  description:
    `Writes the W3C TDM Reservation Protocol into the document's XMP metadata (namespace ${TDM_NS}, prefix tdm): tdm:reservation = 1 and, when ` +
    '`policy` is given, tdm:policy = that URL (an http or https URL of the terms or of a machine-readable TDM policy). The existing XMP is kept ' +
    '(earlier tdm values replaced), as are the Info dictionary and the encryption of a file that opens without a password (qpdf rewrite).',
  inputs: pdfInput(),
  fields: {
    policy: text({ max: 4096 })
      .optional()
      .meta({ type: 'string', format: 'uri', description: 'URL of the TDM policy (http or https).', examples: ['https://example.com/tdm-policy'] }),
    output: output(),
  },
  output: 'file',
  engines: ['qpdf'],
  cost: { lane: 'light' },
  check: (f) => {
    if (f.policy !== undefined && !isHttpUrl(f.policy.trim())) throw outOfRange(f.policy, 'policy: an http or https URL');
  },
  run: async ({ input, fields, dir, signal, timeoutMs, outputName }) => {
    const ctx = { cwd: dir, signal, timeoutMs };
    await openPdf(input.path, ctx); // 401 for a password-protected file, 400 for a broken one
    const w = await readWritten(input.path, ctx).catch((err) => {
      throw inputError(err);
    });
    const xmp = mergeTdm(w.xmp, fields.policy?.trim() || undefined);
    const stream = { stream: { dict: { '/Type': '/Metadata', '/Subtype': '/XML' }, data: xmp } };
    const path = join(dir, 'tdm-reserved.pdf');
    const updates: Record<string, unknown> = {};
    if (w.metadataRef) updates[w.metadataRef] = stream;
    else {
      const ref = `${w.maxObjectId + 1} 0 R`;
      updates[ref] = stream;
      updates[w.catalogRef] = { ...w.objects.catalog, '/Metadata': ref };
    }
    await updateObjects(input.path, path, updates, ctx).catch((err) => {
      throw inputError(err);
    });
    return { files: [{ path, name: `${outputName}.pdf` }] };
  },
});
