// One head series. It is its own open chunk (it extends the XOR encoder, so
// one object per series holds the encoder state and the last sample), keeps
// closed chunks as ranges of shared slabs (ChunkArena), and out-of-order
// float and histogram samples if any. No per-sample objects on the float path;
// value bits travel as two int32 words so stale markers and other NaN payloads
// stay bit-exact. The Head decides what to accept; this class stores, reads
// and finds what is already stored at a timestamp.

import type { Labels, NativeHistogram, SeriesChunk } from '@strata/model';
import type { ChunkArena, ReusingArena } from './chunk-arena.ts';
import type { EncodedChunk } from '../chunkenc/chunk-encoding.ts';
import { FileChunk, type ChunkSegment, type HeadChunks } from './head-chunks.ts';
import type { DecodedSamplesCache, DecodedOwner, DecodedSamples, SampleArena } from './decoded-samples.ts';
import { HistogramSeries, encodeHistogramChunks, histogramArrays, type HistogramArrays, type HistogramSample } from './histogram-series.ts';
import { sameHistogram } from '../chunkenc/histogram-layout.ts';
import { OooHistograms } from './ooo-histograms.ts';
import { OooSamples, type OooInsert } from './ooo-samples.ts';
import { HI_WORD, LO_WORD, XorChunkEncoder, decodeXorChunkInto, xorChunkNumSamples } from '../chunkenc/xor-chunk.ts';

export interface SampleArrays {
  timestamps: Float64Array;
  values: Float64Array;
}

/** What every series of one head shares. */
export interface SeriesContext {
  /** Space of open chunks: each series gives its space back when it closes or outgrows the chunk. */
  openArena: ReusingArena;
  /** Closed chunks, copied in at their exact size: into memory, or into segment files on disk. */
  closed: ChunkArena | HeadChunks;
  samplesPerChunk: number;
  /** Aligned block range in ms; 0 for none. */
  chunkRange: number;
  /** Decoded samples kept between queries; null: none. */
  decoded: DecodedSamplesCache | null;
}

const FIRST_CHUNK_BYTES = 48;
const LATEST_VALUE = new Float64Array(1);
const LATEST_BITS = new Int32Array(LATEST_VALUE.buffer);

export class MemorySeries extends XorChunkEncoder implements DecodedOwner {
  /** Closed chunks, oldest first: the slab (or segment file) of chunk i, and [minT, maxT, offset, length] at cmeta[4i..]. */
  cslabs: (Uint8Array | ChunkSegment)[] | null = null;
  cmeta: number[] | null = null;
  /** The in-order float samples decoded (see DecodedSamplesCache); null until a query reads them with the cache on, or once evicted. */
  decoded: DecodedSamples | null = null;
  openMinT = 0;
  /** The labels as a Labels array, made by the first read that returns this series and shared by every later one (readers never change it). */
  labelsView: Labels | null = null;
  ooo: OooSamples | null = null;
  /** Out-of-order native histograms; null unless one came inside the window. */
  oooH: OooHistograms | null = null;
  /** Ring slot of this series' newest exemplar (the exemplar store checks it still is). */
  exemplarSlot = -1;
  /** Native histogram samples; null for float-only series (most). */
  hist: HistogramSeries | null = null;
  /** Whether the newest sample is a histogram (a series may switch between floats and histograms). */
  lastIsHistogram = false;
  /** The label fields as a record encoded them (EncodedLabels.rawStart..rawEnd), at rawOff in this shared slab; null until one did. */
  rawSlab: Buffer | null = null;
  rawOff = 0;
  rawLen = 0;
  /** This series' row in the head's SeriesRows; -1: none. */
  row = -1;

  public id: number;
  readonly lbls: string[];
  readonly hash: number;
  private readonly ctx: SeriesContext;

  constructor(
    /** Position in the head's series list; reassigned when the head drops dead series, -1 once dropped. */
    id: number,
    /** Interned names and values, flat: [name0, value0, name1, value1, ...]. */
    lbls: string[],
    hash: number,
    ctx: SeriesContext,
  ) {
    super(0);
    this.id = id;
    this.lbls = lbls;
    this.hash = hash;
    this.ctx = ctx;
    this.t = -Infinity;
  }

