/**
 * Interactive forms: form data files (FDF, XFDF, AcroForm XML, XFA datasets) read into one shape of values by
 * fully qualified field name, and appearances for text fields whose values qpdf cannot draw in the field's own
 * font; forms filled from such data (AcroForm fields and XFA datasets, written by qpdf); dynamic XFA forms laid out
 * (pdf.js in Chromium) for the page readers and converted to AcroForms.
 */
export * from './acroform.js';
export * from './field-text.js';
export * from './form-appearance.js';
export * from './form-data.js';
export * from './form-export.js';
export * from './import-data.js';
export * from './open-form.js';
export * from './xfa-layout.js';
export * from './xfa-packets.js';
