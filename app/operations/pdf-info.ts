import { z } from 'zod';
import { pdfInfo, PDF_INFO_QUERIES as QUERIES } from '../document/index.js';
import { AppError } from '../errors.js';
import { looseList } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';

const queries = z
  .preprocess(
    (v) =>
      looseList(v)
        ?.flatMap((x) => String(x).split(','))
        .map((x) => x.trim())
        .filter(Boolean),
    z.array(z.string()).min(1),
  )
  .meta({ type: 'string', description: `Comma-separated: ${QUERIES.join(', ')}, or all` });

export default operation({
  path: '/pdf-info',
  tag: 'Information and extraction',
  summary: 'Answer questions about a PDF',
  description:
    "One key per query plus allQueriesProcessed. Dates are ISO 8601 UTC. custom_metadata is an object of the non-standard Info entries. page_boxes lists each page's media, crop, bleed, trim and art boxes as [llx, lly, urx, ury]. Encrypted, damaged or non-PDF input answers what it can with allQueriesProcessed false and a warning; so does a PDF past MAX_STREAM_MB or MAX_OBJECTS (the queries that need that data are null, the warning names the setting).",
  inputs: pdfInput(),
  fields: { queries },
  output: 'json',
  engines: ['qpdf', 'poppler'],
  cost: { lane: 'light' },
  check: (f) => {
    const bad = f.queries.find((q) => q !== 'all' && !(QUERIES as readonly string[]).includes(q));
    if (bad) throw new AppError('out_of_range', `${bad} is not within the acceptable range for queries`);
  },
  run: async ({ input, fields, dir, signal, limits }) => ({ json: await pdfInfo(input, fields.queries, { dir, signal, limits }) }),
});