  /** Newest in-order sample time, float or histogram; -Infinity before the first. */
  get lastT(): number {
    return this.hist !== null && this.hist.lastT > this.t ? this.hist.lastT : this.t;
  }

  get lastHi(): number {
    return this.lastValueHi;
  }

  get lastLo(): number {
    return this.lastValueLo;
  }

  get numClosedChunks(): number {
    return this.cslabs === null ? 0 : this.cslabs.length;
  }

  /** Appends a histogram sample with t > lastT; the open float chunk is closed first (new chunk on a type change). */
  appendHistogram(t: number, h: NativeHistogram, float: boolean): void {
    if (!this.lastIsHistogram) this.closeOpen();
    if (this.hist === null) this.hist = new HistogramSeries(this.ctx.samplesPerChunk, this.ctx.chunkRange);
    this.hist.append(t, h, float);
    this.lastIsHistogram = true;
  }

  /** Histogram samples with mint <= t <= maxt, or null if none. */
  histogramSamples(mint: number, maxt: number): HistogramArrays | null {
    if (this.oooH === null || !this.oooH.hasDataIn(mint, maxt)) return this.hist === null ? null : this.hist.samples(mint, maxt);
    const s = this.histogramTimeline(mint, maxt);
    return s.length === 0 ? null : histogramArrays(s);
  }

  /**
   * In-order and out-of-order histograms with mint <= t <= maxt merged in time
   * order. Where the merge switches between the two, the counter-reset hint
   * becomes "unknown" (gauges stay gauges): as Prometheus' merging iterator
   * says of non-consecutive samples, nothing is known about a reset there.
   */
  private histogramTimeline(mint: number, maxt: number): HistogramSample[] {
    const a = this.hist === null ? [] : this.hist.sampleList(mint, maxt);
    const b = this.oooH === null ? [] : this.oooH.read(mint, maxt, this.ctx.samplesPerChunk);
    if (b.length === 0) return a;
    if (a.length === 0) return b;
    const out: HistogramSample[] = [];
    let i = 0;
    let j = 0;
    let prev = -1;
    while (i < a.length || j < b.length) {
      const ta = i < a.length ? a[i].timestamp : Infinity;
      const tb = j < b.length ? b[j].timestamp : Infinity;
      const src = ta <= tb ? 0 : 1;
      let x = src === 0 ? a[i++] : b[j++];
      if (src === 0 && ta === tb) j++;
      if (prev !== -1 && prev !== src && x.histogram.counterResetHint !== 'gauge' && x.histogram.counterResetHint !== 'unknown') {
        x = { ...x, histogram: { ...x.histogram, counterResetHint: 'unknown' } };
      }
      out.push(x);
      prev = src;
    }
    return out;
  }

  /**
   * Keeps an out-of-order float sample: a duplicate when the same bits are
   * stored at t (in order or not), a conflict when other bits or a histogram are.
   */
  insertOoo(t: number, hi: number, lo: number): OooInsert {
    if ((this.hist !== null && this.hist.at(t) !== null) || (this.oooH !== null && this.oooH.at(t) !== null)) return 'conflict';
    const i = this.inOrderFloatAt(t);
    if (i >= 0) return lastDecoded.words[2 * i + HI_WORD] === (hi | 0) && lastDecoded.words[2 * i + LO_WORD] === (lo | 0) ? 'duplicate' : 'conflict';
    if (this.ooo === null) this.ooo = new OooSamples();
    return this.ooo.insert(t, hi, lo);
  }

  /** Keeps an out-of-order histogram: a duplicate when an identical histogram is stored at t, a conflict when another one or a float is. */
  insertOooHistogram(t: number, h: NativeHistogram, float: boolean): OooInsert {
    const e = this.storedAt(t);
    if (e !== null) return e.histogram !== undefined && sameHistogram(e.histogram, h) ? 'duplicate' : 'conflict';
    if (this.oooH === null) this.oooH = new OooHistograms();
    return this.oooH.insert(t, h, float);
  }

