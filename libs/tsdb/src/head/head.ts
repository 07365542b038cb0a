// A tenant's in-memory head: series by label set (hashed, interned strings),
// postings for matchers, XOR chunks per series (120 samples, never across an
// aligned block boundary), an out-of-order window, exemplars and metric
// metadata. It never accepts two values for one timestamp and never takes a
// sample below what has been cut into blocks.

import {
  SERIES_HASH_SEED,
  compareUtf8,
  foldHash,
  hashLabels,
  seriesKey,
  inQueryShard,
  splitQueryShard,
  stringHash,
  type EncodedLabels,
  type Labels,
  type Matcher,
  type Series,
} from '@strata/model';
import { ChunkArena, ReusingArena } from './chunk-arena.ts';
import { HeadChunks } from './head-chunks.ts';
import { sameHistogram } from '../chunkenc/histogram-layout.ts';
import { zeroHistogram, type HistogramSample } from './histogram-series.ts';
import { ExemplarStorage, type Exemplar, type ExemplarInput } from './exemplars.ts';
import { SampleArena, type DecodedSamplesCache } from './decoded-samples.ts';
import { MemorySeries, type SeriesContext } from './memory-series.ts';
import type { EncodedChunk } from '../chunkenc/chunk-encoding.ts';
import { MetricMetadataStore, type MetricMetadataEntry, type MetricMetadataInput } from './metric-metadata.ts';
import type { OooInsert } from './ooo-samples.ts';
import { Postings } from '../index/postings.ts';
import { RecordSymbols, type HeadSymbols } from './record-symbols.ts';
import { SeriesRows } from './series-rows.ts';
import { compareFlatLabels, flatEquals, flatEqualsBytes, flatEqualsRefs, flatToLabels, hashLabelBytes } from './series-hash.ts';
import { HI_WORD, LO_WORD, MAX_ABS_TIMESTAMP } from '../chunkenc/xor-chunk.ts';
import { forEachInTurns, sortInTurns } from '../in-turns.ts';

export interface AppendStats {
  appended: number;
  /** Same timestamp and same value as the stored sample: an idempotent replay. */
  duplicates: number;
  /** Older than the series' last sample (and outside the out-of-order window). */
  outOfOrder: number;
  /** Same timestamp as a stored sample but another value. */
  conflicting: number;
  /** Below what the head may still take: already cut into blocks, or too far behind the head. */
  outOfBounds: number;
  exemplarsAppended: number;
  exemplarsRejected: number;
}

export function emptyAppendStats(): AppendStats {
  return { appended: 0, duplicates: 0, outOfOrder: 0, conflicting: 0, outOfBounds: 0, exemplarsAppended: 0, exemplarsRejected: 0 };
}

export interface HeadOptions {
  /**
   * Block range in ms (0: none). With a range, chunks never cross an aligned
   * boundary (so a cut block takes whole chunks) and, as in Prometheus, an
   * in-order sample more than half a range behind the head's newest is out of bounds.
   */
  chunkRangeMs?: number;
  samplesPerChunk?: number;
  /** Out-of-order window in ms, read per append so runtime overrides apply. Default 0: none. */
  outOfOrderTimeWindowMs?: () => number;
  /** Exemplar ring size (0 disables exemplars). Default 100000. */
  maxExemplars?: number;
  /** Metric families with metadata kept. Default 100000. */
  maxMetadataMetrics?: number;
  /** Decoded samples kept between queries (shared by the heads of one process); absent: none. */
  decodedSamples?: DecodedSamplesCache;
  /** Directory for closed chunks (emptied now, see HeadChunks); absent: they stay in memory. */
  chunksDir?: string;
}

/** A series of the head, as seriesBySymbols finds it: only for handing back to appendSamples. */
export type SeriesRef = MemorySeries;

/** One series of a block being cut from the head. */
export interface BlockSeries {
  readonly labels: Labels;
  readonly chunks: EncodedChunk[];
}

