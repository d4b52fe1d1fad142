import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import type { PassThrough } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import JSZip from 'jszip';
import { ZipFile } from 'yazl';

const CONTENT_TYPES = '[Content_Types].xml';
const SLIDE = /^ppt\/slides\/(?:_rels\/)?slide(\d+)\.xml(?:\.rels)?$/;
/** pptxgenjs names a slide's pictures after the slide: ppt/media/image-<slide>-<n>.<ext>. */
const MEDIA = /^ppt\/media\/(image|media)-(\d+)-(\d+)\.(\w+)$/;

/**
 * A presentation written to `path` a few slides at a time, so that only one batch of slides is ever in memory.
 * `frame` is pptxgenjs's package of the whole presentation with empty slides: its parts shared by all slides
 * (presentation.xml and its slide list, the masters, notes pages, [Content_Types].xml, docProps/app.xml) are written
 * first; then each `add` takes a package made by pptxgenjs of the next slides alone and moves its slides, their
 * relationships and pictures in, renumbered after the slides already written.
 *
 * The package is laid out the way Office writes one: [Content_Types].xml first, no folder entries. Type sniffers
 * (file(1), libmagic, mail and upload gateways) recognise OOXML by that first entry; pptxgenjs (JSZip) writes its
 * folders first, so its own files are taken for plain ZIP archives.
 */
export async function slideDeckWriter(path: string, frame: Buffer) {
  const file = createWriteStream(path);
  // yazl writes the entries in the order given, each deflated whole (sizes in the local headers, no data
  // descriptors), as the Word package and /zip are written (archive/zip.ts).
  const zip = new ZipFile();
  const out = zip.outputStream as PassThrough;
  const written = pipeline(out, file);
  written.catch(() => {}); // awaited by close; a job that fails first must not leave it unhandled
  // Pictures too: Ghostscript's JPEGs (no optimised Huffman tables) deflate by 12-18 %.
  const put = (name: string, data: Uint8Array) =>
    zip.addBuffer(Buffer.from(data.buffer, data.byteOffset, data.byteLength), name, { compressionLevel: 6, forceDosTimestamp: true });
  const src = await JSZip.loadAsync(frame);
  const names = Object.keys(src.files).filter((n) => !src.files[n].dir && !SLIDE.test(n));
  const total = Object.keys(src.files).filter((n) => /^ppt\/slides\/slide\d+\.xml$/.test(n)).length;
  for (const name of [CONTENT_TYPES, ...names.filter((n) => n !== CONTENT_TYPES)]) put(name, await src.files[name].async('uint8array'));
  let slides = 0;
  return {
    /** Appends the slides of a package made by pptxgenjs (with the same layout as the frame's). */
    async add(pptx: Buffer): Promise<void> {
      const part = await JSZip.loadAsync(pptx);
      // Slide numbers in part names and paths, and in the slide's own name (<p:cSld name="Slide 3">).
      const renumber = (text: string) =>
        text
          .replace(/(slides\/(?:_rels\/)?slide|notesSlides\/notesSlide)(\d+)(?=\.xml)/g, (_, stem, n) => `${stem}${slides + Number(n)}`)
          .replace(/(media\/(?:image|media)-)(\d+)(?=-\d+\.\w+)/g, (_, stem, n) => `${stem}${slides + Number(n)}`)
          .replace(/(<p:cSld name="Slide )(\d+)(?=")/, (_, stem, n) => `${stem}${slides + Number(n)}`);
      const moved = Object.keys(part.files).filter((n) => SLIDE.test(n) || MEDIA.test(n));
      for (const name of moved) {
        // A slide's relationships point at its pictures and notes page by their numbers, which change with the slide's.
        const data = MEDIA.test(name) ? await part.files[name].async('uint8array') : new TextEncoder().encode(renumber(await part.files[name].async('string')));
        put(renumber(name), data);
      }
      slides += moved.filter((n) => /^ppt\/slides\/slide\d+\.xml$/.test(n)).length;
      if (slides > total) throw new Error(`slideDeckWriter: ${slides} slides added to a frame of ${total}`);
      // yazl queues whatever it is given: the next batch waits for this one to reach the file.
      if (out.writableNeedDrain) await once(out, 'drain');
    },
    async close(): Promise<void> {
      if (slides !== total) throw new Error(`slideDeckWriter: ${slides} slides added to a frame of ${total}`);
      zip.end();
      await written;
    },
    /** Lets the file go unfinished (the job failed): its descriptor is not kept by a process that serves more jobs. */
    discard: () => void file.destroy(),
  };
}