  /** What is stored at t (before the newest sample): float bits or a histogram; null when nothing is. Decodes at most one chunk of each kind. */
  private storedAt(t: number): { hi: number; lo: number; histogram?: undefined } | { histogram: NativeHistogram } | null {
    if (this.ooo !== null) {
      const [from, to] = this.ooo.range(t, t);
      if (from < to) return { hi: this.ooo.words[2 * from], lo: this.ooo.words[2 * from + 1] };
    }
    const oh = this.oooH?.at(t) ?? this.hist?.at(t) ?? null;
    if (oh !== null) return { histogram: oh.histogram };
    const i = this.inOrderFloatAt(t);
    return i < 0 ? null : { hi: lastDecoded.words[2 * i + HI_WORD], lo: lastDecoded.words[2 * i + LO_WORD] };
  }

  /** The index of the in-order float sample at t in lastDecoded (its chunk decoded there), or -1. */
  private inOrderFloatAt(t: number): number {
    let found = false;
    const m = this.cmeta;
    for (let k = 0; !found && k < this.numClosedChunks; k++) {
      if ((m as number[])[4 * k] <= t && (m as number[])[4 * k + 1] >= t) {
        lastDecoded.load((this.cslabs as (Uint8Array | ChunkSegment)[])[k], (m as number[])[4 * k + 2], (m as number[])[4 * k + 3], 0, () =>
          this.closedChunk(k),
        );
        found = true;
      }
    }
    if (!found && this.numSamples > 0 && this.openMinT <= t && this.t >= t) {
      lastDecoded.load(this, this.numSamples, this.t, this.openMinT, () => this.bytes());
      found = true;
    }
    if (!found) return -1;
    const ts = lastDecoded.timestamps;
    const i = lowerBound(ts, t);
    return i < ts.length && ts[i] === t ? i : -1;
  }

  /** Where timestamps[i] stands against lastT: 1 after it, 0 at it, -1 before it (an array and index: see Head.appendSamples). */
  orderAt(timestamps: Float64Array, i: number): number {
    const t = timestamps[i];
    const last = this.lastT;
    return t > last ? 1 : t === last ? 0 : -1;
  }

  /** Appends timestamps[i] (> lastT), its value the two words at words[w] (in HI_WORD, LO_WORD order). */
  appendInOrderAt(timestamps: Float64Array, i: number, words: Int32Array, w: number): void {
    const t = timestamps[i];
    if (this.lastIsHistogram) {
      (this.hist as HistogramSeries).closeOpen();
      this.lastIsHistogram = false;
    }
    const n = this.numSamples;
    if (n > 0) {
      // Cut at 120 samples and never across an aligned block boundary.
      const r = this.ctx.chunkRange;
      if (n >= this.ctx.samplesPerChunk || (r > 0 && t >= (Math.floor(this.openMinT / r) + 1) * r)) this.closeOpen(true);
    }
    if (this.numSamples === 0) this.openMinT = t;
    this.appendAt(timestamps, i, words, w);
  }

  /**
   * Closes the open chunk (if it has samples): its bytes move to exact-size space and its space is
   * given back. With `more` (a sample follows at once) the next chunk gets new space of the size the
   * closed one asks for. Never the same space: every series moves, so whole slabs empty and are reused.
   */
  closeOpen(more = false): void {
    const samples = this.numSamples;
    if (samples === 0) return;
    const bytes = this.bytes();
    const len = bytes.length;
    const closed = this.ctx.closed;
    const off = closed.copy(bytes, this.t);
    // concat, not push: exact-size arrays (push over-allocates 16+ slots, per series).
    this.cslabs = this.cslabs === null ? [closed.slab] : this.cslabs.concat([closed.slab]);
    const meta = [this.openMinT, this.t, off, len];
    this.cmeta = this.cmeta === null ? meta : this.cmeta.concat(meta);
    this.reset();
    if (more) {
      this.place(this.nextChunkBytes(len, samples));
      return;
    }
    this.ctx.openArena.release(this.buf, this.limit - this.base);
    this.detach();
  }

