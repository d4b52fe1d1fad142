/**
 * ZIP archives: writing one zip of stored files under unique entry names, and reading one back safely
 * (WinZip AES and legacy ZipCrypto passwords; zip-bomb limits on entries, total bytes and ratio, checked on the
 * central directory and again on the bytes really inflated; entry names never used as paths). Each job runs in
 * its own worker thread (thread.ts), so zip work never holds the event loop; its signal terminates the thread.
 */

export { extractZip, writeZip } from './thread.js';
export { CORRUPT_ZIP, type ExtractedFile, entryBaseName, RATIO_GRACE_BYTES, uniqueNames, type ZipLimits } from './zip.js';