/**
 * A head series in a cut: its labels stay the head's flat strings and are made when the block
 * writer takes them, one series at a time (a cut of millions of series held 300 bytes of label
 * objects per series otherwise).
 */
class HeadBlockSeries implements BlockSeries {
  readonly flat: readonly string[];
  readonly chunks: EncodedChunk[];

  constructor(flat: readonly string[], chunks: EncodedChunk[]) {
    this.flat = flat;
    this.chunks = chunks;
  }

  get labels(): Labels {
    return flatToLabels(this.flat);
  }
}

export interface SeriesExemplars {
  labels: Labels;
  exemplars: Exemplar[];
}

const DEFAULT_SAMPLES_PER_CHUNK = 120;
const EMPTY_F64 = new Float64Array(0);
const NO_OOO = () => 0;
/** appendHistograms' sample time, handed to judge. */
const histogramTime = new Float64Array(1);
/** A start-timestamp zero sample: its time for judge, and the bits of +0. */
const startTime = new Float64Array(1);
const ZERO_WORDS = new Int32Array(2);

const OUT_OF_BOUNDS = 0;
const IN_ORDER = 1;
const SAME_TIME = 2;
const OLDER = 3;
type Verdict = typeof OUT_OF_BOUNDS | typeof IN_ORDER | typeof SAME_TIME | typeof OLDER;

export class Head {
  private readonly byHash = new Map<number, MemorySeries | MemorySeries[]>();
  private series: MemorySeries[] = [];
  private postings = new Postings();
  private strings = new Map<string, string>();
  private readonly recordSymbols = new RecordSymbols();
  /** recordSymbols' epoch the rows were learned in. */
  private rowsEpoch = 0;
  /** Series in the order records send them, by their symbol ids (seriesBySymbols' first guess). */
  private readonly rows = new SeriesRows<MemorySeries>();
  /** Label fields as records encode them, one copy per series (see sameEncoded). */
  private readonly rawLabels = new ChunkArena<Buffer>(64 * 1024, (n) => Buffer.allocUnsafeSlow(n));
  private readonly ctx: SeriesContext;
  private readonly chunkRange: number;
  private readonly oooWindow: () => number;
  private exemplarStore: ExemplarStorage<MemorySeries> | null = null;
  private readonly maxExemplars: number;
  private readonly metadataStore: MetricMetadataStore;
  private minT = Infinity;
  private maxT = -Infinity;
  private minValid = -Infinity;
  /** Reused view of the last appended values buffer as int32 words. */
  private wordsBuffer: ArrayBufferLike | null = null;
  private words: Int32Array<ArrayBufferLike> = new Int32Array(0);

  constructor(opts: HeadOptions = {}) {
    this.chunkRange = opts.chunkRangeMs ?? 0;
    this.ctx = {
      openArena: new ReusingArena(),
      closed: opts.chunksDir === undefined ? new ChunkArena() : new HeadChunks(opts.chunksDir),
      samplesPerChunk: opts.samplesPerChunk ?? DEFAULT_SAMPLES_PER_CHUNK,
      chunkRange: this.chunkRange,
      decoded: opts.decodedSamples ?? null,
    };
    this.oooWindow = opts.outOfOrderTimeWindowMs ?? NO_OOO;
    this.maxExemplars = opts.maxExemplars ?? 100_000;
    this.metadataStore = new MetricMetadataStore(opts.maxMetadataMetrics);
  }

  get numSeries(): number {
    return this.series.length;
  }

  /** Times the series rows started over to follow the order records list series in (see SeriesRows). */
  get orderRelearnings(): number {
    return this.rows.order.relearnings;
  }

  /** Lowest sample time held (a lower bound after truncation); Infinity when empty. */
  get minTime(): number {
    return this.minT;
  }

  /** Newest sample time appended; -Infinity when nothing was. */
  get maxTime(): number {
    return this.maxT;
  }

