import { readFile, stat } from 'node:fs/promises';
import MarkdownIt from 'markdown-it';
import sanitizeHtml from 'sanitize-html';
import sharp from 'sharp';
import { AppError, limitExceeded, outOfRange } from '../../errors.js';
import { escapeHtml } from './html.js';
import type { StructuredOptions } from './options.js';

/**
 * Markdown (CommonMark with GFM tables and strikethrough, markdown-it) -> HTML. Images come only from the
 * request's images: `markdown.image_sources` maps a target to one of them, else a target matches an image by
 * its file name; a target that matches none is shown as its alternate text (nothing is fetched, no URL nor
 * path is ever read). Raw HTML is shown escaped unless `include_unrendered_html`, in which case it is rendered
 * through an allowlist (no scripts, styles, frames, forms or remote images).
 */

/** An image the request supplies: an upload (`image_files`) or a stored resource (`image_ids`). */
export interface ImageInput {
  name: string;
  path: string;
}

export interface MarkdownImages {
  uploads: ImageInput[];
  ids: ImageInput[];
  maxPixels: number;
  /** Bytes the page may hold (HTML_MAX_MB): the images are embedded in it. */
  maxBytes: number;
}

const FORMATS: Record<string, string> = { jpeg: 'image/jpeg', png: 'image/png', gif: 'image/gif' };
/** Placeholder scheme of resolved images until the sanitiser has run: the only src it lets through. */
const SCHEME = 'quire-image';