  /** Space for the open chunk: sized from the previous chunk at first, doubled when short. */
  protected override grow(): void {
    if (this.limit > 0) {
      this.place((this.limit - this.base) * 2);
    } else if (this.cmeta !== null && this.cmeta.length > 0) {
      const m = this.cmeta;
      this.place(this.nextChunkBytes(m[m.length - 1], xorChunkNumSamples(this.closedChunk(this.numClosedChunks - 1, 2))));
    } else {
      this.place(FIRST_CHUNK_BYTES);
    }
  }

  /** Space a full chunk of data like a chunk of `len` bytes with `samples` samples needs. */
  private nextChunkBytes(len: number, samples: number): number {
    return Math.ceil((len / Math.max(1, samples)) * this.ctx.samplesPerChunk * 1.125) + 24;
  }

  /** Moves the open chunk into `bytes` of new open-chunk space and gives the old space back. */
  private place(bytes: number): void {
    const arena = this.ctx.openArena;
    const off = arena.alloc(bytes);
    const old = this.buf;
    const oldBytes = this.limit - this.base;
    this.moveTo(arena.slab, off, off + bytes);
    if (oldBytes > 0) arena.release(old, oldBytes);
  }

  /** Closed chunk i's bytes (the first `len` of them), never to be written to: a view of memory or of a block read from its segment file. */
  closedChunk(i: number, len = (this.cmeta as number[])[4 * i + 3]): Uint8Array {
    const slab = (this.cslabs as (Uint8Array | ChunkSegment)[])[i];
    const off = (this.cmeta as number[])[4 * i + 2];
    return slab instanceof Uint8Array ? slab.subarray(off, off + len) : slab.read(off, len);
  }

  /** Closed chunk k for a block: its bytes as a view, or a FileChunk read when the block takes it. */
  private closedEncoded(k: number): EncodedChunk {
    const m = this.cmeta as number[];
    const slab = (this.cslabs as (Uint8Array | ChunkSegment)[])[k];
    if (slab instanceof Uint8Array) return { minTime: m[4 * k], maxTime: m[4 * k + 1], data: this.closedChunk(k) };
    return new FileChunk(m[4 * k], m[4 * k + 1], slab, m[4 * k + 2], m[4 * k + 3]);
  }

  /** Closes the open float and histogram chunks. */
  closeAllOpen(): void {
    this.closeOpen();
    this.hist?.closeOpen();
  }

  minTime(): number {
    let t = Infinity;
    if (this.cmeta !== null && this.cmeta.length > 0) t = this.cmeta[0];
    else if (this.numSamples > 0) t = this.openMinT;
    if (this.ooo !== null && this.ooo.minTime < t) t = this.ooo.minTime;
    if (this.hist !== null && this.hist.minTime() < t) t = this.hist.minTime();
    if (this.oooH !== null && this.oooH.minTime < t) t = this.oooH.minTime;
    return t;
  }

  maxTime(): number {
    let t = this.numSamples > 0 ? this.t : -Infinity;
    if (t === -Infinity && this.cmeta !== null && this.cmeta.length > 0) t = this.cmeta[this.cmeta.length - 3];
    if (this.ooo !== null && this.ooo.maxTime > t) t = this.ooo.maxTime;
    if (this.hist !== null && this.hist.maxTime() > t) t = this.hist.maxTime();
    if (this.oooH !== null && this.oooH.maxTime > t) t = this.oooH.maxTime;
    return t;
  }

  isEmpty(): boolean {
    return (
      this.numClosedChunks === 0 &&
      this.numSamples === 0 &&
      (this.ooo === null || this.ooo.length === 0) &&
      (this.hist === null || this.hist.isEmpty()) &&
      (this.oooH === null || this.oooH.length === 0)
    );
  }

  hasDataIn(mint: number, maxt: number): boolean {
    return !this.isEmpty() && this.minTime() <= maxt && this.maxTime() >= mint;
  }

