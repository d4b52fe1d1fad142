import { pdfToWord } from '../export/index.js';
import { output } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';

export default operation({
  path: '/word',
  tag: 'Conversion',
  summary: 'Convert a PDF to an editable Word document (.docx)',
  description:
    "The PDF's look, as editable Word text, one Word page per PDF page: each PDF page is a new-page section with the page's size and orientation, and each text block a paragraph in a frame at its place on the page, so text never flows onto a page the PDF does not have, whatever fonts Word substitutes; tables (in the page's flow) that do not fit where they are come up, and set smaller when taller together than the page's body, and text repeated at the top or bottom of the pages is a header or footer only when it is a band above or below all the page's other text (a form's repeated first rows stay on the page), so the Word document has the PDF's page count. Paragraphs keep their alignment, indents, exact line pitch and the PDF's line breaks (a paragraph is still one paragraph; one that goes on in the next column is two frames); a row Word's font sets wider than the PDF did is condensed to its width, and a wide gap inside a row is a tab. Runs keep font family (mapped to a family Word and LibreOffice have: Times New Roman, Arial, Courier New, Calibri, Cambria keep their names; TeX fonts become Times New Roman), size, bold, italic and colour. Headings keep their look and get the Heading 1-6 styles for navigation; bulleted and numbered lists are Word lists; tables are Word tables at their height on the page with the page's column widths and row heights, and where the PDF draws them (its line art) the rules are cell borders on the sides where they are drawn, filled rectangles behind cells are shading, vertical rules set the columns and the ruled grid merges cells (a header over a group of ruled columns spans them, a cell over rows no rule separates spans them vertically); tables without line art have no borders. A rule just under a run's baseline spanning its words underlines it (links too). A page whose blocks stand side by side again and again (a grid not recognised as a table) is written row by row at tab stops, except rows that two or more vertical rules run through, which are a ruled table as above. Text repeated at the top or bottom of the pages becomes the header or footer, a page number in it a PAGE field counting from the printed number; web links (URI link annotations) are hyperlinks. Images (rendered at 150 dpi, at most 60 per document) float behind the text at their size and place, and the page's line art (rules, shading, charts, diagrams) is one transparent picture behind everything. A table cell split top to bottom by a rule, whose sides are ruled into rows at their own heights, is read as two tables side by side. Text set a quarter turn stays turned: in a table's cells, cells that turn their text (btLr/tbRl); elsewhere (a stamp along the margin, a label up a chart's axis, column heads set sideways), text boxes at its place that turn it (vert270/vert), a paragraph set sideways one box; text at other angles is set upright at its place. Text drawn invisibly (render mode 3: the OCR layer under a scan, one whose scan is missing, hidden text) is kept as Word hidden text, searchable in Word but neither shown nor printed, as in the PDF; a warning names the pages that draw it with no picture under it. A page without text (a scan) keeps its image only: run /pdf-with-ocr-text first to get editable text, a warning says so.",
  inputs: pdfInput(),
  fields: { output: output() },
  output: 'file',
  produces: ['docx'],
  engines: ['qpdf', 'mupdf', 'poppler', 'ghostscript'],
  thread: import.meta.url,
  run: async ({ input, dir, signal, timeoutMs, progress }) => {
    const { path, warning } = await pdfToWord(input.path, dir, { signal, timeoutMs }, progress);
    return { files: [{ path, ext: 'docx' }], warning };
  },
});
