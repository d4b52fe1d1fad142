/**
 * Exact decimal arithmetic for the EN 16931 rules: an amount is an integer of units of 10^-scale (BigInt), so
 * 13.775 x 100 is 1377.5, never 1377.4999999999998. `round` is XPath's: half toward positive infinity, which the
 * official rules apply to absolute values where the sign must not matter (abs(-13.775) rounds to 13.78).
 */

export interface Dec {
  /** The value times 10^scale. */
  v: bigint;
  scale: number;
}

const TEN = 10n;
const pow10 = (n: number): bigint => TEN ** BigInt(n);

/** xs:decimal's lexical form (sign, digits, one optional point), surrounding white space allowed; else null. */
const DECIMAL = /^\s*([+-]?)(\d*)(?:\.(\d*))?\s*$/;

export function dec(text: string | null | undefined): Dec | null {
  if (text == null) return null;
  const m = DECIMAL.exec(text);
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return null;
  const frac = m[3] ?? '';
  const v = BigInt(`${m[2] || '0'}${frac}`);
  return { v: m[1] === '-' ? -v : v, scale: frac.length };
}

export const fromInt = (n: number | bigint): Dec => ({ v: BigInt(n), scale: 0 });
export const ZERO: Dec = fromInt(0);

function align(a: Dec, b: Dec): [bigint, bigint, number] {
  const s = Math.max(a.scale, b.scale);
  return [a.v * pow10(s - a.scale), b.v * pow10(s - b.scale), s];
}

export const add = (a: Dec, b: Dec): Dec => {
  const [x, y, scale] = align(a, b);
  return { v: x + y, scale };
};
export const sub = (a: Dec, b: Dec): Dec => {
  const [x, y, scale] = align(a, b);
  return { v: x - y, scale };
};
export const mul = (a: Dec, b: Dec): Dec => ({ v: a.v * b.v, scale: a.scale + b.scale });
/** a / 10^n, exactly. */
export const shift = (a: Dec, n: number): Dec => ({ v: a.v, scale: a.scale + n });
export const abs = (a: Dec): Dec => (a.v < 0n ? { v: -a.v, scale: a.scale } : a);
export const cmp = (a: Dec, b: Dec): number => {
  const [x, y] = align(a, b);
  return x < y ? -1 : x > y ? 1 : 0;
};
export const eq = (a: Dec | null, b: Dec | null): boolean => a !== null && b !== null && cmp(a, b) === 0;
export const isZero = (a: Dec): boolean => a.v === 0n;
export const sum = (xs: Dec[]): Dec => xs.reduce(add, ZERO);

/** floor(a / b) for BigInts of any sign. */
function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

/** XPath round(): the nearest integer, halves toward positive infinity (round(-2.5) = -2). */
export function round(a: Dec): Dec {
  if (a.scale <= 0) return a;
  const unit = pow10(a.scale);
  return { v: floorDiv(2n * a.v + unit, 2n * unit), scale: 0 };
}

/** round(a * 100) div 100: the official rules' rounding to cents. */
export const round2 = (a: Dec): Dec => shift(round(shift(a, -2)), 2);

/** The plain decimal text (trailing zeros of the fraction kept to two places at least). */
export function format(a: Dec): string {
  const neg = a.v < 0n;
  let digits = (neg ? -a.v : a.v).toString();
  let scale = a.scale;
  if (scale < 0) {
    digits += '0'.repeat(-scale);
    scale = 0;
  }
  digits = digits.padStart(scale + 1, '0');
  let int = digits.slice(0, digits.length - scale);
  let frac = digits.slice(digits.length - scale).replace(/0+$/, '');
  if (frac.length < 2) frac = frac.padEnd(2, '0');
  if (int === '') int = '0';
  return `${neg ? '-' : ''}${int}.${frac}`;
}