  /**
   * The newest sample at or before maxt, when that is the series' last in-order float sample and it
   * is at or after mint: what an instant selector evaluated at maxt uses, without decoding a chunk
   * (the encoder keeps the last time and value bits). Undefined when that does not hold (the last
   * sample is a histogram, is after maxt, before mint, or truncated away): the caller reads samples().
   * Out-of-order samples are never newer than the last in-order one, so they cannot be the answer.
   */
  latestSample(mint: number, maxt: number, arena: SampleArena): SampleArrays | undefined {
    const t = this.t;
    if (this.lastIsHistogram || t > maxt || t < mint) return undefined;
    const m = this.cmeta;
    if (this.numSamples === 0 && (m === null || m.length === 0 || m[m.length - 3] !== t)) return undefined;
    const out = arena.take(1);
    out.timestamps[0] = t;
    LATEST_BITS[HI_WORD] = this.lastValueHi;
    LATEST_BITS[LO_WORD] = this.lastValueLo;
    // Same-type set() copies bytes: a staleness marker keeps its payload.
    out.values.set(LATEST_VALUE);
    return out;
  }

  /**
   * Samples with mint <= t <= maxt, in time order, or null if none. With an arena (a query), views
   * into the decoded-samples cache or, without one, into the arena; never to be written to.
   */
  samples(mint: number, maxt: number, arena?: SampleArena): SampleArrays | null {
    let oFrom = 0;
    let oTo = 0;
    if (this.ooo !== null) [oFrom, oTo] = this.ooo.range(mint, maxt);
    const cache = this.ctx.decoded;
    if (arena && cache !== null && cache.enabled) {
      const { timestamps, values, length } = this.decodedSamples(cache);
      const from = lowerBound(timestamps, mint, length);
      const to = lowerBound(timestamps, maxt + 1, length);
      if (from === to && oFrom === oTo) return null;
      if (oFrom === oTo) return { timestamps: timestamps.subarray(from, to), values: values.subarray(from, to) };
      return mergeOoo(timestamps.subarray(from, to), values.subarray(from, to), to - from, this.ooo as OooSamples, oFrom, oTo);
    }

    let total = 0;
    const m = this.cmeta;
    const closed = this.numClosedChunks;
    for (let k = 0; k < closed; k++) {
      if ((m as number[])[4 * k] <= maxt && (m as number[])[4 * k + 1] >= mint) total += xorChunkNumSamples(this.closedChunk(k));
    }
    const openHit = this.numSamples > 0 && this.openMinT <= maxt && this.t >= mint;
    if (openHit) total += this.numSamples;
    if (total === 0 && oFrom === oTo) return null;

    let timestamps: Float64Array;
    let values: Float64Array;
    if (arena && oFrom === oTo) ({ timestamps, values } = arena.take(total));
    else {
      timestamps = new Float64Array(total);
      values = new Float64Array(total);
    }
    let n = 0;
    for (let k = 0; k < closed; k++) {
      if ((m as number[])[4 * k] > maxt || (m as number[])[4 * k + 1] < mint) continue;
      n += decodeXorChunkInto(this.closedChunk(k), timestamps, values, n, mint, maxt);
    }
    if (openHit) n += decodeXorChunkInto(this.bytes(), timestamps, values, n, mint, maxt);
    if (oFrom === oTo) {
      if (n === total) return { timestamps, values };
      if (arena) arena.shrinkLast(n);
      return { timestamps: timestamps.subarray(0, n), values: values.subarray(0, n) };
    }
    return mergeOoo(timestamps, values, n, this.ooo as OooSamples, oFrom, oTo);
  }

