import { join } from 'node:path';
import { MAX_LISTED_PAGES, openPdf, resolvePages } from '../document/index.js';
import { AppError } from '../errors.js';
import { reorderPdf } from '../impose/index.js';
import { output, pageList } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';

const GRAMMAR = { reverse: true, parity: true };

export default operation({
  path: '/reordered-pdf',
  tag: 'Assembly and creation',
  summary: 'Put pages in a new order',
  description:
    'pages: the pages of the output in order, as ranges (a list like split-pdf\'s pages[], or one comma list: "3,1-2,last-4"); reversed ranges, even and odd allowed; a page may come more than once; pages not listed are dropped. Outlines (bookmarks), links, named destinations and form fields that lead to kept pages stay; those that lead only to dropped pages go (a repeated page\'s fields are copied under new names, Name+1).',
  inputs: pdfInput(),
  fields: {
    pages: pageList(GRAMMAR).refine((l) => l.length > 0),
    output: output(),
  },
  output: 'file',
  engines: ['qpdf'],
  cost: { lane: 'light' },
  run: async ({ fields, input, dir, signal, timeoutMs, outputName, limits }) => {
    const ctx = { cwd: dir, signal, timeoutMs };
    const { pageCount } = await openPdf(input.path, ctx);
    const most = Math.max(pageCount, MAX_LISTED_PAGES);
    const order: number[] = [];
    for (const spec of fields.pages) {
      order.push(...resolvePages(spec, pageCount, GRAMMAR));
      if (order.length > most)
        throw new AppError(
          'out_of_range',
          `${fields.pages.join(',').slice(0, 200)} is not within the acceptable range for pages: it lists more than the ${most} pages one order may list`,
        );
    }
    const path = join(dir, 'reordered.pdf');
    await reorderPdf(input.path, order, path, { maxBytes: limits.maxStreamBytes, maxObjects: limits.maxObjects }, ctx, pageCount);
    return { files: [{ path, name: `${outputName}.pdf` }] };
  },
});
