// Prometheus' series descriptions (`metric{a="b"} 1+2x3 _ stale`) as used by
// promqltest's load and eval blocks, plus the Go string and number literal
// rules they rely on. Pure parsing: nothing here touches storage.

import type { Label, Labels } from '@strata/model';
import { sortLabels } from '@strata/model';
import type { FloatHistogram } from '@strata/promql';
import { parseHistogramNotation } from '@strata/promql';

/** Staleness marker bits, as Prometheus' value.StaleNaN. */
export const STALE_NAN_BITS = 0x7ff0000000000002n;

/** One position of a series' value sequence. */
export type SeqValue =
  | { kind: 'float'; value: number }
  | { kind: 'stale' }
  | { kind: 'omitted' }
  /** A native histogram `{{...}}`, with its notation for messages. */
  | { kind: 'histogram'; text: string; h: FloatHistogram };

export interface SeriesDesc {
  labels: Labels;
  values: SeqValue[];
}

/**
 * Parses `metric{a="b"} 1+2x3 _ stale` (Prometheus' ParseSeriesDesc): a metric
 * name and/or a label set (names may be quoted, a lone quoted string in the set
 * is the metric name), a space, then the value sequence.
 */
export function parseSeriesDesc(input: string): SeriesDesc {
  try {
    const p = new Cursor(input);
    const labels = parseMetric(p);
    if (p.done()) throw new Error('missing value sequence');
    if (!/[ \t]/.test(p.peek())) throw new Error(`unexpected character ${JSON.stringify(p.peek())} after the series' labels`);
    const values = parseValueSequence(p.rest().trim());
    return { labels, values };
  } catch (err) {
    throw new Error(`invalid series description ${JSON.stringify(input)}: ${(err as Error).message}`);
  }
}

class Cursor {
  pos = 0;
  readonly s: string;

  constructor(s: string) {
    this.s = s;
  }
  done(): boolean {
    return this.pos >= this.s.length;
  }
  peek(): string {
    return this.s[this.pos] ?? '';
  }
  rest(): string {
    return this.s.slice(this.pos);
  }
  skipSpace(): void {
    while (/[ \t]/.test(this.peek()) && !this.done()) this.pos++;
  }
  expect(ch: string): void {
    if (this.peek() !== ch) throw new Error(`expected ${JSON.stringify(ch)} at column ${this.pos + 1}, got ${JSON.stringify(this.peek())}`);
    this.pos++;
  }
  ident(): string {
    const m = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(this.rest());
    if (!m) throw new Error(`expected an identifier at column ${this.pos + 1}`);
    this.pos += m[0].length;
    return m[0];
  }
  quoted(): string {
    const q = this.peek();
    let end = this.pos + 1;
    if (q === '`') {
      end = this.s.indexOf('`', end);
      if (end < 0) throw new Error('unterminated raw string');
    } else {
      while (end < this.s.length && this.s[end] !== q) end += this.s[end] === '\\' ? 2 : 1;
      if (end >= this.s.length) throw new Error('unterminated quoted string');
    }
    const v = goUnquote(this.s.slice(this.pos, end + 1), true);
    if (v === undefined) throw new Error(`invalid quoted string ${this.s.slice(this.pos, end + 1)}`);
    this.pos = end + 1;
    return v;
  }
}

function parseMetric(p: Cursor): Labels {
  const out: Label[] = [];
  let name: string | undefined;
  if (/[a-zA-Z_:]/.test(p.peek())) name = p.ident();
  if (p.peek() === '{') {
    p.pos++;
    p.skipSpace();
    while (p.peek() !== '}') {
      if (p.done()) throw new Error('unterminated label set');
      const isQuoted = p.peek() === '"' || p.peek() === "'" || p.peek() === '`';
      const key = isQuoted ? p.quoted() : p.ident();
      p.skipSpace();
      if (p.peek() === '=') {
        p.pos++;
        p.skipSpace();
        if (!(p.peek() === '"' || p.peek() === "'" || p.peek() === '`')) throw new Error(`expected a quoted label value for ${key}`);
        out.push({ name: key, value: p.quoted() });
      } else if (isQuoted) {
        // `{"metric.name", a="b"}`: a lone quoted string is the metric name.
        if (name !== undefined) throw new Error('metric name given twice');
        name = key;
      } else {
        throw new Error(`expected "=" after label name ${key}`);
      }
      p.skipSpace();
      if (p.peek() === ',') {
        p.pos++;
        p.skipSpace();
      } else if (p.peek() !== '}') {
        throw new Error(`unexpected ${JSON.stringify(p.peek())} in label set, expected "," or "}"`);
      }
    }
    p.pos++;
  }
  if (name !== undefined) {
    const i = out.findIndex((l) => l.name === '__name__');
    if (i >= 0) out.splice(i, 1);
    out.push({ name: '__name__', value: name });
  }
  // labels.New: sorted; a repeated name keeps one value (the builder's last write).
  const byName = new Map<string, string>();
  for (const l of out) byName.set(l.name, l.value);
  return sortLabels([...byName].map(([n, v]) => ({ name: n, value: v })).filter((l) => l.value !== ''));
}

