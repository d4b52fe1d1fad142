/**
 * Interactive forms: form data files (FDF, XFDF, AcroForm XML, XFA datasets) read into one shape of values by
 * fully qualified field name, and appearances for text fields whose values qpdf cannot draw in the field's own
 * font; dynamic XFA forms laid out (pdf.js in Chromium) for the page readers and converted to AcroForms.
 */
export * from './form-appearance.js';
export * from './form-data.js';
export * from './form-export.js';
export * from './open-form.js';
export * from './xfa-layout.js';
export * from './xfa-packets.js';