  /**
   * Every in-order float sample decoded, from the cache: what it holds, extended by the samples
   * appended since (the chunks newer than its last timestamp decoded into its spare room). The
   * arrays and length are taken before the cache is told the new size, which may evict this very
   * timeline: this read keeps its arrays either way.
   */
  private decodedSamples(cache: DecodedSamplesCache): { timestamps: Float64Array; values: Float64Array; length: number } {
    let d = this.decoded;
    const m = this.cmeta;
    const closed = this.numClosedChunks;
    const newest = this.numSamples > 0 ? this.t : closed > 0 ? (m as number[])[4 * closed - 3] : -Infinity;
    if (d !== null && d.lastT === newest) return d;
    d ??= this.decoded = cache.create(this);
    const after = d.lastT;
    // The chunks holding samples after `after`: closed ones newer than it, then the open one.
    let first = closed;
    while (first > 0 && (m as number[])[4 * (first - 1) + 1] > after) first--;
    let room = this.numSamples;
    for (let k = first; k < closed; k++) room += xorChunkNumSamples(this.closedChunk(k));
    const added = d.reserve(room);
    const { timestamps, values } = d;
    let n = d.length;
    for (let k = first; k < closed; k++) n += decodeXorChunkInto(this.closedChunk(k), timestamps, values, n, after + 1);
    if (this.numSamples > 0) n += decodeXorChunkInto(this.bytes(), timestamps, values, n, after + 1);
    d.length = n;
    cache.grew(d, added);
    return { timestamps, values, length: n };
  }

  /**
   * The float samples meeting [mint, maxt] as the XOR chunks that hold them, undecoded and not
   * clipped (closed chunks in memory as views: they never change; those in files and the open one
   * copied into `arena`), or null when the series has samples that live outside chunks (out-of-order
   * floats in the range, any histograms): then only samples() answers.
   */
  queryChunks(mint: number, maxt: number, arena: ChunkArena): SeriesChunk[] | null {
    if (this.hist !== null || this.oooH !== null) return null;
    if (this.ooo !== null) {
      const [from, to] = this.ooo.range(mint, maxt);
      if (from < to) return null;
    }
    const out: SeriesChunk[] = [];
    const m = this.cmeta;
    for (let k = 0; k < this.numClosedChunks; k++) {
      const lo = (m as number[])[4 * k];
      const hi = (m as number[])[4 * k + 1];
      if (hi < mint || lo > maxt) continue;
      // A view of a chunk read from a file would keep the file's whole read block alive as long as
      // the answer: copied, the answer holds its own bytes whatever order the chunks were written in.
      const inFile = !((this.cslabs as (Uint8Array | ChunkSegment)[])[k] instanceof Uint8Array);
      const data = inFile ? arena.copyOf(this.closedChunk(k)) : this.closedChunk(k);
      out.push({ minTime: lo, maxTime: hi, samples: xorChunkNumSamples(data), data });
    }
    if (this.numSamples > 0 && this.openMinT <= maxt && this.t >= mint) {
      out.push({ minTime: this.openMinT, maxTime: this.t, samples: this.numSamples, data: arena.copyOf(this.bytes()) });
    }
    return out;
  }

  /**
   * The series' data in [mint, maxt) as chunks for a block. Chunks that lie
   * wholly inside are handed out as they are (no re-encoding, no copy: closed
   * chunks never change); otherwise (a chunk crosses an edge, out-of-order
   * samples) the range is re-encoded. The caller closes the open chunk first
   * if it ends before maxt.
   */
  encodedChunks(mint: number, maxt: number): EncodedChunk[] {
    if (this.oooH !== null && this.oooH.hasDataIn(mint, maxt - 1)) return this.timelineChunks(mint, maxt);
    if (this.hist !== null && this.ooo !== null) {
      const [from, to] = this.ooo.range(mint, maxt - 1);
      if (from < to) return this.timelineChunks(mint, maxt);
    }
    const floats = this.floatChunks(mint, maxt);
    if (this.hist === null) return floats;
    const hists = this.hist.encodedChunks(mint, maxt);
    if (hists.length === 0) return floats;
    return floats.concat(hists).sort((a, b) => a.minTime - b.minTime);
  }

