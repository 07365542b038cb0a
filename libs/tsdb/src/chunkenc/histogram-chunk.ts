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
import { HEADER_GAUGE, HEADER_UNKNOWN, appendability, layoutIndices, onLayout, type Appendability, type LayoutIndices } from './histogram-layout.ts';
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
    const sumHi = stale ? STALE_NAN_HI : floatHi(h.sum);
    const sumLo = stale ? STALE_NAN_LO : floatLo(h.sum);
    if (this.n === 0) {
      this.putLayout(h);
      putVarbitInt(this.w, t);
      this.tDelta = 0;
      if (float) this.putFirstFloat(h, sumHi, sumLo);
      else this.putFirstInteger(h, sumHi, sumLo);
      this.sumX = newXorState(sumHi, sumLo);
    } else {
      const tDelta = t - this.t;
      putVarbitInt(this.w, tDelta - this.tDelta);
      this.tDelta = tDelta;
      if (float) this.putNextFloat(h, stale, sumHi, sumLo);
      else this.putNextInteger(h, stale, sumHi, sumLo);
    }
    this.t = t;
    this.n++;
    this.lastH = h;
  }

  /** The layout the first sample writes once: zero threshold, schema, spans, custom bounds. */
  private putLayout(h: NativeHistogram): void {
    const w = this.w;
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
  }

  /** A float chunk's first sample: every field's bits, each the start of its XOR state. */
  private putFirstFloat(h: NativeHistogram, sumHi: number, sumLo: number): void {
    const w = this.w;
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
  }

  /** An integer chunk's first sample: the counts, the sum's bits and the buckets as deltas. */
  private putFirstInteger(h: NativeHistogram, sumHi: number, sumLo: number): void {
    const w = this.w;
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

  /** A float chunk's later sample: every field XORed against its previous value (a stale marker writes no buckets). */
  private putNextFloat(h: NativeHistogram, stale: boolean, sumHi: number, sumLo: number): void {
    const w = this.w;
    xorWrite(w, this.cntX, floatHi(h.count), floatLo(h.count));
    xorWrite(w, this.zCntX, floatHi(h.zeroCount), floatLo(h.zeroCount));
    xorWrite(w, this.sumX, sumHi, sumLo);
    if (!stale) {
      this.checkLayout(h);
      h.positiveBuckets.forEach((v, i) => xorWrite(w, this.pX[i], floatHi(v), floatLo(v)));
      h.negativeBuckets.forEach((v, i) => xorWrite(w, this.nX[i], floatHi(v), floatLo(v)));
    }
  }

  /** An integer chunk's later sample: counts and bucket deltas as delta of delta, the sum XORed. */
  private putNextInteger(h: NativeHistogram, stale: boolean, sumHi: number, sumLo: number): void {
    const w = this.w;
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

/** What a histogram chunk writes once, after its header: the layout every sample shares. */
interface ChunkLayout {
  zeroThreshold: number;
  schema: number;
  positiveSpans: HistogramSpan[];
  negativeSpans: HistogramSpan[];
  customValues: number[] | undefined;
  /** Positive and negative bucket counts of the spans. */
  np: number;
  nn: number;
}

function readLayout(r: BitReader, chunk: Uint8Array): ChunkLayout {
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
  return { zeroThreshold, schema, positiveSpans, negativeSpans, customValues, np, nn };
}

/** One chunk's running decode: the time, and the counts as integer deltas (encoding 2) or float XOR states (encoding 3). */
class HistogramDecoding {
  readonly r: BitReader;
  readonly float: boolean;
  t = 0;
  private tDelta = 0;
  // Integer state.
  private cnt = 0;
  private zCnt = 0;
  private cntDelta = 0;
  private zCntDelta = 0;
  private readonly pD: number[];
  private readonly nD: number[];
  private readonly pDod: number[];
  private readonly nDod: number[];
  // Float state.
  private readonly cntX = newXorState();
  private readonly zCntX = newXorState();
  private readonly sumX = newXorState();
  private readonly pX: XorState[];
  private readonly nX: XorState[];

  constructor(r: BitReader, float: boolean, np: number, nn: number) {
    this.r = r;
    this.float = float;
    this.pD = new Array<number>(np).fill(0);
    this.nD = new Array<number>(nn).fill(0);
    this.pDod = new Array<number>(np).fill(0);
    this.nDod = new Array<number>(nn).fill(0);
    this.pX = Array.from({ length: np }, () => newXorState());
    this.nX = Array.from({ length: nn }, () => newXorState());
  }

  /** The first sample's fields, written whole; returns whether it is a stale marker. */
  readFirst(): boolean {
    const r = this.r;
    if (this.float) {
      setBits(this.cntX, r);
      setBits(this.zCntX, r);
    } else {
      this.cnt = readVarbitUint(r);
      this.zCnt = readVarbitUint(r);
    }
    setBits(this.sumX, r);
    // A first stale sample wrote an empty layout, so there are no buckets to read.
    for (let k = 0; k < this.pD.length; k++) {
      if (this.float) setBits(this.pX[k], r);
      else this.pD[k] = readVarbitInt(r);
    }
    for (let k = 0; k < this.nD.length; k++) {
      if (this.float) setBits(this.nX[k], r);
      else this.nD[k] = readVarbitInt(r);
    }
    return this.stale();
  }

  /** A later sample: time and counts against the previous one; returns whether it is a stale marker (no buckets written). */
  readNext(): boolean {
    const r = this.r;
    this.tDelta += readVarbitInt(r);
    this.t += this.tDelta;
    if (this.float) {
      xorRead(r, this.cntX);
      xorRead(r, this.zCntX);
    } else {
      this.cntDelta += readVarbitInt(r);
      this.cnt += this.cntDelta;
      this.zCntDelta += readVarbitInt(r);
      this.zCnt += this.zCntDelta;
    }
    xorRead(r, this.sumX);
    const stale = this.stale();
    if (!stale) {
      if (this.float) this.readFloatBuckets();
      else this.readIntegerBuckets();
    }
    return stale;
  }

  private stale(): boolean {
    return isStaleNaN(floatFromBits(this.sumX.hi, this.sumX.lo));
  }

  private readFloatBuckets(): void {
    for (let k = 0; k < this.pX.length; k++) xorRead(this.r, this.pX[k]);
    for (let k = 0; k < this.nX.length; k++) xorRead(this.r, this.nX[k]);
  }

  private readIntegerBuckets(): void {
    for (let k = 0; k < this.pD.length; k++) {
      this.pDod[k] += readVarbitInt(this.r);
      this.pD[k] += this.pDod[k];
    }
    for (let k = 0; k < this.nD.length; k++) {
      this.nDod[k] += readVarbitInt(this.r);
      this.nD[k] += this.nDod[k];
    }
  }

  /** The current sample as the model's absolute-count histogram. */
  histogram(layout: ChunkLayout, counterResetHint: NativeHistogram['counterResetHint']): NativeHistogram {
    const float = this.float;
    return {
      counterResetHint,
      schema: layout.schema,
      zeroThreshold: layout.zeroThreshold,
      zeroCount: float ? floatFromBits(this.zCntX.hi, this.zCntX.lo) : this.zCnt,
      count: float ? floatFromBits(this.cntX.hi, this.cntX.lo) : this.cnt,
      sum: floatFromBits(this.sumX.hi, this.sumX.lo),
      positiveSpans: layout.positiveSpans,
      negativeSpans: layout.negativeSpans,
      positiveBuckets: float ? this.pX.map((s) => floatFromBits(s.hi, s.lo)) : cumulative(this.pD),
      negativeBuckets: float ? this.nX.map((s) => floatFromBits(s.hi, s.lo)) : cumulative(this.nD),
      ...(layout.customValues !== undefined ? { customValues: layout.customValues } : {}),
    };
  }
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
  const layout = readLayout(r, chunk);
  const d = new HistogramDecoding(r, float, layout.np, layout.nn);
  d.t = readVarbitInt(r);
  for (let i = 0; i < total; i++) {
    const stale = i === 0 ? d.readFirst() : d.readNext();
    if (d.t > maxt) break;
    if (d.t < mint) continue;
    out.timestamps.push(d.t);
    if (stale) out.histograms.push(staleHistogram());
    else out.histograms.push(d.histogram(layout, header === HEADER_GAUGE ? 'gauge' : i > 0 ? 'not_reset' : 'unknown'));
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
