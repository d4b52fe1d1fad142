/**
 * Digital signatures: credentials (PKCS#12, or a certificate and key in PEM/DER) opened by OpenSSL, and the
 * signature written as an incremental update (field, widget, appearance, /ByteRange and the CMS made by openssl
 * cms), so earlier revisions and signatures stay intact.
 */

export * from './sign.js';
export * from './sign-credentials.js';
