import { inputError, openPdf } from '../document/index.js';
import { AppError, invalidInput } from '../errors.js';
import { operation, pdfInput } from '../requests/operation.js';
import { verifySignatures } from '../sign/index.js';

export default operation({
  path: '/pdf-signatures',
  tag: 'Signing, redaction, watermark',
  summary: 'Verify the digital signatures of a PDF',
  description:
    'One entry of `signatures` per signed signature field (an unsigned PDF answers an empty list; empty signature fields are named in `unsignedFields`). Each gives the signer certificate (`signer`: common name, subject, issuer, serial number, validity), `signingTime` (the CMS signing-time attribute, else the /M the signer claims), `timestamp` (an RFC 3161 token: its time, authority, and whether it stamps this signature and verifies), and `integrity`: `digestMatches` (the digest of the bytes /ByteRange covers equals the CMS message digest), `signatureVerifies` (the CMS signature verifies with the signer key), `intact` (both, and the range leaves out only the /Contents string), with the `problem` otherwise. ' +
    '`coversWholeDocument` says whether the signed revision is the whole file; `modifiedAfterSigning`, `revisionsAfter` and `changesAfter` describe the incremental updates after it: the objects they wrote, counted by kind (`form_fill`, `annotation`, `signature`, `validation_data`, `metadata`, `other`). A certification gives its DocMDP `permission` and whether the later changes keep to it. ' +
    '`chain`: whether the certificate chain (the certificates embedded in the signature as intermediates) verifies with openssl against the trust anchors of SIGNATURE_TRUST_DIR, now and at the signing time (the timestamp, else the claimed time); without that setting nothing is trusted. `revocation` counts the CRLs and OCSP responses embedded in the signature and says whether the document security store (/DSS) holds any; `ltv` is true when such data is embedded. Encrypted PDFs that need a password answer 401.',
  inputs: pdfInput('The PDF whose signatures to verify'),
  fields: {},
  output: 'json',
  engines: ['qpdf', 'openssl'],
  cost: { lane: 'light' },
  run: async ({ input, dir, signal, timeoutMs, limits, signatureTrustDir }) => {
    const ctx = { cwd: dir, signal, timeoutMs };
    // A damaged file is refused, not repaired: a repaired copy is not the bytes that were signed.
    const refuse = (err: unknown) => {
      const e = inputError(err);
      return e instanceof AppError && e.code === 'invalid_input'
        ? invalidInput('the PDF structure cannot be read (a repaired copy would not hold the bytes that were signed, so none is made)')
        : e;
    };
    await openPdf(input.path, ctx).catch((err) => {
      throw refuse(err); // 401 for a password-protected file
    });
    const result = await verifySignatures(input.path, { trustDir: signatureTrustDir }, ctx, {
      maxBytes: limits.maxStreamBytes,
      maxObjects: limits.maxObjects,
    }).catch((err) => {
      throw refuse(err);
    });
    return { json: { ...result } };
  },
});
