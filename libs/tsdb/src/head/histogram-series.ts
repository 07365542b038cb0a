// The native histogram samples of one head series: closed histogram chunks at
// their exact size and one open chunk. Chunks are cut as Prometheus' head
// cuts them: at 120 samples, at an aligned block boundary, on a counter reset,
// a schema or zero-threshold change, a switch between integer and float
// histograms, or between gauge and counter histograms; new buckets widen the
// open chunk (it is re-encoded). The series decides what to accept.

import type { NativeHistogram } from '@strata/model';
import { FLOAT_HISTOGRAM_ENCODING, HISTOGRAM_ENCODING, type EncodedChunk } from '../chunkenc/chunk-encoding.ts';
import { HistogramChunkEncoder, decodeHistogramChunk } from '../chunkenc/histogram-chunk.ts';
import { HEADER_GAUGE, HEADER_NOT_RESET, HEADER_RESET, HEADER_UNKNOWN, appendability, layoutIndices } from '../chunkenc/histogram-layout.ts';

/** One histogram sample to store: `float` selects the float histogram chunk encoding. */
export interface HistogramSample {
  timestamp: number;
  histogram: NativeHistogram;
  float: boolean;
  /** Start (created) timestamp in ms (absent or 0: none): the head puts a zero histogram there first. */
  startTimestamp?: number;
}

/** An empty histogram of `h`'s layout marked as a counter reset: the zero a start timestamp stands for (as Prometheus' head makes it). */
export function zeroHistogram(h: NativeHistogram): NativeHistogram {
  const z: NativeHistogram = {
    counterResetHint: 'reset',
    schema: h.schema,
    zeroThreshold: h.zeroThreshold,
    zeroCount: 0,
    count: 0,
    sum: 0,
    positiveSpans: [],
    negativeSpans: [],
    positiveBuckets: [],
    negativeBuckets: [],
  };
  if (h.customValues !== undefined) z.customValues = h.customValues;
  return z;
}

export interface HistogramArrays {
  timestamps: Float64Array;
  values: NativeHistogram[];
}

function firstHeader(h: NativeHistogram): number {
  return h.counterResetHint === 'gauge' ? HEADER_GAUGE : h.counterResetHint === 'reset' ? HEADER_RESET : HEADER_UNKNOWN;
}

/** Appends samples in time order into chunks, cutting as the head does; `cut` receives each finished chunk. */
export class HistogramChunker {
  open: HistogramChunkEncoder | null = null;
  openMinT = 0;
  /** The previous chunk's newest sample (on its layout) and header: the next chunk's header is judged against it. */
  private prev: { header: number; last: NativeHistogram } | null = null;

  private readonly samplesPerChunk: number;
  private readonly chunkRange: number;
  private readonly cut: (c: EncodedChunk) => void;

  constructor(
    samplesPerChunk: number,
    /** Aligned block range in ms; 0 for none. */
    chunkRange: number,
    cut: (c: EncodedChunk) => void,
  ) {
    this.samplesPerChunk = samplesPerChunk;
    this.chunkRange = chunkRange;
    this.cut = cut;
  }

  append(t: number, h: NativeHistogram, float: boolean): void {
    const encoding = float ? FLOAT_HISTOGRAM_ENCODING : HISTOGRAM_ENCODING;
    const open = this.open;
    if (open !== null && open.numSamples > 0) {
      const r = this.chunkRange;
      const full = open.numSamples >= this.samplesPerChunk || (r > 0 && t >= (Math.floor(this.openMinT / r) + 1) * r);
      if (open.encoding !== encoding) {
        this.close();
      } else if (full) {
        const a = open.appendability(h);
        this.close();
        this.start(t, h, encoding, h.counterResetHint === 'gauge' ? HEADER_GAUGE : a.ok ? HEADER_NOT_RESET : a.header);
        return;
      } else {
        const r2 = open.tryAppend(t, h);
        if (r2.ok) return;
        this.close();
        this.start(t, h, encoding, r2.header);
        return;
      }
    }
    this.start(t, h, encoding, this.headerAfterPrev(h));
  }

  /** Closes the open chunk (if it has samples). */
  close(): void {
    const open = this.open;
    if (open === null || open.numSamples === 0) return;
    this.cut({ minTime: this.openMinT, maxTime: open.lastTimestamp, data: open.bytes().slice(), encoding: open.encoding });
    this.prev = { header: open.header, last: open.last as NativeHistogram };
    this.open = null;
  }

  /** Forgets the open chunk (its samples were re-encoded elsewhere) without cutting it. */
  drop(): void {
    this.open = null;
  }

  private headerAfterPrev(h: NativeHistogram): number {
    const p = this.prev;
    if (p === null || h.counterResetHint === 'gauge' || h.counterResetHint === 'reset') return firstHeader(h);
    const a = appendability(p.header, p.last, layoutIndices(p.last), h);
    return a.ok ? HEADER_NOT_RESET : a.header;
  }

  private start(t: number, h: NativeHistogram, encoding: typeof HISTOGRAM_ENCODING | typeof FLOAT_HISTOGRAM_ENCODING, header: number): void {
    const enc = new HistogramChunkEncoder(encoding, header);
    enc.append(t, h);
    this.open = enc;
    this.openMinT = t;
  }
}

/** Encodes samples (in time order) into chunks as the head would cut them. */
export function encodeHistogramChunks(samples: readonly HistogramSample[], perChunk: number): EncodedChunk[] {
  const out: EncodedChunk[] = [];
  const c = new HistogramChunker(perChunk, 0, (x) => out.push(x));
  for (const s of samples) c.append(s.timestamp, s.histogram, s.float);
  c.close();
  return out;
}

