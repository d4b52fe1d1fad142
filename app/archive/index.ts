/**
 * ZIP archives: writing one zip of stored files under unique entry names, and reading one back safely
 * (WinZip AES and legacy ZipCrypto passwords; zip-bomb limits on entries, total bytes and ratio, checked on the
 * central directory and again on the bytes really inflated; entry names never used as paths).
 */
export * from './zip.js';
