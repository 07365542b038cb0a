// Bucket layouts of native histograms: spans as lists of bucket indices, their
// union, a histogram's counts moved onto a wider layout, and the counter-reset
// comparison Prometheus' appenders make (tsdb/chunkenc/histogram.go appendable).
// Counts here are absolute (the model's NativeHistogram), never deltas.

import type { HistogramSpan, NativeHistogram } from '@strata/model';
import { floatHi, floatLo, isStaleNaN } from './varbit.ts';

/** Bucket indices the spans cover, ascending. */
function bucketIndices(spans: readonly HistogramSpan[]): number[] {
  const out: number[] = [];
  let idx = 0;
  for (let s = 0; s < spans.length; s++) {
    idx += spans[s].offset;
    for (let k = 0; k < spans[s].length; k++) out.push(idx++);
  }
  return out;
}

/** The canonical spans of ascending indices (one span per run, offsets the gaps). */
export function spansFromIndices(idx: readonly number[]): HistogramSpan[] {
  const out: HistogramSpan[] = [];
  let next = 0;
  for (let i = 0; i < idx.length; i++) {
    if (out.length > 0 && idx[i] === next) out[out.length - 1].length++;
    else out.push({ offset: out.length === 0 ? idx[i] : idx[i] - next, length: 1 });
    next = idx[i] + 1;
  }
  return out;
}

function unionIndices(a: readonly number[], b: readonly number[]): number[] {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const x = i < a.length ? a[i] : Infinity;
    const y = j < b.length ? b[j] : Infinity;
    if (x <= y) {
      out.push(x);
      i++;
      if (x === y) j++;
    } else {
      out.push(y);
      j++;
    }
  }
  return out;
}

/** The counts of `buckets` (laid out by `from`) on the wider index list `to` (which covers `from`), zeros elsewhere. */
function expandCounts(buckets: readonly number[], from: readonly number[], to: readonly number[]): number[] {
  const out = new Array<number>(to.length).fill(0);
  let j = 0;
  for (let i = 0; i < from.length; i++) {
    while (to[j] !== from[i]) j++;
    out[j] = buckets[i];
  }
  return out;
}

export interface LayoutIndices {
  positive: number[];
  negative: number[];
}

export function layoutIndices(h: NativeHistogram): LayoutIndices {
  return { positive: bucketIndices(h.positiveSpans), negative: bucketIndices(h.negativeSpans) };
}

/** Chunk headers' counter-reset bits (the top two bits of the flags byte). */
export const HEADER_UNKNOWN = 0x00;
export const HEADER_NOT_RESET = 0x40;
export const HEADER_RESET = 0x80;
export const HEADER_GAUGE = 0xc0;

/** What appending h after `last` (the chunk's newest sample, on the chunk's layout) means. */
export type Appendability =
  | { ok: true; /** The union layout when h brings buckets the chunk lacks; null when the chunk's layout holds h. */ widen: LayoutIndices | null }
  | { ok: false; header: number };

