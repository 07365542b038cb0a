// The parts of an OTLP ExportMetricsServiceRequest that become Prometheus series,
// as both decoders (protobuf, JSON) produce them and the encoder takes them.
// Attribute values are kept as the string a label would carry (pdata's AsString).

import type { MetricKind } from './names.ts';

export interface KeyValue {
  key: string;
  value: string;
}

/** AggregationTemporality: 0 unspecified, 1 delta, 2 cumulative. */
export type Temporality = 0 | 1 | 2;
export const TEMPORALITY_DELTA = 1;
export const TEMPORALITY_CUMULATIVE = 2;

/** DataPointFlags.FLAG_NO_RECORDED_VALUE: the point marks a series gone (a Prometheus stale marker). */
export const FLAG_NO_RECORDED_VALUE = 1;

/** Prometheus' stale marker NaN (0x7ff0000000000002). */
export const STALE_NAN = new Float64Array(new BigUint64Array([0x7ff0000000000002n]).buffer)[0];

export interface OtlpExemplar {
  filteredAttributes: KeyValue[];
  timeUnixNano: bigint;
  value: number;
  /** 8 bytes, or empty. */
  spanId: Uint8Array;
  /** 16 bytes, or empty. */
  traceId: Uint8Array;
}

export interface NumberDataPoint {
  attributes: KeyValue[];
  startTimeUnixNano: bigint;
  timeUnixNano: bigint;
  value: number;
  exemplars: OtlpExemplar[];
  flags: number;
}

export interface HistogramDataPoint {
  attributes: KeyValue[];
  startTimeUnixNano: bigint;
  timeUnixNano: bigint;
  count: number;
  /** Absent when the sender did not set it (then there is no `_sum` series). */
  sum: number | undefined;
  bucketCounts: number[];
  explicitBounds: number[];
  exemplars: OtlpExemplar[];
  flags: number;
}

/** One side's buckets of an exponential histogram: bucket i (from `offset`) covers (base^i, base^(i+1)], base = 2^(2^-scale). */
export interface ExponentialBuckets {
  offset: number;
  bucketCounts: number[];
}

export interface ExponentialHistogramDataPoint {
  attributes: KeyValue[];
  startTimeUnixNano: bigint;
  timeUnixNano: bigint;
  count: number;
  sum: number | undefined;
  scale: number;
  zeroCount: number;
  zeroThreshold: number;
  positive: ExponentialBuckets;
  negative: ExponentialBuckets;
  exemplars: OtlpExemplar[];
  flags: number;
}

export interface SummaryDataPoint {
  attributes: KeyValue[];
  startTimeUnixNano: bigint;
  timeUnixNano: bigint;
  count: number;
  sum: number;
  quantileValues: { quantile: number; value: number }[];
  flags: number;
}

export interface OtlpMetric {
  name: string;
  description: string;
  unit: string;
  kind: MetricKind;
  /** Sums and histograms; 0 for the others. */
  temporality: Temporality;
  /** Sums only. */
  monotonic: boolean;
  /** Gauge and sum points. */
  numberPoints: NumberDataPoint[];
  histogramPoints: HistogramDataPoint[];
  summaryPoints: SummaryDataPoint[];
  /** Exponential histogram points (they become native histograms) and how many there are. */
  exponentialPoints: ExponentialHistogramDataPoint[];
  exponentialPointCount: number;
}

export interface ScopeMetrics {
  /** The instrumentation scope; its attributes are kept for scope promotion (`otel_scope_<key>`). */
  scope: { name: string; version: string; attributes: KeyValue[] };
  schemaUrl: string;
  metrics: OtlpMetric[];
}

export interface ResourceMetrics {
  resource: KeyValue[];
  scopeMetrics: ScopeMetrics[];
}

export interface ExportMetricsRequest {
  resourceMetrics: ResourceMetrics[];
}
