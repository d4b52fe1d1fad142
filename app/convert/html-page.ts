import { type PageSizeName, pageSize } from '../document/index.js';

/** The print settings of HTML conversions: paper, margins, layout width. */

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

/** Paper and margins in points, for the printer. */
export function paperOf(p: PageSetup): { width: number; height: number; margin: number } {
  const [width, height] = pageSize(p.size, p.orientation);
  return { width, height, margin: p.marginPt };
}

/**
 * The print scale that keeps the `VIEWPORTS[layout]` CSS-pixel layout across the printable width: Chromium
 * lays a printed page out at printable width / scale, so width media queries see the viewport's width,
 * a desktop layout prints small and a mobile one large. Chromium accepts 0.1 to 2.
 */
export function printScale(p: PageSetup): number {
  return Math.min(2, Math.max(0.1, printableWidthPx(p) / VIEWPORTS[p.layout]));
}

/** The width between the margins in CSS pixels (96 per inch). */
export const printableWidthPx = (p: PageSetup) => Math.round(((paperOf(p).width - 2 * p.marginPt) * 96) / 72);

/** @page size and margins, last in the cascade, so a page's own @page rules do not move the paper or margins. */
export function pageCss(p: PageSetup): string {
  const { width, height } = paperOf(p);
  const pt = (n: number) => `${Number(n.toFixed(3))}pt`;
  return `@page { size: ${pt(width)} ${pt(height)}; margin: ${pt(p.marginPt)}; }`;
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