type Tok =
  { t: 'num'; v: number } | { t: 'stale' } | { t: 'blank' } | { t: 'times' } | { t: 'add' } | { t: 'sub' } | { t: 'hist'; text: string } | { t: 'space' };

function lexValues(s: string): Tok[] {
  const toks: Tok[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (c === ' ' || c === '\t') {
      while (s[i] === ' ' || s[i] === '\t') i++;
      toks.push({ t: 'space' });
    } else if (c === '{' && s[i + 1] === '{') {
      const end = s.indexOf('}}', i + 2);
      if (end < 0) throw new Error('unterminated native histogram {{...}}');
      toks.push({ t: 'hist', text: s.slice(i, end + 2) });
      i = end + 2;
    } else if (c === '+') {
      toks.push({ t: 'add' });
      i++;
    } else if (c === '-') {
      toks.push({ t: 'sub' });
      i++;
    } else if (c === 'x') {
      toks.push({ t: 'times' });
      i++;
    } else if (c === '_') {
      toks.push({ t: 'blank' });
      i++;
    } else if (/[0-9.]/.test(c)) {
      // No hex here: `0x3` is 0 repeated (Prometheus disables hex in series descriptions).
      const m = /^(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?/.exec(s.slice(i));
      if (!m) throw new Error(`bad number at ${JSON.stringify(s.slice(i))}`);
      i += m[0].length;
      if (i < s.length && /[a-zA-Z0-9_]/.test(s[i]) && s[i] !== 'x') throw new Error(`bad number ${JSON.stringify(m[0] + s[i])}`);
      toks.push({ t: 'num', v: Number(m[0]) });
    } else if (/[a-zA-Z]/.test(c)) {
      const m = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(s.slice(i))!;
      // `x` is the repetition token, so an identifier ends before `x<digits>` (`Infx3`).
      let word = m[0];
      const rep = /x\d+$/.exec(word);
      if (rep && word.length > rep[0].length) word = word.slice(0, rep.index);
      i += word.length;
      const lw = word.toLowerCase();
      if (lw === 'inf' || lw === 'infinity') toks.push({ t: 'num', v: Infinity });
      else if (lw === 'nan') toks.push({ t: 'num', v: NaN });
      else if (word === 'stale') toks.push({ t: 'stale' });
      else throw new Error(`unexpected ${JSON.stringify(word)} in series values, expected number or "stale"`);
    } else {
      throw new Error(`unexpected character in series sequence: ${JSON.stringify(c)}`);
    }
  }
  return toks;
}

/** Expands a value sequence: `1+2x3` is 1 3 5 7, `1x3` is 1 1 1 1, `_x3` is three gaps. */
export function parseValueSequence(s: string): SeqValue[] {
  const toks = lexValues(s);
  const out: SeqValue[] = [];
  let k = 0;
  const peek = () => toks[k];
  const uint = (): number => {
    const t = toks[k++];
    if (!t || t.t !== 'num' || !Number.isInteger(t.v) || t.v < 0) throw new Error('invalid repetition in series values');
    return t.v;
  };
  const number = (): number | 'stale' => {
    const t = toks[k++];
    if (t?.t === 'num') return t.v;
    if (t?.t === 'stale') return 'stale';
    if (t?.t === 'add' || t?.t === 'sub') {
      const n = toks[k++];
      if (n?.t !== 'num') throw new Error('expected a number after a sign');
      return t.t === 'sub' ? -n.v : n.v;
    }
    throw new Error('expected a number, "stale", "_" or a histogram');
  };
  const floatVal = (v: number | 'stale'): SeqValue => (v === 'stale' ? { kind: 'stale' } : { kind: 'float', value: v });

  while (k < toks.length) {
    const t = peek();
    if (t.t === 'space') {
      k++;
      continue;
    }
    if (t.t === 'blank') {
      k++;
      if (peek()?.t === 'times') {
        k++;
        const n = uint();
        for (let i = 0; i < n; i++) out.push({ kind: 'omitted' });
      } else out.push({ kind: 'omitted' });
    } else if (t.t === 'hist') {
      k++;
      const next = peek();
      const base = parseHistogramNotation(t.text);
      if (next?.t === 'times') {
        k++;
        const n = uint();
        for (let i = 0; i <= n; i++) out.push({ kind: 'histogram', text: t.text, h: base.copy() });
      } else if ((next?.t === 'add' || next?.t === 'sub') && toks[k + 1]?.t === 'hist') {
        const inc = toks[k + 1] as { t: 'hist'; text: string };
        const incH = parseHistogramNotation(inc.text);
        k += 2;
        if (peek()?.t !== 'times') throw new Error('expected "x" after a histogram increment');
        k++;
        const n = uint();
        const sign = next.t === 'add' ? '+' : '-';
        // Each value is the previous one plus (or minus) the increment, as Prometheus' histogramsSeries.
        let cur = base;
        for (let i = 0; i <= n; i++) {
          if (i > 0) {
            if (cur.schema > incH.schema && !cur.usesCustomBuckets())
              throw new Error(`error combining histograms: cannot merge from schema ${cur.schema} to ${incH.schema}`);
            cur = cur.copy();
            if (sign === '+') cur.add(incH);
            else cur.sub(incH);
          }
          out.push({ kind: 'histogram', text: i === 0 ? t.text : `${t.text}${sign}${i}*${inc.text}`, h: cur });
        }
      } else out.push({ kind: 'histogram', text: t.text, h: base });
    } else {
      let v = number();
      const next = peek();
      if (next?.t === 'times') {
        k++;
        const n = uint();
        for (let i = 0; i <= n; i++) out.push(floatVal(v));
      } else if ((next?.t === 'add' || next?.t === 'sub') && v !== 'stale') {
        const inc = number();
        if (inc === 'stale') throw new Error('"stale" cannot be an increment');
        if (peek()?.t !== 'times') throw new Error('expected "x<count>" after an increment');
        k++;
        const n = uint();
        for (let i = 0; i <= n; i++) {
          out.push({ kind: 'float', value: v });
          v += inc;
        }
      } else {
        out.push(floatVal(v));
      }
    }
    const after = peek();
    if (after && after.t !== 'space') throw new Error('expected a space between series values');
  }
  return out;
}

// --- Strings -------------------------------------------------------------------

/**
 * Go's strconv.Unquote for "..." and `...` (and '...' when `anyLength`, as
 * PromQL label values allow); undefined when malformed.
 */
export function goUnquote(s: string, anyLength = false): string | undefined {
  if (s.length < 2) return undefined;
  const q = s[0];
  if (s[s.length - 1] !== q) return undefined;
  const body = s.slice(1, -1);
  if (q === '`') return body.includes('`') ? undefined : body.replace(/\r/g, '');
  if (q !== '"' && q !== "'") return undefined;
  let out = '';
  const bytes: number[] = [];
  const flush = () => {
    if (bytes.length > 0) {
      out += decodeBytes(bytes);
      bytes.length = 0;
    }
  };
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === q) return undefined;
    if (c !== '\\') {
      flush();
      out += c;
      continue;
    }
    const e = body[++i];
    const simple: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\' };
    if (e in simple) {
      flush();
      out += simple[e];
    } else if (e === q) {
      flush();
      out += q;
    } else if (e === 'x') {
      const h = body.slice(i + 1, i + 3);
      if (!/^[0-9a-fA-F]{2}$/.test(h)) return undefined;
      bytes.push(parseInt(h, 16));
      i += 2;
    } else if (/[0-7]/.test(e)) {
      const o = body.slice(i, i + 3);
      if (!/^[0-7]{3}$/.test(o) || parseInt(o, 8) > 255) return undefined;
      bytes.push(parseInt(o, 8));
      i += 2;
    } else if (e === 'u' || e === 'U') {
      const n = e === 'u' ? 4 : 8;
      const h = body.slice(i + 1, i + 1 + n);
      if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(h)) return undefined;
      flush();
      out += String.fromCodePoint(parseInt(h, 16));
      i += n;
    } else {
      return undefined;
    }
  }
  flush();
  if (q === "'" && !anyLength && [...out].length !== 1) return undefined;
  return out;
}

/** Raw bytes from \x / octal escapes, as UTF-8 where valid, else one U+FFFD per bad byte (Go strings keep the bytes). */
function decodeBytes(bytes: number[]): string {
  return new TextDecoder('utf-8', { fatal: false }).decode(Uint8Array.from(bytes));
}

/** A stable key for a sorted label set. */
export function labelsKeyOf(labels: Labels): string {
  let key = '';
  for (const l of labels) key += l.name + '\xff' + l.value + '\xfe';
  return key;
}

/** `{a="b", __name__="x"}` as Prometheus prints a label set: `x{a="b"}`. */
export function formatLabels(labels: Labels): string {
  const name = labels.find((l) => l.name === '__name__')?.value;
  const rest = labels.filter((l) => l.name !== '__name__').map((l) => `${l.name}=${JSON.stringify(l.value)}`);
  return `${name ?? ''}{${rest.join(', ')}}`;
}
