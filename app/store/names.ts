import mime from 'mime';

/** Resource ids: random UUID v4, the only names bytes are stored under. */
export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
export const isResourceId = (id: string) => UUID_V4.test(id);

/**
 * A user-supplied name made safe to show and to send back in Content-Disposition: no path separators,
 * no control characters, no leading dots, bounded length. It is never used as a path (bytes live under the id).
 */
export function sanitizeName(name: string, fallback = 'file'): string {
  let s = name.normalize('NFC');
  s = s.replace(/^.*[\\/]/, ''); // keep the last segment of a client path like C:\\docs\\a.pdf
  // eslint-disable-next-line no-control-regex
  s = s.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\\/:*?"<>|]/g, '_');
  s = s
    .replace(/^[.\s]+/, '')
    .replace(/[.\s]+$/, '')
    .trim();
  if ([...s].length > 200) s = [...s].slice(0, 200).join('');
  return s || fallback;
}

export const extensionOf = (name: string) => {
  const m = /\.([A-Za-z0-9]{1,8})$/.exec(name);
  return m ? m[1].toLowerCase() : '';
};

export const stripExtension = (name: string) => name.replace(/\.[A-Za-z0-9]{1,8}$/, '');

const OVERRIDES: Record<string, string> = {
  pem: 'application/x-pem-file',
  der: 'application/x-x509-ca-cert',
  xfd: 'application/vnd.adobe.xfd+xml',
  fdf: 'application/vnd.fdf',
  xfdf: 'application/vnd.adobe.xfdf',
};

/** The media type for a name, by extension (every format Quire reads or writes is known to `mime`). */
export function typeOf(name: string): string {
  const ext = extensionOf(name);
  return OVERRIDES[ext] ?? mime.getType(ext) ?? 'application/octet-stream';
}

/** Extension for a media type, used when a raw upload names no extension. */
export const extensionFor = (type: string) => mime.getExtension(type) ?? '';