/** Decodes histogram chunks' samples in [mint, maxt] into `out`, marking which came from float chunks. */
export function decodeHistogramSamples(chunks: readonly EncodedChunk[], mint: number, maxt: number, out: HistogramSample[] = []): HistogramSample[] {
  for (const c of chunks) {
    if (c.minTime > maxt || c.maxTime < mint) continue;
    const enc = c.encoding ?? HISTOGRAM_ENCODING;
    const d = decodeHistogramChunk(c.data, enc, mint, maxt);
    for (let i = 0; i < d.timestamps.length; i++) out.push({ timestamp: d.timestamps[i], histogram: d.histograms[i], float: enc === FLOAT_HISTOGRAM_ENCODING });
  }
  return out;
}

/** Samples sorted by time, the first of equal timestamps kept (chunks of one series may overlap after merges by other tools). */
export function sortedHistograms(samples: HistogramSample[]): HistogramSample[] {
  let sorted = true;
  for (let i = 1; i < samples.length && sorted; i++) sorted = samples[i].timestamp > samples[i - 1].timestamp;
  if (sorted) return samples;
  const order = samples.map((s, i) => ({ s, i })).sort((a, b) => a.s.timestamp - b.s.timestamp || a.i - b.i);
  const out: HistogramSample[] = [];
  for (const { s } of order) if (out.length === 0 || out[out.length - 1].timestamp !== s.timestamp) out.push(s);
  return out;
}

/** Sorted samples (merged from several sources, ties already dropped) as the model's arrays. */
export function histogramArrays(samples: readonly HistogramSample[]): HistogramArrays {
  return { timestamps: Float64Array.from(samples, (s) => s.timestamp), values: samples.map((s) => s.histogram) };
}

export class HistogramSeries {
  readonly closed: EncodedChunk[] = [];
  lastT = -Infinity;
  /** The newest sample as it was appended (for idempotent replays). */
  last: NativeHistogram | null = null;
  private readonly chunker: HistogramChunker;

  private readonly samplesPerChunk: number;

  constructor(samplesPerChunk: number, chunkRange: number) {
    this.samplesPerChunk = samplesPerChunk;
    this.chunker = new HistogramChunker(samplesPerChunk, chunkRange, (c) => this.closed.push(c));
  }

  /** Appends a sample with t > lastT (the series checked). */
  append(t: number, h: NativeHistogram, float: boolean): void {
    this.chunker.append(t, h, float);
    this.lastT = t;
    this.last = h;
  }

  closeOpen(): void {
    this.chunker.close();
  }

  private get openChunk(): EncodedChunk | null {
    const o = this.chunker.open;
    if (o === null || o.numSamples === 0) return null;
    return { minTime: this.chunker.openMinT, maxTime: o.lastTimestamp, data: o.bytes(), encoding: o.encoding };
  }

  isEmpty(): boolean {
    return this.closed.length === 0 && this.openChunk === null;
  }

  minTime(): number {
    if (this.closed.length > 0) return this.closed[0].minTime;
    return this.openChunk?.minTime ?? Infinity;
  }

  maxTime(): number {
    const o = this.openChunk;
    if (o !== null) return o.maxTime;
    return this.closed.length > 0 ? this.closed[this.closed.length - 1].maxTime : -Infinity;
  }

  private all(): EncodedChunk[] {
    const o = this.openChunk;
    return o === null ? this.closed : [...this.closed, o];
  }

  /** Samples with mint <= t <= maxt, or null if none. */
  samples(mint: number, maxt: number): HistogramArrays | null {
    const s = this.sampleList(mint, maxt);
    return s.length === 0 ? null : histogramArrays(s);
  }

  /** Samples with mint <= t <= maxt, in time order. */
  sampleList(mint: number, maxt: number): HistogramSample[] {
    return decodeHistogramSamples(this.all(), mint, maxt);
  }

  /** The sample at t, or null (one chunk decoded). */
  at(t: number): HistogramSample | null {
    for (const c of this.all()) if (c.minTime <= t && c.maxTime >= t) return decodeHistogramSamples([c], t, t)[0] ?? null;
    return null;
  }

  /** Chunks for a block [mint, maxt): whole chunks as they are, re-encoded where a chunk crosses an edge. */
  encodedChunks(mint: number, maxt: number): EncodedChunk[] {
    const inside: EncodedChunk[] = [];
    let clean = true;
    for (const c of this.closed) {
      if (c.maxTime < mint || c.minTime >= maxt) continue;
      if (c.minTime < mint || c.maxTime >= maxt) clean = false;
      inside.push(c);
    }
    // The open chunk still changes: its samples are always re-encoded.
    const o = this.openChunk;
    if (o !== null && o.minTime < maxt && o.maxTime >= mint) {
      clean = false;
      inside.push(o);
    }
    if (clean) return inside;
    return encodeHistogramChunks(decodeHistogramSamples(inside, mint, maxt - 1), this.samplesPerChunk);
  }

  /** Drops samples with t < mint; true when nothing is left. */
  truncateBefore(mint: number): boolean {
    let drop = 0;
    while (drop < this.closed.length && this.closed[drop].maxTime < mint) drop++;
    let keep: EncodedChunk[] = [];
    if (drop < this.closed.length && this.closed[drop].minTime < mint) {
      keep = encodeHistogramChunks(decodeHistogramSamples([this.closed[drop]], mint, Infinity), this.samplesPerChunk);
      drop++;
    }
    this.closed.splice(0, drop, ...keep);
    const o = this.openChunk;
    if (o !== null && o.minTime < mint) {
      const rest = decodeHistogramSamples([{ ...o, data: o.data.slice() }], mint, Infinity);
      this.chunker.drop();
      for (const s of rest) this.chunker.append(s.timestamp, s.histogram, s.float);
    }
    return this.isEmpty();
  }
}
