import { pageSize, type PageSizeName } from './page-sizes.js';

/** The print settings of HTML conversions, as CSS the page carries into Chromium's print. */

export const VIEWPORTS = { desktop: 1280, tablet: 768, mobile: 375 } as const;
export type WebLayout = keyof typeof VIEWPORTS;

/** `1in`, `12.5mm`, `0 mm` -> points; null when the text is not a number followed by in or mm. */
export function parseMargin(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*(in|mm)\s*$/i.exec(text);
  if (!m) return null;
  const n = Number(m[1]);
  return m[2].toLowerCase() === 'in' ? n * 72 : (n * 72) / 25.4;
}

export interface PageSetup {
  size: PageSizeName;
  orientation: 'portrait' | 'landscape';
  marginPt: number;
  layout: WebLayout;
}

/**
 * @page size and margins, plus the layout width: the document is laid out `VIEWPORTS[layout]` CSS pixels
 * wide and zoomed to the printable width, so a desktop layout prints small and a mobile one large.
 * (Print media queries still see the paper: Chromium's command line cannot emulate screen media.)
 */
export function pageCss(p: PageSetup): string {
  const [w, h] = pageSize(p.size, p.orientation);
  const printablePx = ((w - 2 * p.marginPt) * 96) / 72;
  const vw = VIEWPORTS[p.layout];
  const zoom = Math.max(0.05, printablePx / vw);
  const pt = (n: number) => `${Number(n.toFixed(3))}pt`;
  return [
    `@page { size: ${pt(w)} ${pt(h)}; margin: ${pt(p.marginPt)}; }`,
    `html { width: ${vw}px !important; zoom: ${Number(zoom.toFixed(4))}; }`,
  ].join('\n');
}

/** Puts the page CSS last (so it wins the cascade) and, for fetched pages, a <base> so relative links resolve to the site. */
export function injectPageCss(html: string, css: string, baseHref?: string): string {
  let out = html;
  if (baseHref) {
    const base = `<base href="${baseHref.replace(/"/g, '&quot;')}">`;
    out = /<head[^>]*>/i.test(out) ? out.replace(/<head[^>]*>/i, (m) => `${m}${base}`) : `${base}${out}`;
  }
  const style = `<style data-quire>${css}</style>`;
  return /<\/body>/i.test(out) ? out.replace(/<\/body>(?![\s\S]*<\/body>)/i, `${style}</body>`) : `${out}${style}`;
}