  /** The oldest sample actually held (a scan of every series); Infinity when empty. */
  actualMinTime(): number {
    let t = Infinity;
    for (const s of this.series) {
      const m = s.minTime();
      if (m < t) t = m;
    }
    return t;
  }

  /** Samples below this are out of bounds (they are, or would have been, in blocks). */
  get minValidTime(): number {
    return this.minValid;
  }

  setMinValidTime(t: number): void {
    if (t > this.minValid) this.minValid = t;
  }

  /**
   * Appends one series' samples. Timestamps need not be sorted; each sample is
   * judged against what is stored. Value bits are copied exactly.
   */
  append(
    labels: Labels | EncodedLabels,
    timestamps: Float64Array,
    values: Float64Array,
    stats: AppendStats,
    exemplars?: readonly ExemplarInput[],
    starts?: Float64Array,
  ): void {
    const s = Array.isArray(labels) ? this.getOrCreate(labels) : this.getOrCreateEncoded(labels);
    this.appendSamples(s, timestamps, values, 0, timestamps.length, stats, starts);
    if (exemplars !== undefined && exemplars.length > 0) this.appendExemplars(s, exemplars, stats);
  }

  /**
   * Appends samples [from, to) of `timestamps` and `values` to a series found by seriesBySymbols, as
   * append does. The in-order path hands the series arrays and indexes, never a time or value word:
   * a double (or an int32 outside the small-integer range) passed to a call that is not inlined is
   * boxed on the heap, once per sample. `starts`: each sample's start timestamp (0: none), see appendStartZero.
   */
  appendSamples(s: SeriesRef, timestamps: Float64Array, values: Float64Array, from: number, to: number, stats: AppendStats, starts?: Float64Array): void {
    if (starts !== undefined) {
      for (let i = from; i < to; i++) {
        this.appendStartZero(s, starts[i], timestamps[i], null, stats);
        this.appendSamples(s, timestamps, values, i, i + 1, stats);
      }
      return;
    }
    if (values.buffer !== this.wordsBuffer) {
      this.wordsBuffer = values.buffer;
      this.words = new Int32Array(values.buffer, 0, values.buffer.byteLength >>> 2);
    }
    const words = this.words;
    const base = values.byteOffset >>> 2;
    for (let i = from; i < to; i++) {
      const when = this.judge(timestamps, i, s);
      const t = timestamps[i];
      const w = base + 2 * i;
      if (when === OUT_OF_BOUNDS) {
        stats.outOfBounds++;
      } else if (when === IN_ORDER) {
        s.appendInOrderAt(timestamps, i, words, w);
        if (t > this.maxT) this.maxT = t;
        if (t < this.minT) this.minT = t;
        stats.appended++;
      } else if (when === SAME_TIME) {
        if (!s.lastIsHistogram && s.lastHi === words[w + HI_WORD] && s.lastLo === words[w + LO_WORD]) stats.duplicates++;
        else stats.conflicting++;
      } else {
        const win = this.oooWindow();
        if (win > 0 && t >= this.maxT - win) {
          this.countOoo(s.insertOoo(t, words[w + HI_WORD], words[w + LO_WORD]), t, stats);
        } else {
          stats.outOfOrder++;
        }
      }
    }
  }

  /**
   * A format-3 record's symbols table bound to this head (symbol i is bytes [start[i], end[i])
   * of `bytes`): each symbol as the head's own string where it has one, with its hash. Valid
   * until the next call.
   */
  symbols(bytes: Uint8Array, start: Int32Array, end: Int32Array, count: number): HeadSymbols {
    const sym = this.recordSymbols.bind(bytes, start, end, count, this.strings);
    if (this.recordSymbols.epoch !== this.rowsEpoch) {
      this.rowsEpoch = this.recordSymbols.epoch;
      this.rows.startOver();
    }
    this.rows.begin(2 * this.series.length + 1024);
    return sym;
  }

