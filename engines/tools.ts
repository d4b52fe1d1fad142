import { tmpdir } from 'node:os';
import { run } from './run.js';

/** Native tools Quire drives, the Debian package that provides each, and how to read its version. */
export const TOOLS = {
  qpdf: { bin: 'qpdf', args: ['--version'], pkg: 'qpdf', pattern: /qpdf version (\S+)/ },
  ghostscript: { bin: 'gs', args: ['--version'], pkg: 'ghostscript', pattern: /(\d+\.\d+(?:\.\d+)?)/ },
  poppler: { bin: 'pdfinfo', args: ['-v'], pkg: 'poppler-utils', pattern: /pdfinfo version (\S+)/ },
  mupdf: { bin: 'mutool', args: ['-v'], pkg: 'mupdf-tools', pattern: /mutool version (\S+)/ },
  tesseract: { bin: 'tesseract', args: ['--version'], pkg: 'tesseract-ocr', pattern: /tesseract (\S+)/ },
  libreoffice: { bin: 'soffice', args: ['--version'], pkg: 'libreoffice-writer-nogui', pattern: /LibreOffice (\S+)/ },
  chromium: { bin: 'chromium', args: ['--version'], pkg: 'chromium', pattern: /Chromium (\S+)/ },
  openssl: { bin: 'openssl', args: ['version'], pkg: 'openssl', pattern: /OpenSSL (\S+)/ },
  xmllint: { bin: 'xmllint', args: ['--version'], pkg: 'libxml2-utils', pattern: /using libxml version (\S+)/ },
  zbar: { bin: 'zbarimg', args: ['--version'], pkg: 'zbar-tools', pattern: /(\d+\.\d+(?:\.\d+)?)/ },
  unpaper: { bin: 'unpaper', args: ['--version'], pkg: 'unpaper', pattern: /(\d+\.\d+(?:\.\d+)?)/ },
} as const;

export type ToolName = keyof typeof TOOLS;
export type ToolVersions = Partial<Record<ToolName, string>>;

/** Reads every tool's version once (at start). A tool that is missing or broken is simply absent. */
export async function probeTools(names: ToolName[] = Object.keys(TOOLS) as ToolName[]): Promise<ToolVersions> {
  const found: ToolVersions = {};
  await Promise.all(
    names.map(async (name) => {
      const t = TOOLS[name];
      try {
        const r = await run(t.bin, [...t.args], { cwd: tmpdir(), timeoutMs: 20_000 });
        const m = (r.stdout + r.stderr).match(t.pattern);
        found[name] = m ? m[1] : 'unknown';
      } catch {
        /* absent: endpoints that need it answer 503 */
      }
    }),
  );
  return found;
}
