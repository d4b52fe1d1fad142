import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { staticXfaForm } from './fixtures.js';
import { corpus, type FormValue, startApp, type TestApp } from './helpers.js';
import { invoiceXml } from './zugferd-fixtures.js';

/**
 * GET /resource/{id}?format=info: the record's `type` is the real type of every output of every endpoint that
 * produces files, and of uploads. The real type comes from `file --mime-type` on the downloaded bytes (not from our
 * code), mapped by a small table onto the types a record may carry; where the endpoint fixes the format, the exact
 * type is checked too (the SDK compares it).
 */

let t: TestApp;
let llm: http.Server;
const work = mkdtempSync(join(tmpdir(), 'quire-mime-'));
const passphrase = join(work, 'pass.txt');
writeFileSync(passphrase, 'exportsecret');
const zipFile = join(work, 'bundle.zip');
const xfaFile = join(work, 'static-xfa.pdf');
const invoiceFile = join(work, 'invoice.xml');
writeFileSync(invoiceFile, invoiceXml());

test.before(async () => {
  // A stand-in OpenAI-compatible model: the AI endpoints' file outputs are typed like the others.
  llm = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          id: 'x',
          object: 'chat.completion',
          model: 'm',
          choices: [{ index: 0, message: { role: 'assistant', content: 'SOURCE: en\n\n# Hallo\n\nEin Text.' }, finish_reason: 'stop' }],
        }),
      );
    });
  });
  await new Promise<void>((r) => llm.listen(0, '127.0.0.1', r));
  const port = (llm.address() as AddressInfo).port;
  t = await startApp({ LLM_URL: `http://127.0.0.1:${port}/v1`, LLM_MODEL: 'test-model' });
  staticXfaForm(corpus('forms/simple-form-2-fields.pdf'), xfaFile, '<form1><Field1>A</Field1><Field2>B</Field2></form1>');
  execFileSync('zip', ['-j', '-q', zipFile, corpus('pdf/text-minimal-pdflatex.pdf'), corpus('images/hopper.png'), corpus('text/cups-testfile.txt')]);
});
test.after(async () => {
  await t.close();
  await new Promise((r) => llm.close(r));
  rmSync(work, { recursive: true, force: true });
});

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const PPTX = 'application/vnd.openxmlformats-officedocument.presentationml.presentation';

/** What `file --mime-type` says -> the record types that describe such bytes. */
const ACCEPT: Record<string, string[]> = {
  'application/pdf': ['application/pdf'],
  'application/postscript': ['application/postscript'],
  'application/zip': ['application/zip'],
  [DOCX]: [DOCX],
  [XLSX]: [XLSX],
  [PPTX]: [PPTX],
  'image/png': ['image/png'],
  'image/jpeg': ['image/jpeg'],
  'image/gif': ['image/gif'],
  'image/tiff': ['image/tiff'],
  'image/bmp': ['image/bmp'],
  'image/x-ms-bmp': ['image/bmp'],
  'image/jp2': ['image/jp2'],
  'image/jpx': ['image/jpx', 'image/jp2'],
  'image/webp': ['image/webp'],
  'application/json': ['application/json'],
  // Markdown, plain text, CSV and FDF read as text to libmagic.
  'text/plain': ['text/plain', 'text/markdown', 'text/csv', 'application/json', 'application/vnd.fdf'],
  'text/csv': ['text/csv', 'text/plain'],
  'text/xml': ['application/xml', 'text/xml', 'application/vnd.adobe.xfdf', 'application/vnd.adobe.xdp+xml', 'application/vnd.adobe.xfd+xml'],
  'application/xml': ['application/xml', 'text/xml', 'application/vnd.adobe.xfdf', 'application/vnd.adobe.xdp+xml', 'application/vnd.adobe.xfd+xml'],
  'application/vnd.fdf': ['application/vnd.fdf'],
  'application/octet-stream': [],
};

