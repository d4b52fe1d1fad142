import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import { type Document, Packer } from 'docx';
import JSZip from 'jszip';
import { writeZip } from '../archive/index.js';

/**
 * A Word package written a batch of pages at a time, so a long document never has all its Word objects at once:
 * each batch is a document of its own built by the docx library, whose body, headers, footers, pictures, links
 * and list numberings are moved into one package on disk under names of their own; at the end the parts the
 * batches share (styles, settings, fonts) come from one more document with no pages, and the package is zipped
 * from disk.
 */
export class DocxPackage {
  private body?: WriteStream;
  private readonly parts = new Map<string, string>();
  private readonly rels: string[] = [];
  private readonly overrides: string[] = [];
  private readonly abstracts: string[] = [];
  private readonly nums: string[] = [];
  private abstractBase = 0;
  private numBase = 0;
  private batches = 0;
  private headers = 0;

  /** `dir`: an empty folder of the job's for the parts. */
  constructor(private readonly dir: string) {}

  /**
   * Adds the pages of `doc` after those added before. The body's own section properties close its last section;
   * but for the `last` batch they become a paragraph's, as the docx library writes every section but the last.
   */
  async add(doc: Document, last: boolean): Promise<void> {
    const zip = await JSZip.loadAsync(await Packer.toBuffer(doc));
    const text = (name: string) => zip.file(name)?.async('string') ?? Promise.resolve('');
    const batch = ++this.batches;
    const ids = new Map<string, string>();
    for (const rel of (await text('word/_rels/document.xml.rels')).match(/<Relationship\b[^>]*>/g) ?? []) {
      const [id, type, target] = ['Id', 'Type', 'Target'].map((a) => new RegExp(`\\b${a}="([^"]*)"`).exec(rel)?.[1] ?? '');
      const kind = type.slice(type.lastIndexOf('/') + 1);
      let to = target;
      if (kind === 'header' || kind === 'footer') {
        to = `${kind}${++this.headers}.xml`;
        await this.part(`word/${to}`, this.numbered(await text(`word/${target}`)));
        const own = await text(`word/_rels/${target}.rels`);
        if (own.includes('<Relationship ')) await this.part(`word/_rels/${to}.rels`, own);
        this.overrides.push(`<Override PartName="/word/${to}" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.${kind}+xml"/>`);
      } else if (kind === 'image') {
        to = `media/b${batch}-${posix.basename(target)}`;
        await this.part(`word/${to}`, await zip.file(`word/${target}`)!.async('nodebuffer'));
      } else if (kind !== 'hyperlink') continue;
      ids.set(id, `b${batch}${id}`);
      this.rels.push(rel.replace(/\bId="[^"]*"/, `Id="b${batch}${id}"`).replace(/\bTarget="[^"]*"/, `Target="${to}"`));
    }
    const xml = await text('word/document.xml');
    const open = xml.indexOf('<w:body>') + '<w:body>'.length;
    if (!this.body) {
      this.body = createWriteStream(join(this.dir, 'document.xml'));
      await this.write(xml.slice(0, open));
    }
    let body = this.numbered(xml.slice(open, xml.lastIndexOf('</w:body>'))).replace(/\br:(id|embed)="([^"]*)"/g, (m, attr, id) =>
      ids.has(id) ? `r:${attr}="${ids.get(id)}"` : m,
    );
    if (!last) {
      // Into the properties of the section's last paragraph when it has no runs (the library's own place for them);
      // otherwise a paragraph of their own, as the library writes after a table.
      const at = body.lastIndexOf('<w:sectPr');
      const [before, sect] = [body.slice(0, at), body.slice(at)];
      if (before.endsWith('</w:pPr></w:p>')) body = `${before.slice(0, -'</w:pPr></w:p>'.length)}${sect}</w:pPr></w:p>`;
      else if (before.endsWith('<w:p/>')) body = `${before.slice(0, -'<w:p/>'.length)}<w:p><w:pPr>${sect}</w:pPr></w:p>`;
      else body = `${before}<w:p><w:pPr>${sect}</w:pPr></w:p>`;
    }
    await this.write(body);
    this.numberings(await text('word/numbering.xml'));
  }

  /** Writes the package to `path`; `shell` is a document with no pages in the look of the batches'. */
  async finish(shell: Document, path: string): Promise<void> {
    const body = this.body;
    if (!body) throw new Error('A Word package needs at least one batch of pages.');
    await this.write('</w:body></w:document>');
    await new Promise<void>((resolve, reject) => body.end((err?: Error | null) => (err ? reject(err) : resolve())));
    const zip = await JSZip.loadAsync(await Packer.toBuffer(shell));
    const text = (name: string) => zip.file(name)!.async('string');
    const own =
      /^(word\/document\.xml|word\/_rels\/document\.xml\.rels|word\/numbering\.xml|\[Content_Types\]\.xml|word\/(_rels\/)?(header|footer)\d+\.xml(\.rels)?)$/;
    for (const name of Object.keys(zip.files)) {
      if (!zip.files[name].dir && !own.test(name)) await this.part(name, await zip.files[name].async('nodebuffer'));
    }
    const rels = (await text('word/_rels/document.xml.rels')).replace(/<Relationship\b[^>]*\/(header|footer|image|hyperlink)"[^>]*>/g, '');
    await this.part('word/_rels/document.xml.rels', rels.replace('</Relationships>', `${this.rels.join('')}</Relationships>`));
    const numbering = await text('word/numbering.xml');
    const start = numbering.indexOf('>', numbering.indexOf('<w:numbering')) + 1;
    await this.part('word/numbering.xml', `${numbering.slice(0, start)}${this.abstracts.join('')}${this.nums.join('')}</w:numbering>`);
    const types = (await text('[Content_Types].xml')).replace(/<Override\b[^>]*\/word\/(header|footer)\d+\.xml"[^>]*>/g, '');
    await this.part('[Content_Types].xml', types.replace('</Types>', `${this.overrides.join('')}</Types>`));
    this.parts.set('word/document.xml', join(this.dir, 'document.xml'));
    // Office's order: the content types first (type sniffers recognise OOXML by that first entry).
    const names = ['[Content_Types].xml', ...[...this.parts.keys()].filter((n) => n !== '[Content_Types].xml')];
    await writeZip(
      names.map((name) => ({ name, path: this.parts.get(name)! })),
      path,
    );
  }

  /** A batch's list numberings, numbered on from the batches' before, so each list keeps its own count. */
  private numberings(xml: string): void {
    let abstracts = 0;
    let nums = 0;
    for (const a of xml.match(/<w:abstractNum\b[\s\S]*?<\/w:abstractNum>/g) ?? []) {
      this.abstracts.push(
        a.replace(/w:abstractNumId="(\d+)"/, (_, id) => {
          abstracts = Math.max(abstracts, Number(id));
          return `w:abstractNumId="${this.abstractBase + Number(id)}"`;
        }),
      );
    }
    for (const n of xml.match(/<w:num\b[\s\S]*?<\/w:num>/g) ?? []) {
      this.nums.push(
        n
          .replace(/w:numId="(\d+)"/, (_, id) => {
            nums = Math.max(nums, Number(id));
            return `w:numId="${this.numBase + Number(id)}"`;
          })
          .replace(/<w:abstractNumId w:val="(\d+)"/, (_, id) => `<w:abstractNumId w:val="${this.abstractBase + Number(id)}"`),
      );
    }
    this.abstractBase += abstracts;
    this.numBase += nums;
  }

  /** `xml` (a batch's body, header or footer) with its list numbers as numbered in the package. */
  private numbered(xml: string): string {
    return xml.replace(/<w:numId w:val="(\d+)"/g, (_, id) => `<w:numId w:val="${this.numBase + Number(id)}"`);
  }

  private async part(name: string, data: string | Buffer): Promise<void> {
    const path = join(this.dir, 'parts', String(this.parts.size));
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, data);
    this.parts.set(name, path);
  }

  private write(chunk: string): Promise<void> {
    const body = this.body!;
    return new Promise((resolve, reject) => body.write(chunk, (err) => (err ? reject(err) : resolve())));
  }
}
