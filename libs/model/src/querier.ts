// The one seam every reader implements: the head, an ingester client, a block
// reader and the merged querier all answer the same questions.

import type { Labels } from './labels.ts';
import type { Matcher } from './matchers.ts';

/** One series' samples in time order; timestamps in milliseconds. */
export interface Series {
  labels: Labels;
  timestamps: Float64Array;
  values: Float64Array;
  /** Native histogram samples, in time order; absent for float-only series. */
  histograms?: { timestamps: Float64Array; values: NativeHistogram[] };
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

export interface SelectParams {
  tenant: string;
  matchers: Matcher[];
  /** Inclusive bounds in milliseconds. */
  mint: number;
  maxt: number;
}

export interface LabelValuesParams extends SelectParams {
  name: string;
}

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