interface Case {
  label?: string;
  /** Multipart fields besides `file` (default: a one-page PDF as `file`). */
  fields?: Record<string, FormValue | FormValue[]>;
  file?: string | null;
  /** The exact type every output must carry, where the endpoint fixes the format. */
  type?: string;
  /** A request whose output is this one's input (sent as id): [path, fields]. */
  after?: [string, Record<string, FormValue>];
}

const pdf = (rel: string) => corpus(rel);
const image = { file: corpus('images/hopper.jpg') };
const box = { bottom_left: { x: 10, y: 10 }, top_right: { x: 100, y: 50 }, page: 1 };
const PDF = 'application/pdf';
const ANY = undefined;

/** Every endpoint of the registry: its file-producing requests, or null for JSON-only answers. */
const ENDPOINTS: Record<string, Case[] | null> = {
  '/pdf-info': null,
  '/extracted-images': [
    { label: 'jpeg', file: pdf('pdf/image-jpeg-dct.pdf') },
    { label: 'cmyk', file: pdf('pdf/image-cmyk.pdf') },
    { label: 'ccitt', file: pdf('pdf/image-ccitt-fax.pdf') },
    { label: 'jbig2', file: pdf('pdf/image-jbig2-scan.pdf') },
    { label: 'jpx', file: pdf('pdf/image-jpeg2000-jpx.pdf') },
    { label: 'flate gray', file: pdf('pdf/image-grayscale-flate.pdf') },
  ],
  '/extracted-text': [
    { label: 'txt', fields: { output_type: 'file' } },
    { label: 'json', fields: { output_type: 'file', word_coordinates: 'on' }, type: 'application/json' },
  ],
  '/markdown': [{ fields: { output_type: 'file' }, type: 'text/markdown' }],
  '/pdf-with-ocr-text': [{ type: PDF }],
  '/blank-pdf': [{ file: null, fields: { page_size: 'letter', page_count: '1', page_orientation: 'portrait' }, type: PDF }],
  '/linearized-pdf': [{ type: PDF }],
  '/encrypted-pdf': [{ fields: { new_open_password: 'secret' }, type: PDF }],
  '/decrypted-pdf': [{ file: pdf('encrypted/rc4-128-user-and-owner-test.pdf'), fields: { current_open_password: 'test' }, type: PDF }],
  '/restricted-pdf': [{ fields: { new_permissions_password: 'secret', restrictions: '["print_low"]' }, type: PDF }],
  '/unrestricted-pdf': [{ file: pdf('encrypted/rc4-128-owner-master-no-user-password.pdf'), fields: { current_permissions_password: 'master' }, type: PDF }],
  '/merged-pdf': [
    {
      fields: { file: [{ file: pdf('pdf/text-minimal-pdflatex.pdf') }, { file: pdf('pdf/rotation-2-pages.pdf') }], pages: ['1', '1'], type: ['file', 'file'] },
      file: null,
      type: PDF,
    },
  ],
  '/split-pdf': [{ file: pdf('pdf/text-4-pages-pdflatex.pdf'), type: PDF }],
  '/pdf-with-added-attachment': [{ fields: { file_to_attach: image }, type: PDF }],
  '/pdf-with-page-boxes-set': [
    { fields: { boxes: '{"boxes":[{"box":"crop","pages":[{"range":"1","left":10,"top":10,"bottom":10,"right":10}]}]}' }, type: PDF },
  ],
  '/pdf': [
    ...[
      'office/poi-SampleDoc.docx',
      'office/poi-SampleDoc.doc',
      'office/poi-SampleSS.xlsx',
      'office/poi-SampleSS.xls',
      'office/poi-SampleShow.pptx',
      'office/poi-with_textbox.ppt',
      'office/libreoffice-writer-trivial.odt',
      'office/gotenberg-sheet.csv',
    ].map((f) => ({ label: f, file: corpus(f), type: PDF })),
    ...['images/hopper.jpg', 'images/hopper.png', 'images/hopper.tif', 'images/hopper.bmp', 'images/hopper.gif', 'images/hopper.webp'].map((f) => ({
      label: f,
      file: corpus(f),
      type: PDF,
    })),
    ...[
      'web/gotenberg-footer.html',
      'email/nested-multipart.eml',
      'email/poi-outlook-two-attachments.msg',
      'postscript/cups-onepage-letter.ps',
      'postscript/pillow-sample-cmyk.eps',
    ].map((f) => ({ label: f, file: corpus(f), type: PDF })),
  ],
  '/word': [{ type: DOCX }],
  '/excel': [{ type: XLSX }],
  '/powerpoint': [{ type: PPTX }],
  '/bmp': [{ fields: { resolution: '20' }, type: 'image/bmp' }],
  '/jpg': [{ fields: { resolution: '20' }, type: 'image/jpeg' }],
  '/png': [{ fields: { resolution: '20' }, type: 'image/png' }],
  '/gif': [{ fields: { resolution: '20' }, type: 'image/gif' }],
  '/tif': [{ fields: { resolution: '20' }, type: 'image/tiff' }],
  '/pdfa': [{ fields: { output_type: 'PDF/A-2b' }, type: PDF }],
  '/pdfx': [{ fields: { output_type: 'PDF/X-4' }, type: PDF }],
  '/compressed-pdf': [{ fields: { compression_level: 'medium' }, type: PDF }],
  '/rasterized-pdf': [{ type: PDF }],
  '/pdf-with-converted-colors': [{ fields: { color_profile: 'srgb' }, type: PDF }],
  '/pdf-with-redacted-text-preview': [{ fields: { redactions: '[{"type":"literal","value":"a"}]' }, type: PDF }],
  '/pdf-with-redacted-text-applied': [
    { file: null, after: ['/pdf-with-redacted-text-preview', { redactions: '[{"type":"literal","value":"Lorem"}]' }], type: PDF },
  ],
  '/pdf-with-imported-form-data': [
    { file: pdf('forms/simple-form-2-fields.pdf'), fields: { data_file: { file: corpus('forms/simple-form-2-fields.fdf') } }, type: PDF },
  ],
  '/signed-pdf': [
    {
      fields: {
        pfx_credential_file: { file: corpus('signing/pyhanko-selfsigned-password-exportsecret.pfx') },
        pfx_passphrase_file: { file: passphrase },
        signature_configuration: JSON.stringify({ type: 'new', location: box }),
      },
      type: PDF,
    },
  ],
  '/summarized-pdf-text': [{ fields: { output_type: 'file' }, type: 'text/markdown' }],
  '/translated-pdf-text': [{ fields: { output_language: 'de', output_type: 'file' }, type: ANY }],
  '/watermarked-pdf': [{ fields: { watermark_text: 'DRAFT' }, type: PDF }],
  '/pdf-with-added-text': [
    { fields: { text_objects: '[{"text":"Hi","page":"1","x":"20","y":"20","font":"Helvetica","text_size":"12","text_color_rgb":"0,0,0"}]' }, type: PDF },
  ],
  '/pdf-with-added-image': [{ fields: { image_file: image, x: '10', y: '10', page: '1' }, type: PDF }],
  '/tdm-reserved-pdf': [{ fields: { policy: 'https://example.com/tdm-policy' }, type: PDF }],
  '/sanitized-pdf': [{ file: pdf('javascript/js-buttons.pdf'), type: PDF }],
  '/pdf-signatures': null,
  '/pdf-with-added-shapes': [{ fields: { shape_objects: '[{"type":"line","page":"1","x1":"10","y1":"10","x2":"100","y2":"100"}]' }, type: PDF }],
  '/pdf-with-added-tables': [
    {
      fields: {
        table_objects: '[{"page":1,"x":50,"y":700,"width":200,"columns":[{"width":100},{"width":100}],"rows":[{"cells":[{"text":"a"},{"text":"b"}]}]}]',
      },
      type: PDF,
    },
  ],
  '/zugferd-pdf': [{ file: invoiceFile, type: PDF }],
  '/validated-zugferd': null,
  '/postscript': [
    { label: 'level 3', type: 'application/postscript' },
    { label: 'level 2', fields: { ps_level: '2' }, type: 'application/postscript' },
  ],
  // Endpoints of the parity work (issue 14) landing beside this one.
  '/zip': [{ file: null, fields: { file: [{ file: pdf('pdf/text-minimal-pdflatex.pdf') }, { file: corpus('images/hopper.png') }] }, type: 'application/zip' }],
  '/unzip': [{ file: zipFile }],
  '/flattened-forms-pdf': [{ file: pdf('forms/acroform-basic-fields-all-types.pdf'), type: PDF }],
  '/flattened-annotations-pdf': [{ file: pdf('pdf/annotations-text-highlight-ink.pdf'), type: PDF }],
  '/flattened-layers-pdf': [{ type: PDF }],
  '/flattened-transparencies-pdf': [{ fields: { quality: 'low' }, type: PDF }],
  '/pdf-with-acroforms': [{ file: xfaFile, type: PDF }],
  // Page tools and scan clean-up (issue 27).
  '/compared-pdf': [{ fields: { compare_file: { file: pdf('pdf/text-4-pages-pdflatex.pdf') } }, type: PDF }],
  '/rotated-pdf': [{ fields: { rotation: '90' }, type: PDF }],
  '/reordered-pdf': [{ file: pdf('pdf/text-4-pages-pdflatex.pdf'), fields: { pages: '4,1-3' }, type: PDF }],
  '/n-up-pdf': [{ file: pdf('pdf/text-4-pages-pdflatex.pdf'), fields: { pages_per_sheet: '4' }, type: PDF }],
  '/resized-pdf': [{ fields: { page_size: 'A4' }, type: PDF }],
  '/pdf-without-blank-pages': [{ type: PDF }],
  '/separated-pdf': [{ file: pdf('pdf/text-4-pages-pdflatex.pdf'), fields: { separator: 'blank' }, type: PDF }],
  '/deskewed-pdf': [{ file: pdf('scans/linn-scan-ccitt.pdf'), type: PDF }],
  '/pdf-with-page-numbers': [{ type: PDF }],
  '/exported-form-data': [
    { label: 'fdf', file: pdf('forms/acroform-basic-fields-all-types.pdf'), fields: { data_format: 'fdf' }, type: 'application/vnd.fdf' },
    { label: 'xfdf', file: pdf('forms/acroform-basic-fields-all-types.pdf'), fields: { data_format: 'xfdf' }, type: 'application/vnd.adobe.xfdf' },
    { label: 'xml', file: pdf('forms/acroform-basic-fields-all-types.pdf'), fields: { data_format: 'xml' }, type: 'application/xml' },
    { label: 'xdp', file: pdf('forms/xfa-pdfium-simple.pdf'), fields: { data_format: 'xdp' }, type: 'application/vnd.adobe.xdp+xml' },
  ],
};

