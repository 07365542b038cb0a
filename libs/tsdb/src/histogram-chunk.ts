// Native histogram chunks, in Prometheus' formats (tsdb/docs/format/chunks.md):
// encoding 2 (integer counts: varbit dod of counts and of bucket deltas) and
// encoding 3 (float counts: XOR of every field). Header: uint16 sample count,
// a flags byte whose top two bits say why the chunk was cut (unknown, counter
// reset, not a reset, gauge), then the layout written once (zero threshold,
// schema, spans, custom bounds for schema -53). Stale markers are a stale NaN
// sum with no buckets. The encoder widens its layout by re-encoding the chunk
// when a sample brings new buckets, as Prometheus' appender recodes.

import type { HistogramSpan, NativeHistogram } from '@strata/model';
import { BitReader, BitWriter } from './bit-stream.ts';
import {
  HEADER_GAUGE,
  HEADER_UNKNOWN,
  appendability,
  layoutIndices,
  onLayout,
  type Appendability,
  type LayoutIndices,
} from './histogram-layout.ts';
import {
  STALE_NAN,
  STALE_NAN_HI,
  STALE_NAN_LO,
  floatFromBits,
  floatHi,
  floatLo,
  isStaleNaN,
  newXorState,
  putCustomBound,
  putFloatBits,
  putVarbitInt,
  putVarbitUint,
  putZeroThreshold,
  readCustomBound,
  readVarbitInt,
  readVarbitUint,
  readZeroThreshold,
  xorRead,
  xorWrite,
  type XorState,
} from './varbit.ts';
import { FLOAT_HISTOGRAM_ENCODING, HISTOGRAM_ENCODING } from './chunk-encoding.ts';

const HEADER_BYTES = 3;
const HEADER_MASK = 0xc0;
const CUSTOM_BUCKETS_SCHEMA = -53;

/** A histogram chunk's sample count (its first two bytes, as for XOR chunks). */
export function histogramChunkNumSamples(chunk: Uint8Array): number {
  if (chunk.length < HEADER_BYTES) throw new RangeError('histogram chunk shorter than its 3-byte header');
  return (chunk[0] << 8) | chunk[1];
}

/** The counter-reset bits of a histogram chunk's flags byte. */
export function histogramChunkHeader(chunk: Uint8Array): number {
  return chunk[2] & HEADER_MASK;
}

function staleHistogram(): NativeHistogram {
  return {
    counterResetHint: 'unknown',
    schema: 0,
    zeroThreshold: 0,
    zeroCount: 0,
    count: 0,
    sum: STALE_NAN,
    positiveSpans: [],
    negativeSpans: [],
    positiveBuckets: [],
    negativeBuckets: [],
  };
}

function deltasOf(counts: readonly number[]): number[] {
  const out = new Array<number>(counts.length);
  let prev = 0;
  for (let i = 0; i < counts.length; i++) {
    out[i] = counts[i] - prev;
    prev = counts[i];
  }
  return out;
}

function putSpans(w: BitWriter, spans: readonly HistogramSpan[]): void {
  putVarbitUint(w, spans.length);
  for (const s of spans) {
    putVarbitUint(w, s.length);
    putVarbitInt(w, s.offset);
  }
}

function readSpans(r: BitReader): HistogramSpan[] {
  const n = readVarbitUint(r);
  if (n > 1 << 20) throw new RangeError(`histogram chunk corrupt: ${n} spans`);
  const out: HistogramSpan[] = [];
  for (let i = 0; i < n; i++) {
    const length = readVarbitUint(r);
    out.push({ offset: readVarbitInt(r), length });
  }
  return out;
}

function countOf(spans: readonly HistogramSpan[]): number {
  let n = 0;
  for (const s of spans) n += s.length;
  return n;
}

function checkInteger(h: NativeHistogram): void {
  const ok = (x: number) => Number.isSafeInteger(x) && x >= 0;
  if (!ok(h.count) || !ok(h.zeroCount) || !h.positiveBuckets.every(ok) || !h.negativeBuckets.every(ok)) {
    throw new RangeError('an integer histogram chunk takes only non-negative integer counts');
  }
}

/**
 * One open histogram chunk. `append` takes a sample on the chunk's layout;
 * `tryAppend` decides as Prometheus' appender does (new chunk or widened
 * layout) and reports a needed cut instead of appending.
 */