  /**
   * The series whose labels are refs[from..to) (name and value references into the
   * record's symbols, in turn), created when absent; when `create` is false an absent
   * series stays absent (undefined), for per-tenant series limits. The series that followed
   * the previous one last time is tried first (SeriesRows), then the series by hash.
   */
  seriesBySymbols(sym: HeadSymbols, refs: Uint32Array, from: number, to: number, create: boolean): SeriesRef | undefined {
    const guess = this.rows.guess(sym.ids, refs, from, to);
    if (guess !== undefined) return guess;
    const s = this.lookupBySymbols(sym, refs, from, to, create);
    if (s !== undefined) this.rows.found(s, sym.ids, refs, from, to);
    return s;
  }

  private lookupBySymbols(sym: HeadSymbols, refs: Uint32Array, from: number, to: number, create: boolean): MemorySeries | undefined {
    let h = SERIES_HASH_SEED;
    for (let k = from; k < to; k++) h = foldHash(h, sym.hashes[refs[k]]);
    h = seriesKey(h);
    const found = this.byHash.get(h);
    if (found !== undefined) {
      if (!Array.isArray(found)) {
        if (flatEqualsRefs(found.lbls, sym.strings, refs, from, to)) return found;
      } else {
        for (const s of found) if (flatEqualsRefs(s.lbls, sym.strings, refs, from, to)) return s;
      }
    }
    if (!create) return undefined;
    const labels: Labels = new Array<Labels[number]>((to - from) >>> 1);
    for (let i = 0; i < labels.length; i++) labels[i] = { name: sym.strings[refs[from + 2 * i]], value: sym.strings[refs[from + 2 * i + 1]] };
    const s = this.getOrCreate(labels, h);
    // The new series' strings are the head's now: later records of this one compare by identity.
    for (let k = from; k < to; k++) this.recordSymbols.adopt(refs[k], s.lbls[k - from]);
    return s;
  }

  /**
   * Appends one series' native histogram samples (validated by the caller:
   * buckets match spans, counts non-negative), each judged as floats are: in
   * order; the same timestamp as a stored sample with an identical histogram
   * (a no-op, so a replay is idempotent); or older than the series' newest
   * sample and inside the out-of-order window, kept beside the in-order
   * chunks (as Prometheus 3 keeps out-of-order native histograms).
   */
  appendHistograms(labels: Labels | EncodedLabels, samples: readonly HistogramSample[], stats: AppendStats): void {
    if (samples.length === 0) return;
    const s = Array.isArray(labels) ? this.getOrCreate(labels) : this.getOrCreateEncoded(labels);
    for (const sample of samples) {
      const { timestamp: t, histogram: h, float } = sample;
      if (sample.startTimestamp !== undefined) this.appendStartZero(s, sample.startTimestamp, t, sample, stats);
      histogramTime[0] = t;
      const when = this.judge(histogramTime, 0, s);
      if (when === OUT_OF_BOUNDS) {
        stats.outOfBounds++;
      } else if (when === IN_ORDER) {
        s.appendHistogram(t, h, float);
        if (t > this.maxT) this.maxT = t;
        if (t < this.minT) this.minT = t;
        stats.appended++;
      } else if (when === SAME_TIME) {
        const last = s.hist?.last;
        if (s.lastIsHistogram && last != null && sameHistogram(last, h)) stats.duplicates++;
        else stats.conflicting++;
      } else {
        const w = this.oooWindow();
        if (w > 0 && t >= this.maxT - w) this.countOoo(s.insertOooHistogram(t, h, float), t, stats);
        else stats.outOfOrder++;
      }
    }
  }

