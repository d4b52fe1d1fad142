import { outOfRange } from '../../errors.js';
import { csvHtml, jsonHtml, plainTextHtml, xmlHtml } from './data.js';
import { escapeHtml } from './html.js';
import { type MarkdownImages, markdownHtml } from './markdown.js';
import { type Paper, type StructuredOptions, structuredPaper, styleCss } from './options.js';

export type StructuredFormat = 'markdown' | 'text' | 'csv' | 'json' | 'xml';
/** Upload extensions typeset from structured text. */
export const STRUCTURED_FORMATS: Record<string, StructuredFormat> = { md: 'markdown', markdown: 'markdown', txt: 'text', csv: 'csv', json: 'json', xml: 'xml' };

export interface Typeset {
  /** A self-contained page: it loads nothing and runs no script. */
  html: string;
  paper: Paper;
  /** The width between the margins in CSS pixels: printed at scale 1, CSS points are PDF points. */
  viewportWidth: number;
  tagged: boolean;
  warnings: string[];
}

const LANGUAGE = /^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/;

/** One structured-text document as HTML + print CSS for Chromium; `name` is the upload's (messages, default title). */
export async function typesetStructured(
  format: StructuredFormat,
  source: Buffer,
  name: string,
  o: StructuredOptions,
  images: MarkdownImages,
): Promise<Typeset> {
  if (o.language !== undefined && !LANGUAGE.test(o.language)) throw outOfRange(o.language, 'structured_text_options.language');
  const text = decode(source);
  let body: string;
  let wide = false;
  const warnings: string[] = [];
  if (format === 'markdown') {
    const r = await markdownHtml(text, o, images);
    body = r.html;
    warnings.push(...r.warnings);
  } else if (format === 'csv') {
    ({ html: body, wide } = csvHtml(text, name, o));
  } else if (format === 'json') body = jsonHtml(text, name, o);
  else if (format === 'xml') body = xmlHtml(text, name, o);
  else body = plainTextHtml(text, o);
  const paper = structuredPaper(o, wide);
  const title = o.title ?? name.replace(/\.[^.]*$/, '');
  const lang = o.language ? ` lang="${escapeHtml(o.language)}"` : '';
  const html = `<!DOCTYPE html><html${lang}><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><style>${styleCss(o, paper)}</style></head><body>${body}</body></html>`;
  const viewportWidth = Math.round(((paper.width - paper.margin.left - paper.margin.right) * 96) / 72);
  return { html, paper, viewportWidth, tagged: o.enable_tagging ?? false, warnings };
}

/** UTF-8 (BOM or not), UTF-16 with its BOM, else Windows-1252: what text editors write. */
function decode(b: Buffer): string {
  if (b[0] === 0xff && b[1] === 0xfe) return new TextDecoder('utf-16le').decode(b);
  if (b[0] === 0xfe && b[1] === 0xff) return new TextDecoder('utf-16be').decode(b);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(b);
  } catch {
    return new TextDecoder('windows-1252').decode(b);
  }
}