  /**
   * Out-of-order samples in a range a series has histograms in: floats and
   * histograms merged into one timeline and re-encoded, a new chunk at every
   * switch between the two (as Prometheus encodes out-of-order head chunks),
   * so no two chunks of the series overlap.
   */
  private timelineChunks(mint: number, maxt: number): EncodedChunk[] {
    const f = this.samples(mint, maxt - 1);
    const h = this.histogramTimeline(mint, maxt - 1);
    const ft = f?.timestamps ?? new Float64Array(0);
    const out: EncodedChunk[] = [];
    let i = 0;
    let j = 0;
    while (i < ft.length || j < h.length) {
      if (i < ft.length && j < h.length && ft[i] === h[j].timestamp) {
        j++; // A float wins a timestamp both have (the head never stores both).
        continue;
      }
      if (j === h.length || (i < ft.length && ft[i] < h[j].timestamp)) {
        const from = i;
        while (i < ft.length && (j === h.length || ft[i] < h[j].timestamp)) i++;
        for (const c of encodeChunks(ft.subarray(from, i), (f as SampleArrays).values.subarray(from, i), this.ctx.samplesPerChunk)) out.push(c);
      } else {
        const from = j;
        while (j < h.length && (i === ft.length || h[j].timestamp < ft[i])) j++;
        for (const c of encodeHistogramChunks(h.slice(from, j), this.ctx.samplesPerChunk)) out.push(c);
      }
    }
    return out;
  }

  private floatChunks(mint: number, maxt: number): EncodedChunk[] {
    const out: EncodedChunk[] = [];
    let clean = true;
    if (this.ooo !== null) {
      const [from, to] = this.ooo.range(mint, maxt - 1);
      clean = from === to;
    }
    const m = this.cmeta;
    for (let k = 0; clean && k < this.numClosedChunks; k++) {
      const lo = (m as number[])[4 * k];
      const hi = (m as number[])[4 * k + 1];
      if (hi < mint || lo >= maxt) continue;
      if (lo < mint || hi >= maxt) clean = false;
      else out.push(this.closedEncoded(k));
    }
    if (clean && this.numSamples > 0 && this.openMinT < maxt) clean = false;
    if (clean) return out;
    const s = this.samples(mint, maxt - 1);
    if (s === null) return [];
    return encodeChunks(s.timestamps, s.values, this.ctx.samplesPerChunk);
  }

  /** Drops every sample with t < mint; returns true when nothing is left. */
  truncateBefore(mint: number): boolean {
    const d = this.decoded;
    if (d !== null && d.length > 0 && d.timestamps[0] < mint) {
      // Decoded again from the chunks that are left when next read.
      this.ctx.decoded?.drop(d);
      this.decoded = null;
    }
    const m = this.cmeta;
    const slabs = this.cslabs;
    if (m !== null && slabs !== null) {
      let drop = 0;
      while (drop < slabs.length && m[4 * drop + 1] < mint) drop++;
      let keepFirst: EncodedChunk[] | null = null;
      if (drop < slabs.length && m[4 * drop] < mint) {
        // A chunk straddles the cut (only when the cut is not on a block boundary): keep its tail.
        const { timestamps, values } = decodeChunk(this.closedChunk(drop));
        const from = lowerBound(timestamps, mint);
        keepFirst = encodeChunks(timestamps.subarray(from), values.subarray(from), this.ctx.samplesPerChunk);
        drop++;
      }
      if (drop > 0) {
        slabs.splice(0, drop);
        m.splice(0, 4 * drop);
      }
      if (keepFirst !== null) {
        for (let i = keepFirst.length - 1; i >= 0; i--) {
          slabs.unshift(keepFirst[i].data);
          m.unshift(keepFirst[i].minTime, keepFirst[i].maxTime, 0, keepFirst[i].data.length);
        }
      }
      if (slabs.length === 0) {
        this.cslabs = null;
        this.cmeta = null;
      }
    }
    if (this.numSamples > 0 && this.openMinT < mint) {
      const { timestamps, values } = decodeChunk(this.bytes());
      const from = lowerBound(timestamps, mint);
      this.reset();
      const words = new Int32Array(values.buffer);
      for (let i = from; i < timestamps.length; i++) this.appendAt(timestamps, i, words, 2 * i);
      if (from < timestamps.length) this.openMinT = timestamps[from];
    }
    if (this.ooo !== null) {
      this.ooo.truncateBefore(mint);
      if (this.ooo.length === 0) this.ooo = null;
    }
    if (this.hist !== null && this.hist.truncateBefore(mint) && !this.lastIsHistogram) this.hist = null;
    if (this.oooH !== null) {
      this.oooH.truncateBefore(mint);
      if (this.oooH.length === 0) this.oooH = null;
    }
    return this.isEmpty();
  }
}