export async function markdownHtml(source: string, o: StructuredOptions, images: MarkdownImages): Promise<{ html: string; warnings: string[] }> {
  const md = new MarkdownIt({ html: o.include_unrendered_html === true, linkify: false });
  const m = o.markdown ?? {};
  const policy = m.missing_image_alt_text ?? 'warn';
  // Clients write targets as the Markdown does; markdown-it hands them over normalised (percent-encoded).
  const byTarget = <T>(map: Record<string, T> | undefined) =>
    new Map(
      Object.entries(map ?? {}).flatMap(
        ([k, v]) =>
          [
            [k, v],
            [md.normalizeLink(k), v],
          ] as [string, T][],
      ),
    );
  const altFor = byTarget(m.image_alt_text);
  const sourceFor = byTarget(m.image_sources);
  const all = [...images.uploads, ...images.ids];
  const used = new Map<ImageInput, number>();
  const missingAlt: string[] = [];
  const notFound: string[] = [];

  const resolve = (target: string): ImageInput | null => {
    const s = sourceFor.get(target);
    if (s) {
      if (s.image_id_index !== undefined) {
        if (!images.ids[s.image_id_index])
          throw outOfRange(
            s.image_id_index,
            `structured_text_options.markdown.image_sources["${target.slice(0, 100)}"].image_id_index (image_ids has ${images.ids.length})`,
          );
        return images.ids[s.image_id_index];
      }
      if (s.upload_index !== undefined) {
        if (!images.uploads[s.upload_index])
          throw outOfRange(
            s.upload_index,
            `structured_text_options.markdown.image_sources["${target.slice(0, 100)}"].upload_index (image_files has ${images.uploads.length})`,
          );
        return images.uploads[s.upload_index];
      }
    }
    let name = target.split(/[?#]/)[0].split('/').pop() ?? '';
    try {
      name = decodeURIComponent(name);
    } catch {
      /* kept as written */
    }
    return all.find((i) => i.name === name) ?? all.find((i) => i.name.toLowerCase() === name.toLowerCase()) ?? null;
  };

  md.renderer.rules.image = (tokens, idx, options, env, self) => {
    const token = tokens[idx];
    const target = String(token.attrGet('src') ?? '');
    const alt = (altFor.get(target) ?? self.renderInlineAsText(token.children ?? [], options, env)).trim();
    const image = resolve(target);
    if (!alt) {
      if (policy === 'fail')
        throw outOfRange(
          'fail',
          `structured_text_options.markdown.missing_image_alt_text: the image ${target.slice(0, 200)} has no alternate text (give it in the Markdown or in markdown.image_alt_text)`,
        );
      if (policy === 'warn') missingAlt.push(target);
    }
    if (!image) {
      notFound.push(target);
      return `<span class="missing-image">${escapeHtml(alt || target)}</span>`;
    }
    if (!used.has(image)) used.set(image, used.size);
    // An image without alternate text is decoration when the policy says artifact: tagged PDFs leave it out of the structure.
    const a = alt ? `alt="${escapeHtml(alt)}"` : policy === 'artifact' ? 'alt="" role="presentation"' : '';
    const title = token.attrGet('title');
    return `<img src="${SCHEME}:${used.get(image)}" ${a}${title ? ` title="${escapeHtml(String(title))}"` : ''}>`;
  };

  md.renderer.rules.table_open = () => '<table class="md">\n';
  let html = md.render(source);
  if (o.include_unrendered_html) html = sanitize(html);
  const bytes = (await Promise.all([...used.keys()].map((i) => stat(i.path)))).reduce((n, st) => n + st.size, 0);
  if (bytes > images.maxBytes) throw limitExceeded(`The images of the Markdown document (${bytes} bytes)`, 'HTML_MAX_MB', images.maxBytes / 1024 / 1024);
  const uris = await Promise.all([...used.keys()].map((i) => dataUri(i, images.maxPixels)));
  html = html.replace(new RegExp(`src="${SCHEME}:(\\d+)"`, 'g'), (_, n: string) => `src="${uris[Number(n)] ?? ''}"`);

  const warnings: string[] = [];
  const list = (l: string[]) => [...new Set(l)].map((t) => t.slice(0, 200) || '(empty)').join(', ');
  if (notFound.length) warnings.push(`Images not among the request's images, shown as their alternate text: ${list(notFound)}`);
  if (missingAlt.length) warnings.push(`Images without alternate text: ${list(missingAlt)}`);
  return { html, warnings };
}

/** Raw HTML through an allowlist: document structure and inline formatting only. */
function sanitize(html: string): string {
  const cell = ['colspan', 'rowspan', 'style'];
  const align = { 'text-align': [/^(left|right|center)$/] };
  return sanitizeHtml(html, {
    allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img', 'del', 'ins', 'details', 'summary'],
    allowedAttributes: {
      a: ['href', 'name', 'title'],
      img: ['src', 'alt', 'role', 'title'],
      th: cell,
      td: cell,
      ol: ['start'],
      code: ['class'],
      table: ['class'],
      '*': ['lang', 'dir'],
    },
    allowedClasses: { table: ['md'], code: [/^language-/] },
    allowedStyles: { th: align, td: align },
    allowedSchemes: ['http', 'https', 'mailto'],
    allowedSchemesByTag: { img: [SCHEME] },
    allowProtocolRelative: false,
    // A raw <img> is not one of the request's images: dropped whole, not drawn as a broken-image icon.
    exclusiveFilter: (frame) => frame.tag === 'img' && !String(frame.attribs.src ?? '').startsWith(`${SCHEME}:`),
  });
}

/** The image as a data: URI (the page loads nothing); TIFF, which Chromium does not draw, becomes PNG. */
async function dataUri(image: ImageInput, maxPixels: number): Promise<string> {
  let meta: Awaited<ReturnType<ReturnType<typeof sharp>['metadata']>>;
  try {
    meta = await sharp(image.path).metadata();
  } catch {
    throw new AppError('invalid_input', `${image.name.slice(0, 200)}: Markdown images must be GIF, JPEG, PNG, or TIFF files.`);
  }
  if (!meta.format || !(meta.format in FORMATS || meta.format === 'tiff'))
    throw new AppError('invalid_input', `${image.name.slice(0, 200)}: Markdown images must be GIF, JPEG, PNG, or TIFF files.`);
  const pixels = (meta.width ?? 0) * (meta.pageHeight ?? meta.height ?? 0);
  if (pixels > maxPixels) throw limitExceeded(`The image ${image.name.slice(0, 200)} (${meta.width}x${meta.height} pixels)`, 'MAX_IMAGE_PIXELS', maxPixels);
  if (meta.format === 'tiff') {
    const png = await sharp(image.path, { limitInputPixels: maxPixels }).png().toBuffer();
    return `data:image/png;base64,${png.toString('base64')}`;
  }
  return `data:${FORMATS[meta.format]};base64,${(await readFile(image.path)).toString('base64')}`;
}
