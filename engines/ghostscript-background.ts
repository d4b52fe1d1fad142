import type { EngineContext } from './context.js';
import { renderWithDevice } from './ghostscript-raster.js';

/**
 * The pages as JPEG pictures without their text (`-dFILTERTEXT`): what a slide keeps behind its editable text
 * boxes (images, vector drawings, shading), so no word is there twice. `pattern` holds %d, numbered from 1 in
 * the order of `pages` (1-based, strictly increasing); returns the files in that order.
 */
export async function textlessPages(input: string, pattern: string, pages: number[], resolution: number, ctx: EngineContext): Promise<string[]> {
  return renderWithDevice(
    input,
    pattern,
    { device: 'jpeg', pages, resolution, smoothText: true, smoothLines: true, smoothImages: true, jpegQuality: 85, leaveOut: ['TEXT'] },
    ctx,
  );
}

/**
 * The pages' line art alone (`-dFILTERTEXT -dFILTERIMAGE`): rules, shading, charts and diagrams drawn as paths, on
 * a transparent PNG the size of the page, to lie behind a document's own text and pictures. Same numbering as
 * textlessPages.
 */
export async function lineArtPages(input: string, pattern: string, pages: number[], resolution: number, ctx: EngineContext): Promise<string[]> {
  return renderWithDevice(
    input,
    pattern,
    { device: 'pngalpha', pages, resolution, smoothText: true, smoothLines: true, smoothImages: false, leaveOut: ['TEXT', 'IMAGE'] },
    ctx,
  );
}