/**
 * The last float chunk decoded to look a timestamp up: out-of-order samples of
 * a series come in runs, so one chunk serves a run (without it each sample
 * decoded a chunk: 20 times slower). A closed chunk is known by its slab and
 * place (it never changes); the open one by its series, sample count, newest
 * and oldest time (it only grows, or loses its head on truncation).
 */
class LastDecodedChunk {
  private owner: object | null = null;
  private a = 0;
  private b = 0;
  private c = 0;
  timestamps: Float64Array<ArrayBufferLike> = new Float64Array(0);
  /** Value i's bits at words[2i + HI_WORD], words[2i + LO_WORD]. */
  words: Int32Array<ArrayBufferLike> = new Int32Array(0);

  load(owner: object, a: number, b: number, c: number, chunk: () => Uint8Array): void {
    if (owner === this.owner && a === this.a && b === this.b && c === this.c) return;
    const d = decodeChunk(chunk());
    this.timestamps = d.timestamps;
    this.words = new Int32Array(d.values.buffer);
    this.owner = owner;
    this.a = a;
    this.b = b;
    this.c = c;
  }
}

const lastDecoded = new LastDecodedChunk();

function decodeChunk(chunk: Uint8Array): SampleArrays {
  const n = xorChunkNumSamples(chunk);
  const timestamps = new Float64Array(n);
  const values = new Float64Array(n);
  decodeXorChunkInto(chunk, timestamps, values, 0);
  return { timestamps, values };
}

/** Encodes samples into chunks of at most `perChunk` samples. */
export function encodeChunks(timestamps: Float64Array, values: Float64Array, perChunk: number): EncodedChunk[] {
  const out: EncodedChunk[] = [];
  const enc = new XorChunkEncoder();
  for (let start = 0; start < timestamps.length; start += perChunk) {
    const end = Math.min(start + perChunk, timestamps.length);
    enc.reset();
    enc.appendRange(timestamps, values, start, end);
    out.push({ minTime: timestamps[start], maxTime: timestamps[end - 1], data: enc.bytes().slice() });
  }
  return out;
}

/** Merges n in-order samples with ooo[oFrom, oTo); the in-order sample wins a tie. */
function mergeOoo(ts: Float64Array, vs: Float64Array, n: number, ooo: OooSamples, oFrom: number, oTo: number): SampleArrays {
  const total = n + (oTo - oFrom);
  const timestamps = new Float64Array(total);
  const values = new Float64Array(total);
  const src = new Int32Array(vs.buffer, vs.byteOffset, vs.length * 2);
  const dst = new Int32Array(values.buffer);
  let i = 0;
  let j = oFrom;
  let k = 0;
  while (i < n || j < oTo) {
    const a = i < n ? ts[i] : Infinity;
    const b = j < oTo ? ooo.ts[j] : Infinity;
    if (a <= b) {
      timestamps[k] = a;
      dst[2 * k] = src[2 * i];
      dst[2 * k + 1] = src[2 * i + 1];
      i++;
      if (a === b) j++;
    } else {
      timestamps[k] = b;
      ooo.copyValue(j, dst, k);
      j++;
    }
    k++;
  }
  return { timestamps: timestamps.subarray(0, k), values: values.subarray(0, k) };
}

/** The first index in a[0, end) whose value is >= x (a sorted). */
function lowerBound(a: Float64Array, x: number, end = a.length): number {
  let lo = 0;
  let hi = end;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
