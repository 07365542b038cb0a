// Bucket arithmetic of native histograms: exponential bucket bounds per schema,
// custom (NHCB) bounds, spans <-> (index, count) lists, resolution reduction and
// compaction. Mirrors Prometheus' model/histogram generic code; works on plain
// arrays and never mutates its inputs.

import { SCHEMA_8_FRACTIONS } from './exponential-bounds.ts';

/** A run of `length` consecutive buckets, `offset` buckets after the previous run (or from index 0). */
export interface Span {
  offset: number;
  length: number;
}

/** One bucket of a histogram side, by its index within the schema. */
export interface IndexedBucket {
  index: number;
  count: number;
}

export const CUSTOM_BUCKETS_SCHEMA = -53;

export function isCustomBucketsSchema(schema: number): boolean {
  return schema === CUSTOM_BUCKETS_SCHEMA;
}

export function isExponentialSchema(schema: number): boolean {
  return schema >= -4 && schema <= 8;
}

/** frac * 2^exp without intermediate overflow or underflow (Go's math.Ldexp). */
function ldexp(frac: number, exp: number): number {
  if (exp > 1023) return frac * 2 ** 1023 * 2 ** (exp - 1023);
  if (exp < -1022) return frac * 2 ** -1022 * 2 ** (exp + 1022);
  return frac * 2 ** exp;
}

/** Fractions in [0.5, 1) of the bucket bounds of schemas 0..8 (Prometheus' exponentialBounds). */
const EXPONENTIAL_FRACTIONS: number[][] = Array.from({ length: 9 }, (_, schema) =>
  Array.from({ length: 1 << schema }, (_, j) => SCHEMA_8_FRACTIONS[j << (8 - schema)]),
);

/** The upper bound of bucket `idx` of an exponential schema (Prometheus' getBoundExponential). */
export function exponentialBound(idx: number, schema: number): number {
  if (schema < 0) {
    const exp = idx * 2 ** -schema;
    if (exp === 1024) return Number.MAX_VALUE; // The last bucket before the ±Inf bucket.
    return ldexp(1, exp);
  }
  const fracIdx = ((idx % (1 << schema)) + (1 << schema)) % (1 << schema);
  const frac = EXPONENTIAL_FRACTIONS[schema][fracIdx];
  const exp = Math.floor(idx / (1 << schema)) + 1;
  if (frac === 0.5 && exp === 1025) return Number.MAX_VALUE;
  return ldexp(frac, exp);
}

/** The upper bound of bucket `idx`: exponential, or custom values (-Inf below, +Inf above). */
export function bucketBound(idx: number, schema: number, customValues: readonly number[] | undefined): number {
  if (isCustomBucketsSchema(schema)) {
    const cv = customValues ?? [];
    if (idx < 0) return -Infinity;
    if (idx >= cv.length) return Infinity;
    return cv[idx];
  }
  return exponentialBound(idx, schema);
}

/** The (index, count) pairs spans and buckets describe, in index order. */
export function expandBuckets(spans: readonly Span[], buckets: readonly number[]): IndexedBucket[] {
  const out: IndexedBucket[] = [];
  let idx = 0;
  let b = 0;
  for (let s = 0; s < spans.length; s++) {
    idx += spans[s].offset;
    for (let j = 0; j < spans[s].length; j++) {
      if (b >= buckets.length) return out;
      out.push({ index: idx, count: buckets[b++] });
      idx++;
    }
  }
  return out;
}

/**
 * Spans and buckets for (index, count) pairs in index order. Gaps of at most
 * maxEmpty buckets are filled with zero buckets rather than starting a new span.
 */
export function collapseBuckets(pairs: readonly IndexedBucket[], maxEmpty = 0): { spans: Span[]; buckets: number[] } {
  const spans: Span[] = [];
  const buckets: number[] = [];
  let next = 0; // Index right after the last bucket written.
  for (const p of pairs) {
    if (spans.length > 0 && p.index - next <= maxEmpty) {
      for (let i = next; i < p.index; i++) buckets.push(0);
      spans[spans.length - 1].length += p.index - next + 1;
    } else {
      spans.push({ offset: spans.length === 0 ? p.index : p.index - next, length: 1 });
    }
    buckets.push(p.count);
    next = p.index + 1;
  }
  return { spans, buckets };
}

/**
 * Compact: drops empty buckets, then joins runs at most maxEmpty apart (and
 * splits at longer runs of empty buckets).
 */
export function compactBuckets(spans: readonly Span[], buckets: readonly number[], maxEmpty: number): { spans: Span[]; buckets: number[] } {
  return collapseBuckets(
    expandBuckets(spans, buckets).filter((b) => b.count !== 0),
    maxEmpty,
  );
}

/** The bucket index in targetSchema that bucket `idx` of originSchema falls into. */
export function targetIndex(idx: number, originSchema: number, targetSchema: number): number {
  return Math.floor((idx - 1) / 2 ** (originSchema - targetSchema)) + 1;
}

/** Buckets merged into a lower-resolution schema. */
export function reduceResolution(pairs: readonly IndexedBucket[], originSchema: number, targetSchema: number): IndexedBucket[] {
  if (originSchema === targetSchema) return pairs.map((p) => ({ ...p }));
  const out: IndexedBucket[] = [];
  for (const p of pairs) {
    const idx = targetIndex(p.index, originSchema, targetSchema);
    const last = out[out.length - 1];
    if (last && last.index === idx) last.count += p.count;
    else out.push({ index: idx, count: p.count });
  }
  return out;
}

/** Whether two span lists describe the same bucket layout (empty spans and zero offsets aside). */
export function spansMatch(a: readonly Span[], b: readonly Span[]): boolean {
  const indices = (spans: readonly Span[]) => {
    const out: number[] = [];
    let idx = 0;
    for (const s of spans) {
      idx += s.offset;
      for (let j = 0; j < s.length; j++) out.push(idx++);
    }
    return out;
  };
  const ia = indices(a);
  const ib = indices(b);
  return ia.length === ib.length && ia.every((x, i) => x === ib[i]);
}

export function customBoundsMatch(a: readonly number[] | undefined, b: readonly number[] | undefined): boolean {
  const x = a ?? [];
  const y = b ?? [];
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

/** The custom bounds both lists have. */
export function intersectCustomBounds(a: readonly number[], b: readonly number[]): number[] {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push(a[i]);
      i++;
      j++;
    } else if (a[i] < b[j]) i++;
    else j++;
  }
  return out;
}

/** Custom buckets mapped onto a coarser set of bounds (each into the first target bound >= its own). */
export function mapCustomBuckets(pairs: readonly IndexedBucket[], bounds: readonly number[], target: readonly number[]): number[] {
  const out = new Array<number>(target.length + 1).fill(0);
  let t = 0;
  for (const p of pairs) {
    let idx = target.length; // +Inf bucket.
    if (p.index < bounds.length) {
      const bound = bounds[p.index];
      while (t < target.length && target[t] < bound) t++;
      if (t < target.length) idx = t;
    }
    out[idx] += p.count;
  }
  return out;
}