function sameCustom(a: readonly number[] | undefined, b: readonly number[] | undefined): boolean {
  const x = a ?? [];
  const y = b ?? [];
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

/**
 * Whether h can join a chunk whose header is `header` and newest sample is
 * `last` (with its layout's indices `li`). Counter histograms need a new
 * chunk on a reset (count, zero count or any bucket going down, a bucket in
 * use disappearing, an explicit reset hint) and on a schema or zero
 * threshold change; gauges only on the latter. A stale marker always fits;
 * after one, only stale markers do.
 */
export function appendability(header: number, last: NativeHistogram, li: LayoutIndices, h: NativeHistogram): Appendability {
  const gauge = h.counterResetHint === 'gauge';
  if ((header === HEADER_GAUGE) !== gauge) return { ok: false, header: gauge ? HEADER_GAUGE : HEADER_UNKNOWN };
  if (!gauge && h.counterResetHint === 'reset') return { ok: false, header: HEADER_RESET };
  if (isStaleNaN(h.sum)) return { ok: true, widen: null };
  if (isStaleNaN(last.sum)) return { ok: false, header: gauge ? HEADER_GAUGE : HEADER_UNKNOWN };
  if (!gauge && h.count < last.count) return { ok: false, header: HEADER_RESET };
  if (h.schema !== last.schema || h.zeroThreshold !== last.zeroThreshold) return { ok: false, header: gauge ? HEADER_GAUGE : HEADER_UNKNOWN };
  if (h.schema === -53 && !sameCustom(h.customValues, last.customValues)) return { ok: false, header: gauge ? HEADER_GAUGE : HEADER_RESET };
  if (!gauge && h.zeroCount < last.zeroCount) return { ok: false, header: HEADER_RESET };
  const hi = layoutIndices(h);
  let widen = false;
  for (const side of ['positive', 'negative'] as const) {
    const a = li[side];
    const b = hi[side];
    const av = side === 'positive' ? last.positiveBuckets : last.negativeBuckets;
    const bv = side === 'positive' ? h.positiveBuckets : h.negativeBuckets;
    let i = 0;
    let j = 0;
    while (i < a.length || j < b.length) {
      const x = i < a.length ? a[i] : Infinity;
      const y = j < b.length ? b[j] : Infinity;
      if (x === y) {
        if (!gauge && av[i] > bv[j]) return { ok: false, header: HEADER_RESET };
        i++;
        j++;
      } else if (x < y) {
        // A bucket of the chunk that h lacks: fine while it is empty.
        if (!gauge && av[i] !== 0) return { ok: false, header: HEADER_RESET };
        i++;
      } else {
        widen = true;
        j++;
      }
    }
  }
  if (!widen) return { ok: true, widen: null };
  return { ok: true, widen: { positive: unionIndices(li.positive, hi.positive), negative: unionIndices(li.negative, hi.negative) } };
}

/** h with its buckets moved onto the layout (which must cover h's buckets). */
export function onLayout(h: NativeHistogram, li: LayoutIndices): NativeHistogram {
  return {
    ...h,
    positiveSpans: spansFromIndices(li.positive),
    negativeSpans: spansFromIndices(li.negative),
    positiveBuckets: expandCounts(h.positiveBuckets, bucketIndices(h.positiveSpans), li.positive),
    negativeBuckets: expandCounts(h.negativeBuckets, bucketIndices(h.negativeSpans), li.negative),
  };
}

function sameFloat(a: number, b: number): boolean {
  return floatHi(a) === floatHi(b) && floatLo(a) === floatLo(b);
}

function bucketMap(spans: readonly HistogramSpan[], counts: readonly number[]): Map<number, number> {
  const m = new Map<number, number>();
  bucketIndices(spans).forEach((idx, i) => {
    if (counts[i] !== 0) m.set(idx, counts[i]);
  });
  return m;
}

function sameBuckets(as: readonly HistogramSpan[], av: readonly number[], bs: readonly HistogramSpan[], bv: readonly number[]): boolean {
  const a = bucketMap(as, av);
  const b = bucketMap(bs, bv);
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}

/**
 * The same histogram (for idempotent replays): every field equal, the sum bit
 * for bit; an absent bucket and an empty one are the same bucket.
 */
export function sameHistogram(a: NativeHistogram, b: NativeHistogram): boolean {
  const as = isStaleNaN(a.sum);
  if (as || isStaleNaN(b.sum)) return as && isStaleNaN(b.sum);
  return (
    a.schema === b.schema &&
    a.zeroThreshold === b.zeroThreshold &&
    a.count === b.count &&
    a.zeroCount === b.zeroCount &&
    sameFloat(a.sum, b.sum) &&
    sameCustom(a.customValues, b.customValues) &&
    sameBuckets(a.positiveSpans, a.positiveBuckets, b.positiveSpans, b.positiveBuckets) &&
    sameBuckets(a.negativeSpans, a.negativeBuckets, b.negativeSpans, b.negativeBuckets)
  );
}