export class HistogramChunkEncoder {
  private w = new BitWriter(128, HEADER_BYTES);
  private n = 0;
  private t = 0;
  private tDelta = 0;
  // Integer chunks: counts as dod, bucket deltas (Prometheus' in-memory form) as dod.
  private cnt = 0;
  private zCnt = 0;
  private cntDelta = 0;
  private zCntDelta = 0;
  private pDeltas: number[] = [];
  private nDeltas: number[] = [];
  private pDod: number[] = [];
  private nDod: number[] = [];
  private sumX: XorState = newXorState();
  // Float chunks: every field XORed against its previous value.
  private cntX: XorState = newXorState();
  private zCntX: XorState = newXorState();
  private pX: XorState[] = [];
  private nX: XorState[] = [];
  /** The newest sample as appended (on the chunk's layout). */
  private lastH: NativeHistogram | null = null;
  private layout: LayoutIndices | null = null;

  readonly encoding: typeof HISTOGRAM_ENCODING | typeof FLOAT_HISTOGRAM_ENCODING;
  readonly header: number;

  constructor(
    encoding: typeof HISTOGRAM_ENCODING | typeof FLOAT_HISTOGRAM_ENCODING,
    /** Counter-reset bits of the flags byte. */
    header = HEADER_UNKNOWN,
  ) {
    this.encoding = encoding;
    this.header = header;
  }

  get numSamples(): number {
    return this.n;
  }

  get lastTimestamp(): number {
    return this.t;
  }

  /** The newest sample on the chunk's layout (null when empty). */
  get last(): NativeHistogram | null {
    return this.lastH;
  }

  /** Whether h fits this chunk (see appendability); an empty chunk takes anything. */
  appendability(h: NativeHistogram): Appendability {
    if (this.n === 0 || this.lastH === null || this.layout === null) return { ok: true, widen: null };
    return appendability(this.header, this.lastH, this.layout, h);
  }

  /** Appends when h fits (re-encoding the chunk on a wider layout if needed); otherwise returns the header the next chunk gets. */
  tryAppend(t: number, h: NativeHistogram): { ok: true } | { ok: false; header: number } {
    const a = this.appendability(h);
    if (!a.ok) return a;
    if (this.n > 0 && !isStaleNaN(h.sum)) {
      if (a.widen !== null) this.recode(a.widen);
      h = onLayout(h, this.layout as LayoutIndices);
    }
    this.append(t, h);
    return { ok: true };
  }

  /** Appends h, which must be on the chunk's layout (or be the first sample, or stale); t must exceed the last timestamp. */
  append(t: number, h: NativeHistogram): void {
    if (this.n > 0 && !(t > this.t)) throw new RangeError(`histogram chunk: timestamp ${t} not after ${this.t}`);
    if (this.n === 0xffff) throw new RangeError('histogram chunk is full (65535 samples)');
    const stale = isStaleNaN(h.sum);
    if (stale) h = staleHistogram();
    const float = this.encoding === FLOAT_HISTOGRAM_ENCODING;
    if (!float && !stale) checkInteger(h);
    const w = this.w;
    const sumHi = stale ? STALE_NAN_HI : floatHi(h.sum);
    const sumLo = stale ? STALE_NAN_LO : floatLo(h.sum);
    if (this.n === 0) {
      putZeroThreshold(w, h.zeroThreshold);
      putVarbitInt(w, h.schema);
      putSpans(w, h.positiveSpans);
      putSpans(w, h.negativeSpans);
      if (h.schema === CUSTOM_BUCKETS_SCHEMA) {
        const cv = h.customValues ?? [];
        putVarbitUint(w, cv.length);
        for (const v of cv) putCustomBound(w, v);
      }
      this.layout = layoutIndices(h);
      const np = countOf(h.positiveSpans);
      const nn = countOf(h.negativeSpans);
      if (h.positiveBuckets.length !== np || h.negativeBuckets.length !== nn) {
        throw new RangeError(`histogram has ${h.positiveBuckets.length}/${h.negativeBuckets.length} buckets for spans of ${np}/${nn}`);
      }
      putVarbitInt(w, t);
      this.tDelta = 0;
      if (float) {
        putFloatBits(w, h.count);
        putFloatBits(w, h.zeroCount);
        w.writeBits(sumHi, 32);
        w.writeBits(sumLo, 32);
        this.cntX = newXorState(floatHi(h.count), floatLo(h.count));
        this.zCntX = newXorState(floatHi(h.zeroCount), floatLo(h.zeroCount));
        this.pX = h.positiveBuckets.map((v) => newXorState(floatHi(v), floatLo(v)));
        this.nX = h.negativeBuckets.map((v) => newXorState(floatHi(v), floatLo(v)));
        for (const v of h.positiveBuckets) putFloatBits(w, v);
        for (const v of h.negativeBuckets) putFloatBits(w, v);
      } else {
        putVarbitUint(w, h.count);
        putVarbitUint(w, h.zeroCount);
        w.writeBits(sumHi, 32);
        w.writeBits(sumLo, 32);
        this.cnt = h.count;
        this.zCnt = h.zeroCount;
        this.cntDelta = 0;
        this.zCntDelta = 0;
        this.pDeltas = deltasOf(h.positiveBuckets);
        this.nDeltas = deltasOf(h.negativeBuckets);
        this.pDod = new Array<number>(this.pDeltas.length).fill(0);
        this.nDod = new Array<number>(this.nDeltas.length).fill(0);
        for (const d of this.pDeltas) putVarbitInt(w, d);
        for (const d of this.nDeltas) putVarbitInt(w, d);
      }
      this.sumX = newXorState(sumHi, sumLo);
    } else {
      const tDelta = t - this.t;
      putVarbitInt(w, tDelta - this.tDelta);
      this.tDelta = tDelta;
      if (float) {
        xorWrite(w, this.cntX, floatHi(h.count), floatLo(h.count));
        xorWrite(w, this.zCntX, floatHi(h.zeroCount), floatLo(h.zeroCount));
        xorWrite(w, this.sumX, sumHi, sumLo);
        if (!stale) {
          this.checkLayout(h);
          h.positiveBuckets.forEach((v, i) => xorWrite(w, this.pX[i], floatHi(v), floatLo(v)));
          h.negativeBuckets.forEach((v, i) => xorWrite(w, this.nX[i], floatHi(v), floatLo(v)));
        }
      } else {
        const cntDelta = h.count - this.cnt;
        const zCntDelta = h.zeroCount - this.zCnt;
        // A stale marker writes zero count dods (Prometheus does the same).
        putVarbitInt(w, stale ? 0 : cntDelta - this.cntDelta);
        putVarbitInt(w, stale ? 0 : zCntDelta - this.zCntDelta);
        this.cnt = h.count;
        this.zCnt = h.zeroCount;
        this.cntDelta = cntDelta;
        this.zCntDelta = zCntDelta;
        xorWrite(w, this.sumX, sumHi, sumLo);
        if (!stale) {
          this.checkLayout(h);
          this.putBucketDods(deltasOf(h.positiveBuckets), this.pDeltas, this.pDod);
          this.putBucketDods(deltasOf(h.negativeBuckets), this.nDeltas, this.nDod);
        }
      }
    }
    this.t = t;
    this.n++;
    this.lastH = h;
  }

