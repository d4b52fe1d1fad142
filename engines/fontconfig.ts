import type { EngineContext } from './context.js';
import { run } from './run.js';

/** A face fontconfig picked: its family name (as LibreOffice finds it by name), file and index in a collection. */
export interface MatchedFace {
  family: string;
  file: string;
  index: number;
}

/** fontconfig's pattern syntax reserves these in a family name. */
const escapeFamily = (family: string) => family.replace(/[\\:,-]/g, (c) => `\\${c}`);

/**
 * The face fontconfig (which LibreOffice's own fallback goes through) draws `codePoint` in when `family` is asked
 * for: the family itself when it has the character, else the machine's best face for it (charset outranks family
 * in fontconfig's match). It may still lack the character when no face has it: the caller checks.
 */
export async function matchFace(family: string, codePoint: number, bold: boolean, ctx: EngineContext): Promise<MatchedFace | undefined> {
  const pattern = `${escapeFamily(family)}:charset=${codePoint.toString(16)}${bold ? ':weight=bold' : ''}`;
  const { stdout } = await run('fc-match', ['--format=%{family[0]}\\n%{file}\\n%{index}', '--', pattern], {
    ...ctx,
    timeoutMs: Math.min(ctx.timeoutMs ?? 10_000, 10_000),
  });
  const [name, file, index] = stdout.split('\n');
  return name && file ? { family: name, file, index: Number(index) || 0 } : undefined;
}