  /**
   * Prometheus' created-timestamp zero ingestion: a zero at start time `st` (0: none) before the
   * sample at `t` (an empty histogram of the same layout, marked as a counter reset, before
   * `histogram`; +0 before a float), so rate() and increase() see the counter start from zero.
   * Only when st is before t, inside the head's bounds and after the series' newest sample: a
   * zero that would be out of order or at a stored sample's time is dropped without a count
   * (long-lived counters send the same start time with every sample), never kept out of order.
   */
  private appendStartZero(s: MemorySeries, st: number, t: number, histogram: HistogramSample | null, stats: AppendStats): void {
    if (st === 0 || t === 0 || !(st < t)) return;
    startTime[0] = st;
    if (this.judge(startTime, 0, s) !== IN_ORDER) return;
    if (histogram === null) s.appendInOrderAt(startTime, 0, ZERO_WORDS, 0);
    else s.appendHistogram(st, zeroHistogram(histogram.histogram), histogram.float);
    if (st > this.maxT) this.maxT = st;
    if (st < this.minT) this.minT = st;
    stats.appended++;
  }

  private countOoo(r: OooInsert, t: number, stats: AppendStats): void {
    if (r === 'added') {
      stats.appended++;
      if (t < this.minT) this.minT = t;
    } else if (r === 'duplicate') stats.duplicates++;
    else stats.conflicting++;
  }

  /**
   * Where the sample at timestamps[i] stands in series `s`, for floats and histograms alike:
   * outside the head's bounds (not an integer, below the min valid time, or more than half a
   * chunk range behind the newest sample, as Prometheus), after the series' last sample, at its
   * time, or before it. An array and index, not the time: see appendSamples.
   */
  private judge(timestamps: Float64Array, i: number, s: MemorySeries): Verdict {
    const t = timestamps[i];
    if (!(t >= -MAX_ABS_TIMESTAMP && t <= MAX_ABS_TIMESTAMP) || Math.floor(t) !== t || t < this.minValid) return OUT_OF_BOUNDS;
    const order = s.orderAt(timestamps, i);
    if (order > 0) {
      const half = this.chunkRange / 2;
      return half > 0 && t < this.maxT - half ? OUT_OF_BOUNDS : IN_ORDER;
    }
    return order === 0 ? SAME_TIME : OLDER;
  }

  /** Whether a series with exactly these labels is in the head (never creates one); for per-tenant series limits. */
  hasSeries(labels: Labels): boolean {
    const found = this.byHash.get(hashLabels(labels));
    if (found === undefined) return false;
    if (!Array.isArray(found)) return flatEquals(found.lbls, labels);
    for (const s of found) if (flatEquals(s.lbls, labels)) return true;
    return false;
  }

  appendMetadata(m: MetricMetadataInput): void {
    this.metadataStore.add(m);
  }

  /**
   * Series with samples in [mint, maxt], in the order they were created. The
   * synchronous primitive under RangeHead, which is what readers should use.
   */
  select(matchers: Matcher[], mint: number, maxt: number): Series[] {
    const ids = this.seriesIds(matchers);
    return this.seriesOf(ids, 0, ids.length, mint, maxt);
  }

  /** The ids of the series the matchers (a query shard's among them) select, ascending: a caller reads them in slices with seriesOf. */
  seriesIds(matchers: Matcher[]): number[] {
    const { matchers: rest, shard } = splitQueryShard(matchers);
    const ids = this.postings.select(rest);
    return shard === undefined ? ids : ids.filter((id) => inQueryShard(this.series[id].hash, shard));
  }