const realType = (path: string) => execFileSync('file', ['--mime-type', '-b', path], { encoding: 'utf8' }).trim();

interface Info {
  name: string;
  type: string;
}

async function infoOf(id: string): Promise<Info> {
  const res = await t.request(`/resource/${id}?format=info`);
  assert.is(res.status, 200);
  return (await res.json()) as Info;
}

/** Problems of one stored resource: its record against its bytes (and against the endpoint's format). */
async function check(where: string, id: string, url: string, exact: string | undefined): Promise<string[]> {
  const info = await infoOf(id);
  const real = realType(await t.download(url));
  const ok = ACCEPT[real];
  const wrong: string[] = [];
  if (!ok) wrong.push(`${where}: ${info.name} is ${real} (file), not in the mapping; record says ${info.type}`);
  else if (!ok.includes(info.type)) wrong.push(`${where}: ${info.name} recorded ${info.type}, bytes are ${real}`);
  if (exact && info.type !== exact) wrong.push(`${where}: ${info.name} recorded ${info.type}, expected ${exact}`);
  return wrong;
}

test('the table covers every registered endpoint', () => {
  const served = t.deps.operations.map((op) => op.path);
  const missing = served.filter((p) => !(p in ENDPOINTS));
  assert.equal(missing, [], `add these endpoints to the MIME table: ${missing.join(', ')}`);
});

