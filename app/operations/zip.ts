import { join } from 'node:path';
import { extractZip, uniqueNames, writeZip } from '../archive/index.js';
import { limitExceeded } from '../errors.js';
import { output, text } from '../requests/fields.js';
import { operation } from '../requests/operation.js';
import { extensionOf, sanitizeName } from '../store/names.js';

const TAG = 'Archives';

const zip = operation({
  path: '/zip',
  tag: TAG,
  summary: 'Put several files into one ZIP archive',
  description:
    'Inputs are uploads (file, repeated) and/or stored ids (id[]), of any type; uploads come first, then ids, each in the order sent. Entries are named after the stored files, made unique (a.pdf, a (2).pdf). At most ZIP_MAX_ENTRIES inputs.',
  inputs: { file: { idField: 'id', kind: 'any', multiple: true, description: 'Files to archive, in order' } },
  fields: { output: output() },
  output: 'file',
  produces: ['zip'],
  engines: [],
  // The archive is written in a worker thread of its own (app/archive); deflate in Node's zlib thread pool, and
  // documents are mostly compressed already.
  cost: { lane: 'light' },
  defaultName: () => 'pdfrest_zip',
  run: async ({ inputs, dir, signal, outputName, limits }) => {
    const files = inputs.file;
    if (files.length > limits.zipMaxEntries) throw limitExceeded(`The ${files.length} inputs`, 'ZIP_MAX_ENTRIES', limits.zipMaxEntries);
    const path = join(dir, 'archive.zip');
    await writeZip(
      files.map((f) => ({ path: f.path, name: sanitizeName(f.name) })),
      path,
      { signal },
    );
    return { files: [{ path, name: `${outputName}.zip` }] };
  },
});

const unzip = operation({
  path: '/unzip',
  tag: TAG,
  summary: 'Extract every file of a ZIP archive',
  description:
    "Each file entry becomes a resource, answered as files[] ({name, id, outputUrl}) and as outputId/outputUrl lists. Names are the entries' base names, sanitised and made unique (with output: output_1.ext, output_2.ext, ...); directories are skipped, nested archives come out as files. Password-protected archives (WinZip AES, legacy ZipCrypto) need password: none or a wrong one answers 401. Limits against zip bombs (ZIP_MAX_ENTRIES, ZIP_MAX_MB, ZIP_MAX_RATIO) answer 422 naming the setting.",
  inputs: { file: { idField: 'id', kind: 'any', description: 'The ZIP archive' } },
  fields: {
    password: text({ min: 1, max: 1024 }).optional().meta({ type: 'string', description: 'The password of an encrypted archive' }),
    output: output(),
  },
  output: 'files',
  produces: ['*'],
  listFiles: true,
  engines: [],
  // Inflating (up to ZIP_MAX_MB) and AES decryption are CPU work in one worker thread (app/archive): one core.
  cost: { lane: 'cpu', processes: 1 },
  run: async ({ fields, input, dir, signal, progress, limits }) => {
    const extracted = await extractZip(
      input.path,
      dir,
      { maxEntries: limits.zipMaxEntries, maxBytes: limits.zipMaxBytes, maxRatio: limits.zipMaxRatio },
      { password: fields.password, signal, progress },
    );
    const names = fields.output
      ? extracted.map((e, i) => {
          const ext = extensionOf(e.name);
          return `${fields.output}_${i + 1}${ext ? `.${ext}` : ''}`;
        })
      : uniqueNames(extracted.map((e) => sanitizeName(e.name)));
    return { files: extracted.map((e, i) => ({ path: e.path, name: names[i] })) };
  },
});

export default [zip, unzip];