  /**
   * The series ids[from, to) with their samples in [mint, maxt]; series without any are left out.
   * 'latest' (an instant selector evaluated at maxt): a series whose newest sample is a float in the
   * range gives that sample alone, the only one the evaluation reads. 'chunks': a series whose
   * floats all sit in chunks gives those chunks undecoded (Series.chunks), the others samples.
   */
  seriesOf(ids: readonly number[], from: number, to: number, mint: number, maxt: number, read: 'samples' | 'latest' | 'chunks' = 'samples'): Series[] {
    const out: Series[] = [];
    const arena = new SampleArena();
    // Open chunks copied for a chunked read share slabs: no ArrayBuffer per series.
    const openCopies = read === 'chunks' ? new ChunkArena(64 * 1024) : null;
    for (let i = from; i < to; i++) {
      const s = this.series[ids[i]];
      const latest = read === 'latest' ? s.latestSample(mint, maxt, arena) : undefined;
      if (latest !== undefined) {
        out.push({ labels: (s.labelsView ??= flatToLabels(s.lbls)), timestamps: latest.timestamps, values: latest.values });
        continue;
      }
      const chunks = openCopies !== null ? s.queryChunks(mint, maxt, openCopies) : null;
      if (chunks !== null) {
        if (chunks.length > 0) out.push({ labels: (s.labelsView ??= flatToLabels(s.lbls)), timestamps: EMPTY_F64, values: EMPTY_F64, chunks });
        continue;
      }
      const got = s.samples(mint, maxt, arena);
      const hist = s.hist === null && s.oooH === null ? null : s.histogramSamples(mint, maxt);
      if ((got === null || got.timestamps.length === 0) && hist === null) continue;
      const series: Series = { labels: (s.labelsView ??= flatToLabels(s.lbls)), timestamps: got?.timestamps ?? EMPTY_F64, values: got?.values ?? EMPTY_F64 };
      if (hist !== null) series.histograms = hist;
      out.push(series);
    }
    return out;
  }

  /**
   * Label names of series matching the matchers with samples in [mint, maxt],
   * sorted byte-wise. Without matchers the range is judged for the head as a
   * whole (as Prometheus' head does): a scan of every series would cost more
   * than the answer is worth.
   */
  labelNames(matchers: Matcher[], mint: number, maxt: number): string[] {
    if (matchers.length === 0) return this.overlaps(mint, maxt) ? this.postings.labelNames().sort(compareUtf8) : [];
    const names = new Set<string>();
    for (const s of this.matching(matchers, mint, maxt)) for (let i = 0; i < s.lbls.length; i += 2) names.add(s.lbls[i]);
    return [...names].sort(compareUtf8);
  }

  /** Values of a label, like labelNames. */
  labelValues(name: string, matchers: Matcher[], mint: number, maxt: number): string[] {
    if (matchers.length === 0) return this.overlaps(mint, maxt) ? this.postings.labelValues(name).sort(compareUtf8) : [];
    const values = new Set<string>();
    for (const s of this.matching(matchers, mint, maxt)) {
      for (let i = 0; i < s.lbls.length; i += 2) if (s.lbls[i] === name) values.add(s.lbls[i + 1]);
    }
    return [...values].sort(compareUtf8);
  }

  /** Whether [mint, maxt] meets the times the head holds (an empty head meets none). */
  private overlaps(mint: number, maxt: number): boolean {
    return this.minT <= maxt && this.maxT >= mint;
  }

  /** Exemplars of the series matching the matchers with start <= t <= end. */
  exemplars(matchers: Matcher[], start: number, end: number): SeriesExemplars[] {
    const store = this.exemplarStore;
    if (store === null) return [];
    const owners = new Set<MemorySeries>();
    for (const id of this.postings.select(matchers)) owners.add(this.series[id]);
    const out: SeriesExemplars[] = [];
    for (const [s, exemplars] of store.select(owners, start, end)) out.push({ labels: flatToLabels(s.lbls), exemplars });
    return out;
  }

  /** Metric metadata by metric family name. */
  metadata(metric?: string, limit = 0): Map<string, MetricMetadataEntry[]> {
    return this.metadataStore.list(metric, limit);
  }

  /**
   * The series' data in [mint, maxt) for a block, sorted by labels in byte
   * order. From now on samples below maxt are out of bounds, so nothing can
   * land in the range after it was taken. Chunks are shared, not copied: they
   * are immutable (and those in files are read as the block is written).
   */
  snapshotForBlock(mint: number, maxt: number): BlockSeries[] {
    this.setMinValidTime(maxt);
    const out: HeadBlockSeries[] = [];
    for (const s of this.series) addBlockSeries(out, s, mint, maxt);
    return out.sort(compareBlockSeries);
  }

