/**
 * Cuts marked-content sequences out of a content stream: `/OC /name BDC ... EMC` whose name `hidden` accepts,
 * nested sequences included, each with its operands. The stream is read token by token (strings, hex strings,
 * dictionaries, comments and inline image data skipped as such), so an "EMC" inside a string or an image is not
 * taken for an operator. Bytes outside the cut sequences are kept as they are.
 */
export function cullMarkedContent(data: Buffer, hidden: (name: string) => boolean): { data: Buffer; removed: number } {
  const cuts: [number, number][] = [];
  /** Marked-content nesting: for each open sequence, where its cut starts (or -1 when it is kept). */
  const stack: number[] = [];
  let operands: { start: number; text: string }[] = [];
  let i = 0;
  const n = data.length;
  const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x0c || c === 0x00;
  const isDelim = (c: number) =>
    c === 0x28 || c === 0x29 || c === 0x3c || c === 0x3e || c === 0x5b || c === 0x5d || c === 0x7b || c === 0x7d || c === 0x2f || c === 0x25;
  while (i < n) {
    const c = data[i];
    if (isSpace(c)) {
      i++;
      continue;
    }
    const start = i;
    if (c === 0x25) {
      while (i < n && data[i] !== 0x0a && data[i] !== 0x0d) i++;
      continue;
    }
    if (c === 0x28) {
      // A literal string: balanced parentheses, backslash escapes.
      let depth = 0;
      for (; i < n; i++) {
        if (data[i] === 0x5c) i++;
        else if (data[i] === 0x28) depth++;
        else if (data[i] === 0x29 && --depth === 0) break;
      }
      i++;
      operands.push({ start, text: '' });
      continue;
    }
    if (c === 0x3c && data[i + 1] === 0x3c) {
      // A dictionary: skipped to its matching >>, strings inside skipped too.
      let depth = 0;
      while (i < n) {
        if (data[i] === 0x3c && data[i + 1] === 0x3c) {
          depth++;
          i += 2;
        } else if (data[i] === 0x3e && data[i + 1] === 0x3e) {
          depth--;
          i += 2;
          if (depth === 0) break;
        } else if (data[i] === 0x28) {
          let d = 0;
          for (; i < n; i++) {
            if (data[i] === 0x5c) i++;
            else if (data[i] === 0x28) d++;
            else if (data[i] === 0x29 && --d === 0) break;
          }
          i++;
        } else i++;
      }
      operands.push({ start, text: '<<>>' });
      continue;
    }
    if (c === 0x3c) {
      while (i < n && data[i] !== 0x3e) i++;
      i++;
      operands.push({ start, text: '' });
      continue;
    }
    if (c === 0x5b || c === 0x5d || c === 0x7b || c === 0x7d) {
      i++;
      if (c === 0x5b) operands.push({ start, text: '[' });
      continue;
    }
    if (c === 0x2f) {
      i++;
      while (i < n && !isSpace(data[i]) && !isDelim(data[i])) i++;
      operands.push({ start, text: data.toString('latin1', start, i) });
      continue;
    }
    while (i < n && !isSpace(data[i]) && !isDelim(data[i])) i++;
    if (i === start) {
      i++; // a stray delimiter (`)`, `>`)
      continue;
    }
    const word = data.toString('latin1', start, i);
    if (/^[+-]?(\d+\.?\d*|\.\d+)$/.test(word) || word === 'true' || word === 'false' || word === 'null') {
      operands.push({ start, text: word });
      continue;
    }
    const from = operands[0]?.start ?? start;
    if (word === 'BI') {
      // Inline image: its data runs from after ID and one white-space byte to EI between white space.
      const id = data.indexOf('ID', i, 'latin1');
      let j = id < 0 ? n : id + 3;
      while (j < n && !(isSpace(data[j - 1]) && data[j] === 0x45 && data[j + 1] === 0x49 && (j + 2 >= n || isSpace(data[j + 2])))) j++;
      i = Math.min(n, j + 2);
    } else if (word === 'BDC' || word === 'BMC') {
      const tag = operands.at(-2)?.text;
      const prop = operands.at(-1)?.text ?? '';
      const outer = stack.some((s) => s >= 0);
      stack.push(!outer && word === 'BDC' && tag === '/OC' && prop.startsWith('/') && hidden(prop) ? from : -1);
    } else if (word === 'EMC') {
      const open = stack.pop();
      if (open !== undefined && open >= 0) cuts.push([open, i]);
    }
    operands = [];
  }
  // A hidden sequence left open runs to the end of the stream.
  const unclosed = stack.find((s) => s >= 0);
  if (unclosed !== undefined) cuts.push([unclosed, n]);
  if (!cuts.length) return { data, removed: 0 };
  const parts: Buffer[] = [];
  let at = 0;
  for (const [a, b] of cuts) {
    parts.push(data.subarray(at, a), Buffer.from('\n'));
    at = b;
  }
  parts.push(data.subarray(at));
  return { data: Buffer.concat(parts), removed: cuts.length };
}
