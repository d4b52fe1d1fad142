// /validated-zugferd on invoice XML: the whole request (upload, header read, the Factur-X XSD through xmllint and,
// side by side, the EN 16931 rules in TypeScript, in a worker thread above 256 KB; the JSON report) vs the bare work
// one after the other on the same file (xmllint --schema, then the rules called directly), and the rules alone.
// Median of RUNS. Goal: <= 1.2 from 1,000 lines on (a 2-line invoice carries the request's few milliseconds of
// upload and job handling). Run: node --import tsx scripts/bench/invoice.bench.ts
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { checkEn16931, PROFILES, schemaPath } from '../../app/invoice/index.js';
import { startApp } from '../../test/helpers.js';
import { invoiceXml } from '../../test/zugferd-fixtures.js';

const sh = promisify(execFile);
const RUNS = 5;
const work = mkdtempSync(join(tmpdir(), 'qbench-inv-'));
const ms = (t: bigint) => Number(process.hrtime.bigint() - t) / 1e6;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The fixture invoice with `n` lines of 10 x 120.00 (its totals computed again), so that it stays VALID. */
function manyLines(n: number): string {
  const xml = invoiceXml();
  const first = xml.indexOf('<ram:IncludedSupplyChainTradeLineItem>');
  const end = xml.indexOf('</ram:IncludedSupplyChainTradeLineItem>') + '</ram:IncludedSupplyChainTradeLineItem>'.length;
  const line = xml.slice(first, end);
  const lines = Array.from({ length: n }, (_, i) => line.replace('<ram:LineID>1</ram:LineID>', `<ram:LineID>${i + 1}</ram:LineID>`)).join('\n');
  const last = xml.lastIndexOf('</ram:IncludedSupplyChainTradeLineItem>') + '</ram:IncludedSupplyChainTradeLineItem>'.length;
  const net = (n * 1200).toFixed(2);
  const vat = (n * 228).toFixed(2);
  const gross = (n * 1428).toFixed(2);
  return (xml.slice(0, first) + lines + xml.slice(last))
    .replaceAll('1450.00', net)
    .replace('<ram:CalculatedAmount>275.50', `<ram:CalculatedAmount>${vat}`)
    .replace('>275.50</ram:TaxTotalAmount>', `>${vat}</ram:TaxTotalAmount>`)
    .replaceAll('1725.50', gross);
}

async function main() {
  const xsd = schemaPath(PROFILES.EN16931);
  const t = await startApp({ INVOICE_MAX_LINES: '20000' });
  console.log('invoice | size | findings | ours (request) | bare xmllint + rules | ours / bare | rules alone');
  for (const [label, xml] of [
    ['2 lines', invoiceXml()],
    ['1,000 lines', manyLines(1000)],
    ['20,000 lines', manyLines(20_000)],
  ] as const) {
    const file = join(work, `${label.replace(/\W+/g, '-')}.xml`);
    writeFileSync(file, xml);
    let findings = -1;
    const ours = async () => {
      const started = process.hrtime.bigint();
      const res = await t.form('/validated-zugferd', { file: { file } });
      const body = (await res.json()) as { findings?: unknown[]; error?: string };
      if (res.status !== 200) throw new Error(body.error);
      findings = body.findings?.length ?? -1;
      return ms(started);
    };
    const bare = async () => {
      const started = process.hrtime.bigint();
      await sh('xmllint', ['--noout', '--nonet', '--schema', xsd, file]);
      checkEn16931(readFileSync(file, 'utf8'));
      return ms(started);
    };
    const rules = () => {
      const started = process.hrtime.bigint();
      checkEn16931(xml);
      return ms(started);
    };
    await ours();
    const o: number[] = [];
    const b: number[] = [];
    const r: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      o.push(await ours());
      b.push(await bare());
      r.push(rules());
    }
    const mb = (statSync(file).size / 1024 / 1024).toFixed(2);
    console.log(
      `${label} | ${mb} MB | ${findings} | ${median(o).toFixed(0)} ms | ${median(b).toFixed(0)} ms | ${(median(o) / median(b)).toFixed(2)} | ${median(r).toFixed(1)} ms`,
    );
  }
  await t.close();
  rmSync(work, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
