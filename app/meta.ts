import { existsSync, readFileSync } from 'node:fs';

// The same module runs from app/ (tsx) and from dist/app/ (built): look one or two levels up.
const pkgPath = ['../package.json', '../../package.json'].map((p) => new URL(p, import.meta.url)).find((u) => existsSync(u));
const pkg = JSON.parse(readFileSync(pkgPath!, 'utf8')) as { version: string };

/** What GET /up reports. The release date is that of this version. */
export const META = { product: 'Quire', version: pkg.version, releaseDate: '2026-11-22' };
