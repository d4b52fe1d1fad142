import type { EngineContext } from '../../engines/context.js';
import { streamData } from '../../engines/qpdf.js';
import { inputError, type PdfObjects, pdfText } from '../document/index.js';

/**
 * The XFA packets of a form (the AcroForm /XFA entry): an array of (packet name, stream) pairs, or one stream
 * holding the whole XDP, whose top-level elements are then the packets. Read with qpdf, within MAX_STREAM_MB.
 */
export async function readXfaPackets(pdf: string, objects: PdfObjects, xfa: unknown, ctx: EngineContext, maxBytes: number): Promise<Map<string, string>> {
  const read = async (ref: string) =>
    (
      await streamData(pdf, ref.replace(/ R$/, ''), ctx, { maxBytes }).catch((err) => {
        throw inputError(err);
      })
    ).toString('utf8');
  const packets = new Map<string, string>();
  const parts = objects.array(xfa);
  if (parts.length) {
    for (let i = 0; i + 1 < parts.length; i += 2) {
      const name = pdfText(objects.resolve(parts[i]));
      const ref = parts[i + 1];
      if (typeof ref === 'string' && / R$/.test(ref)) packets.set(name, (packets.get(name) ?? '') + (await read(ref)));
    }
    return packets;
  }
  if (typeof xfa === 'string' && / R$/.test(xfa)) {
    const whole = await read(xfa);
    for (const name of ['template', 'datasets', 'config']) {
      const m = new RegExp(`<([\\w.-]+:)?${name}\\b[\\s\\S]*?</\\1?${name}\\s*>`).exec(whole);
      if (m) packets.set(name, m[0]);
    }
  }
  return packets;
}
