import { createWriteStream } from 'node:fs';
import { Writable } from 'node:stream';
import { configure, Uint8ArrayReader, ZipWriter } from '@zip.js/zip.js';
import JSZip from 'jszip';

// In-process codecs only: zip.js would otherwise start web workers from blob URLs.
configure({ useWebWorkers: false });

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
  const zip = new ZipWriter(Writable.toWeb(file) as WritableStream<Uint8Array>, {
    // Each entry is compressed whole before it is written: sizes in the local headers, no data descriptors.
    dataDescriptor: false,
    extendedTimestamp: false,
  });
  // Pictures too: Ghostscript's JPEGs (no optimised Huffman tables) deflate by 12-18 %.
  const put = async (name: string, data: Uint8Array) => void (await zip.add(name, new Uint8ArrayReader(data), { level: 6 }));
  const src = await JSZip.loadAsync(frame);
  const names = Object.keys(src.files).filter((n) => !src.files[n].dir && !SLIDE.test(n));
  const total = Object.keys(src.files).filter((n) => /^ppt\/slides\/slide\d+\.xml$/.test(n)).length;
  for (const name of [CONTENT_TYPES, ...names.filter((n) => n !== CONTENT_TYPES)]) await put(name, await src.files[name].async('uint8array'));
  let written = 0;
  return {
    /** Appends the slides of a package made by pptxgenjs (with the same layout as the frame's). */
    async add(pptx: Buffer): Promise<void> {
      const part = await JSZip.loadAsync(pptx);
      // Slide numbers in part names and paths, and in the slide's own name (<p:cSld name="Slide 3">).
      const renumber = (text: string) =>
        text
          .replace(/(slides\/(?:_rels\/)?slide|notesSlides\/notesSlide)(\d+)(?=\.xml)/g, (_, stem, n) => `${stem}${written + Number(n)}`)
          .replace(/(media\/(?:image|media)-)(\d+)(?=-\d+\.\w+)/g, (_, stem, n) => `${stem}${written + Number(n)}`)
          .replace(/(<p:cSld name="Slide )(\d+)(?=")/, (_, stem, n) => `${stem}${written + Number(n)}`);
      const moved = Object.keys(part.files).filter((n) => SLIDE.test(n) || MEDIA.test(n));
      for (const name of moved) {
        // A slide's relationships point at its pictures and notes page by their numbers, which change with the slide's.
        const data = MEDIA.test(name) ? await part.files[name].async('uint8array') : new TextEncoder().encode(renumber(await part.files[name].async('string')));
        await put(renumber(name), data);
      }
      written += moved.filter((n) => /^ppt\/slides\/slide\d+\.xml$/.test(n)).length;
      if (written > total) throw new Error(`slideDeckWriter: ${written} slides added to a frame of ${total}`);
    },
    async close(): Promise<void> {
      if (written !== total) throw new Error(`slideDeckWriter: ${written} slides added to a frame of ${total}`);
      await zip.close();
    },
    /** Lets the file go unfinished (the job failed): its descriptor is not kept by a process that serves more jobs. */
    discard: () => void file.destroy(),
  };
}
