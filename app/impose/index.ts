/**
 * Page arrangement: turning pages (fixed quarter turns, or the turn Tesseract's orientation detection reads off
 * each page), putting them in a new order without leaving outlines, links or named destinations pointing at
 * dropped pages, merging the pages of several files and splitting one into several, n-up grids and saddle-stitch
 * booklets, fitting pages to a paper size, setting page boxes, and cropping pages to what they draw. Pages are
 * placed as vector content (form XObjects); nothing is rasterised here.
 */

export * from './boxes.js';
export * from './crop.js';
export * from './grid.js';
export * from './order.js';
export * from './orientation.js';
export * from './place.js';
export * from './prune.js';
export * from './rotate.js';