  /**
   * snapshotForBlock in turns of the event loop (forEachInTurns, sortInTurns): what a block cut
   * calls, so a head of millions of series keeps consuming and answering while it is cut. Samples
   * below maxt are refused from the first step, so the range does not change under the snapshot.
   */
  async snapshotForBlockInTurns(mint: number, maxt: number): Promise<BlockSeries[]> {
    this.setMinValidTime(maxt);
    const out: HeadBlockSeries[] = [];
    await forEachInTurns(this.series, (s) => addBlockSeries(out, s, mint, maxt));
    return sortInTurns(out, compareBlockSeries);
  }

  /** Drops every sample below mint (after they were persisted) and the series left empty. */
  truncate(mint: number): void {
    this.setMinValidTime(mint);
    let dropped = 0;
    for (const s of this.series) if (s.truncateBefore(mint)) dropped++;
    this.afterTruncate(mint, dropped);
  }

  /**
   * truncate in turns of the event loop: what an ingester calls after shipping a block, so a head of
   * millions of series keeps consuming and answering meanwhile (a query may see some series cut
   * and others not yet; the shipped block holds what is gone).
   */
  async truncateInTurns(mint: number): Promise<void> {
    this.setMinValidTime(mint);
    let dropped = 0;
    await forEachInTurns(this.series, (s) => {
      if (s.truncateBefore(mint)) dropped++;
    });
    this.afterTruncate(mint, dropped);
  }

  private afterTruncate(mint: number, dropped: number): void {
    if (this.minT < mint) this.minT = mint;
    if (dropped > 0) this.dropEmptySeries();
    if (this.series.length === 0) this.minT = Infinity;
    if (this.ctx.closed instanceof HeadChunks) this.ctx.closed.truncateBefore(mint);
  }

  /** Bytes of closed chunks in files, and why they are in memory instead once the disk failed. */
  get chunkFiles(): { bytes: number; segments: number; error: Error | null } | null {
    const c = this.ctx.closed;
    return c instanceof HeadChunks ? { bytes: c.diskBytes, segments: c.numSegments, error: c.diskError } : null;
  }

  /** Closes the chunk files; the head cannot be read afterwards. */
  close(): void {
    if (this.ctx.closed instanceof HeadChunks) this.ctx.closed.close();
  }

  private *matching(matchers: Matcher[], mint: number, maxt: number): Generator<MemorySeries> {
    for (const id of this.seriesIds(matchers)) {
      const s = this.series[id];
      if (s.hasDataIn(mint, maxt)) yield s;
    }
  }

  private appendExemplars(s: MemorySeries, exemplars: readonly ExemplarInput[], stats: AppendStats): void {
    if (this.maxExemplars <= 0) return;
    if (this.exemplarStore === null) this.exemplarStore = new ExemplarStorage<MemorySeries>(this.maxExemplars);
    for (const e of exemplars) {
      const r = this.exemplarStore.add(s, e);
      if (r === 'added') stats.exemplarsAppended++;
      else if (r !== 'duplicate') stats.exemplarsRejected++;
    }
  }

  /** The series of labels still in their bytes: an ASCII series already in the head is found without decoding them. */
  private getOrCreateEncoded(l: EncodedLabels): MemorySeries {
    const h = hashLabelBytes(l);
    if (h < 0) return this.getOrCreate(l.labels);
    const found = this.byHash.get(h);
    if (found !== undefined) {
      if (!Array.isArray(found)) {
        if (this.sameEncoded(found, l)) return found;
      } else {
        for (const s of found) if (this.sameEncoded(s, l)) return s;
      }
    }
    const s = this.getOrCreate(l.labels, h);
    this.keepRaw(s, l);
    return s;
  }

