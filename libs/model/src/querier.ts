// The seams every reader implements: a head restricted to a range, a block and
// their merge answer BlockQuerier (one tenant); an ingester client, the bucket
// store and the merged querier answer Querier (any tenant). Same questions.

import type { Labels } from './labels.ts';
import type { Matcher } from './matchers.ts';

/** One series' samples in time order; timestamps in milliseconds. */
export interface Series {
  labels: Labels;
  timestamps: Float64Array;
  values: Float64Array;
  /** Native histogram samples, in time order; absent for float-only series. */
  histograms?: { timestamps: Float64Array; values: NativeHistogram[] };
  /**
   * Only from a select with `chunks: true`: the float samples as XOR chunks (timestamps and values
   * are then empty), for a reader that sends them on (the ingester's gRPC server) instead of
   * evaluating them. Never reaches the PromQL engine.
   */
  chunks?: SeriesChunk[];
}

/** Float samples as one XOR chunk (Prometheus' chunk encoding 1), in time order, not clipped to the selection. */
export interface SeriesChunk {
  /** Inclusive, ms. */
  minTime: number;
  maxTime: number;
  samples: number;
  data: Uint8Array;
}

/** A run of `length` consecutive buckets, `offset` buckets after the previous run. */
export interface HistogramSpan {
  offset: number;
  length: number;
}

/**
 * A native histogram sample with absolute (float) bucket counts: an
 * exponential schema (-4..8) or custom bounds (schema -53, `customValues`).
 */
export interface NativeHistogram {
  counterResetHint: 'unknown' | 'reset' | 'not_reset' | 'gauge';
  schema: number;
  zeroThreshold: number;
  zeroCount: number;
  count: number;
  sum: number;
  positiveSpans: HistogramSpan[];
  negativeSpans: HistogramSpan[];
  positiveBuckets: number[];
  negativeBuckets: number[];
  customValues?: number[];
}

/**
 * What the engine knows about a selection (Prometheus' storage.SelectHints):
 * a reader may use it to skip work, never to change the answer.
 */
export interface SelectHints {
  /** The selection's bounds in ms (the time range after lookback, range and offset). */
  start: number;
  end: number;
  /** Evaluation step in ms (the innermost subquery's); 0 for an instant query. */
  step?: number;
  /** The function or aggregation the selector is handed to, e.g. 'rate', 'sum'; absent if none. */
  func?: string;
  /** The range of a range selector (`[5m]`) in ms; 0 otherwise. */
  range?: number;
}

/** A selection in one tenant's data: matchers and a time range. */
export interface BlockSelectParams {
  matchers: Matcher[];
  /** Inclusive bounds in milliseconds. */
  mint: number;
  maxt: number;
  /** Aborted when the caller gave up (timeout, cancel): readers stop looping over series and throw. */
  signal?: AbortSignal;
  hints?: SelectHints;
  /**
   * The caller takes float samples as XOR chunks (Series.chunks) where a reader has them so, to send
   * them on undecoded; readers without chunks (and series with out-of-order or histogram samples in
   * range) answer with samples as always.
   */
  chunks?: boolean;
}

export interface BlockLabelValuesParams extends BlockSelectParams {
  name: string;
}

/**
 * One tenant's storage as a reader sees it (Prometheus' storage.Querier): a
 * head restricted to a range, a block, and the merge of several of them
 * answer the same three questions, each within [mint, maxt].
 */
export interface BlockQuerier {
  /** Series matching all matchers with samples in [mint, maxt]; each series once, samples in time order. */
  select(params: BlockSelectParams): Promise<Series[]>;
  /** Label names of series matching the matchers (all series when matchers are empty), sorted. */
  labelNames(params: BlockSelectParams): Promise<string[]>;
  /** Values of a label of series matching the matchers, sorted. */
  labelValues(params: BlockLabelValuesParams): Promise<string[]>;
}

export interface SelectParams extends BlockSelectParams {
  tenant: string;
}

export interface LabelValuesParams extends SelectParams {
  name: string;
}

/** Every tenant's storage: what the PromQL engine and the API read through. */
export interface Querier {
  select(params: SelectParams): Promise<Series[]>;
  /** Label names of series matching the matchers (all series when matchers are empty). */
  labelNames(params: SelectParams): Promise<string[]>;
  labelValues(params: LabelValuesParams): Promise<string[]>;
}

// --- Exemplars and metric metadata: optional capabilities of a reader -------------

export interface Exemplar {
  labels: Labels;
  value: number;
  /** Milliseconds. */
  timestamp: number;
}

export interface ExemplarSeries {
  seriesLabels: Labels;
  /** In time order. */
  exemplars: Exemplar[];
}

export interface ExemplarParams {
  tenant: string;
  /** Series matching any of the sets (one set per selector of the query). */
  matcherSets: Matcher[][];
  /** Inclusive bounds in milliseconds. */
  mint: number;
  maxt: number;
}

/** A reader that keeps exemplars (the ingester head's per-tenant circular buffer). */
export interface ExemplarQuerier {
  exemplars(params: ExemplarParams): Promise<ExemplarSeries[]>;
}

/** One metric family's metadata, as remote write sends it and /api/v1/metadata prints it. */
export interface MetricMetadataEntry {
  metricFamilyName: string;
  /** counter, gauge, histogram, gaugehistogram, summary, info, stateset or unknown. */
  type: string;
  help: string;
  unit: string;
}

export interface MetadataParams {
  tenant: string;
  /** Only this metric family; all when empty. */
  metric?: string;
}

/** A reader that keeps metric metadata. */
export interface MetadataQuerier {
  metadata(params: MetadataParams): Promise<MetricMetadataEntry[]>;
}
