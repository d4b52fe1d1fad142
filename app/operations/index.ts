import type { Operation } from '../http/operation.js';
import blankPdf from './blank-pdf.js';
import pdfInfo from './pdf-info.js';
import toPdf from './pdf.js';
import extractedImages from './extracted-images.js';
import extractedText from './extracted-text.js';
import markdown from './markdown.js';
import pdfWithOcrText from './pdf-with-ocr-text.js';
import linearizedPdf from './linearized-pdf.js';
import mergedPdf from './merged-pdf.js';
import pdfWithAddedAttachment from './pdf-with-added-attachment.js';
import pdfWithPageBoxesSet from './pdf-with-page-boxes-set.js';
import security from './security.js';
import splitPdf from './split-pdf.js';
import imageConverters from './images.js';
import rasterizedPdf from './rasterized-pdf.js';
import compressedPdf from './compressed-pdf.js';
import pdfa from './pdfa.js';
import pdfx from './pdfx.js';
import pdfWithConvertedColors from './pdf-with-converted-colors.js';
import redactionPreview from './pdf-with-redacted-text-preview.js';
import redactionApplied from './pdf-with-redacted-text-applied.js';
import importedFormData from './pdf-with-imported-form-data.js';
import watermarkedPdf from './watermarked-pdf.js';
import pdfWithAddedText from './pdf-with-added-text.js';
import pdfWithAddedImage from './pdf-with-added-image.js';

/** Every endpoint, in the order the docs list them. Adding an endpoint is adding its module here. */
export const operations = [pdfInfo, extractedImages, extractedText, markdown, pdfWithOcrText, blankPdf, linearizedPdf, ...security, mergedPdf, splitPdf, pdfWithAddedAttachment, pdfWithPageBoxesSet, toPdf, ...imageConverters, pdfa, pdfx, compressedPdf, rasterizedPdf, pdfWithConvertedColors, redactionPreview, redactionApplied, importedFormData, watermarkedPdf, pdfWithAddedText, pdfWithAddedImage] as unknown as Operation[];
