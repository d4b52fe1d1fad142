import { isRef, type PdfObjects } from './pdf-objects.js';

type Dict = Record<string, unknown>;

/**
 * Where a document's destinations lead: its named destinations (the /Dests dictionary of PDF 1.1 and the
 * /Names /Dests tree, keyed as qpdf JSON writes names and strings) and the explicit destination array that an
 * outline entry, link, action or name comes down to.
 */
export class Destinations {
  readonly named = new Map<string, unknown>();
  /** The nodes of the /Names /Dests tree, for callers that rewrite them. */
  readonly treeNodes: { ref: unknown; node: Dict }[] = [];

  constructor(private readonly objects: PdfObjects) {
    const catalog = objects.catalog;
    for (const [k, v] of Object.entries(objects.dict(catalog['/Dests']) ?? {})) this.named.set(k, v);
    const walk = (ref: unknown, depth: number) => {
      const node = objects.dict(ref);
      if (!node || depth > 32) return;
      this.treeNodes.push({ ref, node });
      const pairs = objects.array(node['/Names']);
      for (let i = 0; i + 1 < pairs.length; i += 2) this.named.set(String(objects.resolve(pairs[i])), pairs[i + 1]);
      for (const kid of objects.array(node['/Kids'])) walk(kid, depth + 1);
    };
    const names = objects.dict(catalog['/Names']);
    if (names?.['/Dests']) walk(names['/Dests'], 0);
  }

  /** The explicit destination (`[page /XYZ left top zoom]` and the like) that `v` leads to, if any. */
  explicit(v: unknown, depth = 0): unknown[] | null {
    if (depth > 8) return null;
    const r = this.objects.resolve(v);
    if (Array.isArray(r)) return r;
    if (typeof r === 'string') return this.named.has(r) ? this.explicit(this.named.get(r), depth + 1) : null;
    const d = r && typeof r === 'object' ? (r as Dict) : null;
    if (!d) return null;
    if ('/D' in d) return this.explicit(d['/D'], depth + 1);
    if ('/Dest' in d) return this.explicit(d['/Dest'], depth + 1);
    if (d['/S'] === '/GoTo' || '/A' in d) return this.explicit(d['/A'], depth + 1);
    return null;
  }

  /** The page object a destination, action or named destination leads to, if any. */
  page(v: unknown): string | null {
    const d = this.explicit(v);
    return d && isRef(d[0]) ? d[0] : null;
  }
}
