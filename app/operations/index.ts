import type { Operation } from '../http/operation.js';
import blankPdf from './blank-pdf.js';
import pdfInfo from './pdf-info.js';

/** Every endpoint, in the order the docs list them. Adding an endpoint is adding its module here. */
export const operations = [pdfInfo, blankPdf] as unknown as Operation[];