  /** The chunk bytes (a view valid until the next append). */
  bytes(): Uint8Array {
    const b = this.w.bytes();
    b[0] = this.n >>> 8;
    b[1] = this.n & 0xff;
    b[2] = this.header;
    return b;
  }

  private checkLayout(h: NativeHistogram): void {
    const li = this.layout as LayoutIndices;
    if (h.positiveBuckets.length !== li.positive.length || h.negativeBuckets.length !== li.negative.length) {
      throw new RangeError('histogram chunk: sample is not on the chunk layout');
    }
  }

  private putBucketDods(deltas: number[], prev: number[], dod: number[]): void {
    for (let i = 0; i < deltas.length; i++) {
      const d = deltas[i] - prev[i];
      putVarbitInt(this.w, d - dod[i]);
      dod[i] = d;
      prev[i] = deltas[i];
    }
  }

  /** Re-encodes every sample so far on the wider layout. */
  private recode(li: LayoutIndices): void {
    const { timestamps, histograms } = decodeHistogramChunk(this.bytes().slice(), this.encoding);
    this.w = new BitWriter(Math.max(128, this.w.byteLength * 2), HEADER_BYTES);
    this.n = 0;
    for (let i = 0; i < timestamps.length; i++) {
      const h = histograms[i];
      this.append(timestamps[i], isStaleNaN(h.sum) ? h : onLayout(h, li));
    }
    this.layout = li;
  }
}

export interface DecodedHistograms {
  timestamps: number[];
  histograms: NativeHistogram[];
}

/**
 * Decodes the samples with mint <= t <= maxt of a histogram chunk (encoding 2
 * or 3) into the model's absolute-count histograms. Samples of one chunk share
 * their spans and custom bounds arrays (never mutate them). Hints: gauge for a
 * gauge chunk, not_reset after a chunk's first sample, unknown on the first
 * (the previous chunk may be gone, as Prometheus reasons).
 */