  /**
   * Whether `s` has the labels `l` holds. The same sender encodes a series' labels the same way
   * every time, so one memcmp of the label fields against the copy kept from the first record
   * answers most lookups; labels encoded otherwise (or a hash collision) are compared name by name.
   */
  private sameEncoded(s: MemorySeries, l: EncodedLabels): boolean {
    const slab = s.rawSlab;
    if (
      slab !== null &&
      l.rawStart >= 0 &&
      s.rawLen === l.rawEnd - l.rawStart &&
      slab.compare(l.bytes, l.rawStart, l.rawEnd, s.rawOff, s.rawOff + s.rawLen) === 0
    )
      return true;
    if (!flatEqualsBytes(s.lbls, l)) return false;
    if (slab === null) this.keepRaw(s, l);
    return true;
  }

  private keepRaw(s: MemorySeries, l: EncodedLabels): void {
    if (l.rawStart < 0 || s.rawSlab !== null) return;
    s.rawOff = this.rawLabels.copy(l.bytes.subarray(l.rawStart, l.rawEnd));
    s.rawSlab = this.rawLabels.slab;
    s.rawLen = l.rawEnd - l.rawStart;
  }

  private getOrCreate(labels: Labels, hash?: number): MemorySeries {
    const h = hash ?? hashLabels(labels);
    const found = this.byHash.get(h);
    if (found !== undefined) {
      if (!Array.isArray(found)) {
        if (flatEquals(found.lbls, labels)) return found;
      } else {
        for (const s of found) if (flatEquals(s.lbls, labels)) return s;
      }
    }
    const flat = new Array<string>(labels.length * 2);
    for (let i = 0; i < labels.length; i++) {
      flat[2 * i] = this.intern(labels[i].name);
      flat[2 * i + 1] = this.intern(labels[i].value);
    }
    const s = new MemorySeries(this.series.length, flat, h, this.ctx);
    this.series.push(s);
    if (found === undefined) this.byHash.set(h, s);
    else if (Array.isArray(found)) found.push(s);
    else this.byHash.set(h, [found, s]);
    this.postings.add(s.id, flat);
    return s;
  }

  /** Forgets empty series: renumbers the rest and rebuilds postings and the string table. */
  private dropEmptySeries(): void {
    const live: MemorySeries[] = [];
    const strings = new Map<string, string>();
    const postings = new Postings();
    for (const s of this.series) {
      if (s.isEmpty()) {
        s.id = -1;
        const e = this.byHash.get(s.hash);
        if (e === s) this.byHash.delete(s.hash);
        else if (Array.isArray(e)) {
          const rest = e.filter((x) => x !== s);
          if (rest.length === 1) this.byHash.set(s.hash, rest[0]);
          else this.byHash.set(s.hash, rest);
        }
        continue;
      }
      s.id = live.length;
      live.push(s);
      for (const str of s.lbls) strings.set(str, str);
      postings.add(s.id, s.lbls);
    }
    this.series = live;
    this.strings = strings;
    this.recordSymbols.forget();
    // A dropped series is never a guess again, nor kept alive by a row.
    this.rows.startOver();
    this.postings = postings;
  }

  private intern(s: string): string {
    const found = this.strings.get(s);
    if (found !== undefined) return found;
    this.strings.set(s, s);
    return s;
  }
}

/** The series' chunks in [mint, maxt) as a block series, its open chunk closed when it has nothing newer. */
function addBlockSeries(out: HeadBlockSeries[], s: MemorySeries, mint: number, maxt: number): void {
  if (!s.hasDataIn(mint, maxt - 1)) return;
  if (s.lastT < maxt) s.closeAllOpen();
  const chunks = s.encodedChunks(mint, maxt);
  if (chunks.length > 0) out.push(new HeadBlockSeries(s.lbls, chunks));
}

function compareBlockSeries(a: HeadBlockSeries, b: HeadBlockSeries): number {
  return compareFlatLabels(a.flat, b.flat);
}
