import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PDFDocument } from '@cantoo/pdf-lib';
import { MAX_PAGE_UNITS, PAGE_SIZE_NAMES, pageSize } from '../document/index.js';
import { AppError } from '../errors.js';
import { int, oneOf, output, positive } from '../requests/fields.js';
import { operation } from '../requests/operation.js';

export default operation({
  path: '/blank-pdf',
  tag: 'Assembly and creation',
  summary: 'Create a PDF of blank pages',
  description: `page_size is a named size or custom (custom_width and custom_height in PDF units, 72 per inch, up to ${MAX_PAGE_UNITS}).`,
  inputs: {},
  fields: {
    page_size: oneOf([...PAGE_SIZE_NAMES, 'custom']),
    page_count: int(1, 1000),
    page_orientation: oneOf(['portrait', 'landscape']).optional(),
    custom_width: positive(MAX_PAGE_UNITS).optional(),
    custom_height: positive(MAX_PAGE_UNITS).optional(),
    output: output(),
  },
  output: 'file',
  engines: [],
  cost: { lane: 'light' },
  defaultName: () => 'service_blank-pdf',
  check: (f) => {
    if (f.page_size === 'custom') {
      for (const k of ['custom_width', 'custom_height'] as const) {
        if (f[k] === undefined) throw new AppError('out_of_range', `${k} is required when page_size is custom`);
      }
    } else if (!f.page_orientation) {
      throw new AppError('out_of_range', 'page_orientation is required unless page_size is custom');
    }
  },
  // pdf-lib writes a page tree of shared empty pages in-process: 1000 pages take milliseconds, no engine needed.
  run: async ({ fields, dir, outputName }) => {
    const size: [number, number] =
      fields.page_size === 'custom' ? [fields.custom_width!, fields.custom_height!] : pageSize(fields.page_size, fields.page_orientation!);
    const doc = await PDFDocument.create();
    doc.setProducer('Quire');
    doc.setCreator('Quire /blank-pdf');
    for (let i = 0; i < fields.page_count; i++) doc.addPage(size);
    const path = join(dir, 'blank.pdf');
    await writeFile(path, await doc.save());
    return { files: [{ path, name: `${outputName}.pdf` }] };
  },
});
