/**
 * Digital signatures: credentials (PKCS#12, or a certificate and key in PEM/DER, from the request's files) opened
 * by OpenSSL, a logo made a PNG for the appearance, and the signature written as an incremental update (field,
 * widget, appearance, /ByteRange and the CMS made by openssl cms), so earlier revisions and signatures stay intact;
 * and verification of the signatures a PDF holds (CMS read by a small DER reader, checked with Node crypto, chains
 * by openssl verify, changes after signing from the cross-references).
 */

export * from './sign.js';
export * from './sign-credentials.js';
export * from './sign-inputs.js';
export * from './verify.js';