export function decodeHistogramChunk(chunk: Uint8Array, encoding: number, mint = -Infinity, maxt = Infinity): DecodedHistograms {
  const total = histogramChunkNumSamples(chunk);
  const header = histogramChunkHeader(chunk);
  const float = encoding === FLOAT_HISTOGRAM_ENCODING;
  if (!float && encoding !== HISTOGRAM_ENCODING) throw new RangeError(`not a histogram chunk encoding: ${encoding}`);
  const out: DecodedHistograms = { timestamps: [], histograms: [] };
  if (total === 0) return out;
  const r = new BitReader(chunk, HEADER_BYTES);
  const zeroThreshold = readZeroThreshold(r);
  const schema = readVarbitInt(r);
  if (!((schema >= -4 && schema <= 8) || schema === CUSTOM_BUCKETS_SCHEMA)) throw new RangeError(`histogram chunk: unknown schema ${schema}`);
  const positiveSpans = readSpans(r);
  const negativeSpans = readSpans(r);
  let customValues: number[] | undefined;
  if (schema === CUSTOM_BUCKETS_SCHEMA) {
    const n = readVarbitUint(r);
    customValues = [];
    for (let i = 0; i < n; i++) customValues.push(readCustomBound(r));
  }
  const np = countOf(positiveSpans);
  const nn = countOf(negativeSpans);
  if (np + nn > chunk.length * 8) throw new RangeError('histogram chunk corrupt: more buckets than bits');

  let t = readVarbitInt(r);
  let tDelta = 0;
  // Integer state.
  let cnt = 0;
  let zCnt = 0;
  let cntDelta = 0;
  let zCntDelta = 0;
  const pD = new Array<number>(np).fill(0);
  const nD = new Array<number>(nn).fill(0);
  const pDod = new Array<number>(np).fill(0);
  const nDod = new Array<number>(nn).fill(0);
  // Float state.
  const cntX = newXorState();
  const zCntX = newXorState();
  const sumX = newXorState();
  const pX = Array.from({ length: np }, () => newXorState());
  const nX = Array.from({ length: nn }, () => newXorState());

  for (let i = 0; i < total; i++) {
    let stale: boolean;
    if (i === 0) {
      if (float) {
        setBits(cntX, r);
        setBits(zCntX, r);
        setBits(sumX, r);
      } else {
        cnt = readVarbitUint(r);
        zCnt = readVarbitUint(r);
        setBits(sumX, r);
      }
      stale = isStaleNaN(floatFromBits(sumX.hi, sumX.lo));
      // A first stale sample wrote an empty layout, so there are no buckets to read.
      for (let k = 0; k < np; k++) {
        if (float) setBits(pX[k], r);
        else pD[k] = readVarbitInt(r);
      }
      for (let k = 0; k < nn; k++) {
        if (float) setBits(nX[k], r);
        else nD[k] = readVarbitInt(r);
      }
    } else {
      tDelta += readVarbitInt(r);
      t += tDelta;
      if (float) {
        xorRead(r, cntX);
        xorRead(r, zCntX);
        xorRead(r, sumX);
      } else {
        cntDelta += readVarbitInt(r);
        cnt += cntDelta;
        zCntDelta += readVarbitInt(r);
        zCnt += zCntDelta;
        xorRead(r, sumX);
      }
      stale = isStaleNaN(floatFromBits(sumX.hi, sumX.lo));
      if (!stale) {
        for (let k = 0; k < np; k++) {
          if (float) xorRead(r, pX[k]);
          else {
            pDod[k] += readVarbitInt(r);
            pD[k] += pDod[k];
          }
        }
        for (let k = 0; k < nn; k++) {
          if (float) xorRead(r, nX[k]);
          else {
            nDod[k] += readVarbitInt(r);
            nD[k] += nDod[k];
          }
        }
      }
    }
    if (t > maxt) break;
    if (t < mint) continue;
    out.timestamps.push(t);
    if (stale) {
      out.histograms.push(staleHistogram());
      continue;
    }
    out.histograms.push({
      counterResetHint: header === HEADER_GAUGE ? 'gauge' : i > 0 ? 'not_reset' : 'unknown',
      schema,
      zeroThreshold,
      zeroCount: float ? floatFromBits(zCntX.hi, zCntX.lo) : zCnt,
      count: float ? floatFromBits(cntX.hi, cntX.lo) : cnt,
      sum: floatFromBits(sumX.hi, sumX.lo),
      positiveSpans,
      negativeSpans,
      positiveBuckets: float ? pX.map((s) => floatFromBits(s.hi, s.lo)) : cumulative(pD),
      negativeBuckets: float ? nX.map((s) => floatFromBits(s.hi, s.lo)) : cumulative(nD),
      ...(customValues !== undefined ? { customValues } : {}),
    });
  }
  return out;
}

function setBits(s: XorState, r: BitReader): void {
  s.hi = r.readBits(32);
  s.lo = r.readBits(32);
}

function cumulative(deltas: readonly number[]): number[] {
  const out = new Array<number>(deltas.length);
  let c = 0;
  for (let i = 0; i < deltas.length; i++) out[i] = c += deltas[i];
  return out;
}

