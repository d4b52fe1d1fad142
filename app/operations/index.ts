import type { Operation } from '../requests/operation.js';
import blankPdf from './blank-pdf.js';
import comparedPdf from './compared-pdf.js';
import compressedPdf from './compressed-pdf.js';
import deskewedPdf from './deskewed-pdf.js';
import excel from './excel.js';
import exportedFormData from './exported-form-data.js';
import extractedImages from './extracted-images.js';
import extractedText from './extracted-text.js';
import flattenOperations from './flatten.js';
import imageConverters from './images.js';
import linearizedPdf from './linearized-pdf.js';
import markdown from './markdown.js';
import mergedPdf from './merged-pdf.js';
import nUpPdf from './n-up-pdf.js';
import toPdf from './pdf.js';
import pdfInfo from './pdf-info.js';
import pdfSignatures from './pdf-signatures.js';
import pdfWithAcroforms from './pdf-with-acroforms.js';
import pdfWithAddedAttachment from './pdf-with-added-attachment.js';
import pdfWithAddedImage from './pdf-with-added-image.js';
import pdfWithAddedShapes from './pdf-with-added-shapes.js';
import pdfWithAddedTables from './pdf-with-added-tables.js';
import pdfWithAddedText from './pdf-with-added-text.js';
import pdfWithConvertedColors from './pdf-with-converted-colors.js';
import importedFormData from './pdf-with-imported-form-data.js';
import pdfWithOcrText from './pdf-with-ocr-text.js';
import pdfWithPageBoxesSet from './pdf-with-page-boxes-set.js';
import pdfWithPageNumbers from './pdf-with-page-numbers.js';
import redactionApplied from './pdf-with-redacted-text-applied.js';
import redactionPreview from './pdf-with-redacted-text-preview.js';
import pdfWithoutBlankPages from './pdf-without-blank-pages.js';
import pdfa from './pdfa.js';
import pdfx from './pdfx.js';
import postscript from './postscript.js';
import powerpoint from './powerpoint.js';
import rasterizedPdf from './rasterized-pdf.js';
import reorderedPdf from './reordered-pdf.js';
import resizedPdf from './resized-pdf.js';
import rotatedPdf from './rotated-pdf.js';
import sanitizedPdf from './sanitized-pdf.js';
import security from './security.js';
import separatedPdf from './separated-pdf.js';
import signedPdf from './signed-pdf.js';
import splitPdf from './split-pdf.js';
import summarizedPdfText from './summarized-pdf-text.js';
import tdmReservedPdf from './tdm-reserved-pdf.js';
import translatedPdfText from './translated-pdf-text.js';
import validatedZugferd from './validated-zugferd.js';
import watermarkedPdf from './watermarked-pdf.js';
import word from './word.js';
import zipOperations from './zip.js';
import zugferdPdf from './zugferd-pdf.js';

/** Every endpoint, in the order the docs list them. Adding an endpoint is adding its module here. */
export const operations = [
  pdfInfo,
  extractedImages,
  extractedText,
  comparedPdf,
  markdown,
  pdfWithOcrText,
  blankPdf,
  linearizedPdf,
  ...security,
  sanitizedPdf,
  mergedPdf,
  splitPdf,
  rotatedPdf,
  reorderedPdf,
  nUpPdf,
  resizedPdf,
  pdfWithoutBlankPages,
  separatedPdf,
  deskewedPdf,
  pdfWithAddedAttachment,
  pdfWithPageBoxesSet,
  toPdf,
  word,
  excel,
  powerpoint,
  ...imageConverters,
  pdfa,
  pdfx,
  compressedPdf,
  rasterizedPdf,
  pdfWithConvertedColors,
  redactionPreview,
  redactionApplied,
  importedFormData,
  exportedFormData,
  pdfWithAcroforms,
  signedPdf,
  pdfSignatures,
  summarizedPdfText,
  translatedPdfText,
  watermarkedPdf,
  pdfWithAddedText,
  pdfWithPageNumbers,
  pdfWithAddedImage,
  pdfWithAddedShapes,
  pdfWithAddedTables,
  tdmReservedPdf,
  postscript,
  zugferdPdf,
  validatedZugferd,
  ...flattenOperations,
  ...zipOperations,
] as unknown as Operation[];
