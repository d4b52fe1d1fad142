import { existsSync } from 'node:fs';
import { mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import type { EngineContext } from './context.js';
import { EngineError } from './errors.js';
import { run } from './run.js';

/**
 * ISO Schematron through libxslt: Rick Jelliffe's XSLT 1.0 implementation (Debian ships it in python3-lxml)
 * compiles a schema into a stylesheet once per process (includes, abstract patterns, SVRL output), and each
 * document is one `xsltproc` run whose SVRL report becomes findings. Native and streaming-free, but a 20 MB
 * invoice takes about a second; XPath 1.0 is the query language of the schemas it runs.
 */

const ISO_SCHEMATRON_XSLT1 = '/usr/lib/python3/dist-packages/lxml/isoschematron/resources/xsl/iso-schematron-xslt1';

export interface SchematronFinding {
  /** The assert's or report's id (the business rule: `BR-CO-15`). */
  id: string;
  /** Its flag (`fatal`, `warning`, `information`), '' when the schema gave none. */
  flag: string;
  /** The context node as a prefixed XPath (`/rsm:CrossIndustryInvoice/...[2]`). */
  location: string;
  /** The message, with its value-of parts filled in. */
  text: string;
}

const compiled = new Map<string, Promise<string>>();

/** The SVRL stylesheet of `schema` (an absolute path), compiled once per process; a failed compile is retried. */
export function compileSchematron(schema: string): Promise<string> {
  let p = compiled.get(schema);
  if (!p) {
    p = compile(schema);
    compiled.set(schema, p);
    p.catch(() => compiled.delete(schema));
  }
  return p;
}

async function compile(schema: string): Promise<string> {
  if (!existsSync(ISO_SCHEMATRON_XSLT1))
    throw new EngineError('xsltproc', `not installed: the ISO Schematron XSLT (python3-lxml) is missing at ${ISO_SCHEMATRON_XSLT1}`, { missing: true });
  const dir = await mkdtemp(join(tmpdir(), 'quire-sch-'));
  try {
    const ctx = { cwd: dir, timeoutMs: 60_000 };
    const step = async (xsl: string, input: string, output: string, params: string[] = []) => {
      const r = await run('xsltproc', [...params, '--nonet', join(ISO_SCHEMATRON_XSLT1, xsl), input], ctx);
      await writeFile(join(dir, output), r.stdout);
      return join(dir, output);
    };
    const included = await step('iso_dsdl_include.xsl', schema, 'included.sch');
    const expanded = await step('iso_abstract_expand.xsl', included, 'expanded.sch');
    // Only failed asserts and successful reports: fired-rule elements would name every matched node.
    const xsl = await step('iso_svrl_for_xslt1.xsl', expanded, 'compiled.xsl', ['--stringparam', 'generate-fired-rule', 'false']);
    return fastPaths(await readFile(xsl, 'utf8'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The implementation's location template counts same-name siblings with a predicate calling local-name() on each
 * (and scans the following ones too): one finding on each of 10,000 invoice lines took 13 s. xsl:number without
 * `count` counts the same expanded name natively, and one look at the next sibling decides whether an index is
 * shown (repeated elements are adjacent in a schema's sequences): 1.2 s, the same report. Steps in the schema's
 * namespaces are written with its prefixes, and the asserts' test expressions are not copied into each finding:
 * a report of 100,000 findings stays a few tens of megabytes.
 */
const FULL_PATH = /<axsl:template match="\*" mode="schematron-get-full-path">[\s\S]*?<\/axsl:template>/;
const NS_PREFIX = /<svrl:ns-prefix-in-attribute-values uri="([^"']*)" prefix="([\w.-]+)"\/>/g;

function fastPaths(xsl: string): string {
  if (!FULL_PATH.test(xsl))
    throw new EngineError('xsltproc', 'the ISO Schematron implementation wrote no location template where one was expected (another version of python3-lxml?)');
  const known = [...xsl.matchAll(NS_PREFIX)].map(
    ([, uri, prefix]) => `<axsl:when test="namespace-uri()='${uri}'"><axsl:text>/${prefix}:</axsl:text><axsl:value-of select="local-name()"/></axsl:when>`,
  );
  const template =
    `<axsl:template match="*" mode="schematron-get-full-path"><axsl:apply-templates select="parent::*" mode="schematron-get-full-path"/><axsl:choose>${known.join('')}` +
    `<axsl:otherwise><axsl:text>/*[local-name()='</axsl:text><axsl:value-of select="local-name()"/><axsl:text>' and namespace-uri()='</axsl:text><axsl:value-of select="namespace-uri()"/><axsl:text>']</axsl:text></axsl:otherwise></axsl:choose>` +
    `<axsl:variable name="p"><axsl:number level="single"/></axsl:variable>` +
    `<axsl:if test="$p &gt; 1 or (local-name(following-sibling::*[1]) = local-name() and namespace-uri(following-sibling::*[1]) = namespace-uri())">[<axsl:value-of select="$p"/>]</axsl:if></axsl:template>`;
  return xsl.replace(FULL_PATH, () => template).replace(/(<svrl:(?:failed-assert|successful-report)\b[^>]*?) test="[^"]*"/g, '$1');
}

const svrl = new XMLParser({
  removeNSPrefix: true,
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  parseTagValue: false,
  parseAttributeValue: false,
  processEntities: true,
  htmlEntities: false,
  isArray: (name) => name === 'failed-assert' || name === 'successful-report' || name === 'ns-prefix-in-attribute-values',
});

/**
 * The XSLT 1.0 SVRL writer spells each step `*[local-name()='X' and namespace-uri()='U'][n]`; written with the
 * schema's own prefixes (`ram:X[n]`) the location reads like the rule's context.
 */
function prefixed(location: string, prefixes: Map<string, string>): string {
  return location.replace(/\*\[local-name\(\)='([^']*)' and namespace-uri\(\)='([^']*)'\]/g, (step, name: string, uri: string) =>
    uri === '' ? name : prefixes.has(uri) ? `${prefixes.get(uri)}:${name}` : step,
  );
}

/** Parses an SVRL report: failed asserts and successful reports, in document order within each kind. */
function parseSvrl(xml: string): SchematronFinding[] {
  const root = (svrl.parse(xml) as Record<string, Record<string, unknown>>)['schematron-output'] ?? {};
  const ns = (root['ns-prefix-in-attribute-values'] as Record<string, unknown>[] | undefined) ?? [];
  const prefixes = new Map(ns.map((n) => [String(n['@uri']), String(n['@prefix'])]));
  const items = [...((root['failed-assert'] as Record<string, unknown>[]) ?? []), ...((root['successful-report'] as Record<string, unknown>[]) ?? [])];
  return items.map((a) => {
    const t = a.text as unknown;
    const text = typeof t === 'object' && t !== null ? String((t as Record<string, unknown>)['#text'] ?? '') : String(t ?? '');
    return {
      id: String(a['@id'] ?? ''),
      flag: String(a['@flag'] ?? ''),
      location: prefixed(String(a['@location'] ?? ''), prefixes),
      text: text.replace(/\s+/g, ' ').trim(),
    };
  });
}

/**
 * xsltproc always substitutes entities and reads external ones (file:// too; --nonet stops only the network), so a
 * document type declaration is refused here whatever the caller checked: the prolog before the root element may
 * hold only the XML declaration, comments, processing instructions and white space.
 */
async function refuseDoctype(file: string): Promise<void> {
  const f = await open(file, 'r');
  try {
    const head = Buffer.alloc(256 * 1024);
    const { bytesRead } = await f.read(head, 0, head.length, 0);
    let prolog = head
      .subarray(0, bytesRead)
      .toString('utf8')
      .replace(/^\uFEFF/, '');
    for (let before = ''; before !== prolog; ) {
      before = prolog;
      prolog = prolog
        .replace(/^\s+/, '')
        .replace(/^<\?[\s\S]*?\?>/, '')
        .replace(/^<!--[\s\S]*?-->/, '');
    }
    if (!/^<[^!?]/.test(prolog))
      throw new EngineError('xsltproc', 'the document has a DOCTYPE, or no root element in its first 256 KB: not checked (entities would be expanded)');
  } finally {
    await f.close();
  }
}

/** Validates `file` against `schema`: the findings of every pattern. */
export async function checkSchematron(file: string, schema: string, ctx: EngineContext): Promise<SchematronFinding[]> {
  await refuseDoctype(file);
  const xsl = join(ctx.cwd, 'schematron.xsl');
  await writeFile(xsl, await compileSchematron(schema));
  const r = await run('xsltproc', ['--nonet', '--maxdepth', '2000', xsl, file], { ...ctx, maxBuffer: 64 * 1024 * 1024 });
  return parseSvrl(r.stdout);
}