test('every endpoint output: the info record type is the real type of its bytes', async () => {
  const wrong: string[] = [];
  const served = new Set(t.deps.operations.map((op) => op.path));
  for (const [path, cases] of Object.entries(ENDPOINTS)) {
    if (!cases || !served.has(path)) continue;
    for (const c of cases) {
      const where = `${path}${c.label ? ` (${c.label})` : ''}`;
      const fields: Record<string, FormValue | FormValue[]> = {
        ...(c.file === null ? {} : { file: { file: c.file ?? corpus('pdf/text-minimal-pdflatex.pdf') } }),
        ...c.fields,
      };
      if (c.after) {
        const first = await t.form(c.after[0], { file: { file: corpus('pdf/text-minimal-pdflatex.pdf') }, ...c.after[1] });
        fields.id = String(((await first.json()) as { outputId: string }).outputId);
      }
      const res = await t.form(path, fields);
      const body = (await res.json().catch(() => null)) as { outputId?: string | string[]; outputUrl?: string | string[]; error?: string } | null;
      if (res.status !== 200 || !body?.outputId) {
        wrong.push(`${where}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
        continue;
      }
      const ids = [body.outputId].flat();
      const urls = [body.outputUrl!].flat();
      for (let i = 0; i < ids.length; i++) wrong.push(...(await check(where, ids[i], urls[i], c.type)));
    }
  }
  assert.equal(wrong, []);
});

test('uploads: the record type follows the file format', async () => {
  const UPLOADS: [string, string][] = [
    ['forms/simple-form-2-fields.fdf', 'application/vnd.fdf'],
    ['forms/annotations.xfdf', 'application/vnd.adobe.xfdf'],
    ['pdf/text-minimal-pdflatex.pdf', PDF],
    ['postscript/cups-onepage-letter.ps', 'application/postscript'],
    ['postscript/pillow-sample-cmyk.eps', 'application/postscript'],
    ['office/poi-SampleDoc.docx', DOCX],
    ['office/poi-SampleSS.xlsx', XLSX],
    ['office/poi-SampleShow.pptx', PPTX],
    ['office/gotenberg-sheet.csv', 'text/csv'],
    ['images/hopper.png', 'image/png'],
    ['images/hopper.jpg', 'image/jpeg'],
    ['images/hopper.tif', 'image/tiff'],
    ['images/hopper.bmp', 'image/bmp'],
    ['images/hopper.gif', 'image/gif'],
    ['images/hopper.webp', 'image/webp'],
    ['email/nested-multipart.eml', 'message/rfc822'],
    ['email/poi-outlook-two-attachments.msg', 'application/vnd.ms-outlook'],
    ['web/gotenberg-footer.html', 'text/html'],
  ];
  const wrong: string[] = [];
  for (const [rel, type] of UPLOADS) {
    const res = await t.form('/upload', { file: { file: corpus(rel) } });
    const { files } = (await res.json()) as { files: { id: string }[] };
    const info = await infoOf(files[0].id);
    if (info.type !== type) wrong.push(`${rel}: ${info.type}, expected ${type}`);
  }
  // Uploads of the types the forms endpoints use, named by the client.
  const named: [string, Buffer, string][] = [
    ['data.xdp', Buffer.from('<?xml version="1.0"?><xdp:xdp xmlns:xdp="http://ns.adobe.com/xdp/"/>'), 'application/vnd.adobe.xdp+xml'],
    ['notes.md', Buffer.from('# Title\n'), 'text/markdown'],
    ['bundle.zip', Buffer.from(`PK\x05\x06${'\0'.repeat(18)}`, 'latin1'), 'application/zip'],
  ];
  for (const [name, bytes, type] of named) {
    const res = await t.form('/upload', { file: { bytes, name } });
    const { files } = (await res.json()) as { files: { id: string }[] };
    const info = await infoOf(files[0].id);
    if (info.type !== type) wrong.push(`${name}: ${info.type}, expected ${type}`);
  }
  assert.equal(wrong, []);
});

test.run();
