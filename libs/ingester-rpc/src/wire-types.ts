// The messages of ingester.proto (strata.ingester.v1) as the gRPC code holds them: field names as
// in the .proto (proto-loader's keepCase), longs as numbers, enums as their names. Types only, so
// the codecs (proto.ts, stream-codec.ts) and the client and server share them without importing each other.

import type { Labels } from '@strata/model';

export interface WireQuery {
  tenant: string;
  start_timestamp_ms: number;
  end_timestamp_ms: number;
  matchers: WireMatcher[];
  hints?: WireHints | null;
  accept_chunks?: boolean;
}

export interface WireMatcher {
  type: 'EQUAL' | 'NOT_EQUAL' | 'REGEX_MATCH' | 'REGEX_NO_MATCH';
  name: string;
  value: string;
}

interface WireHints {
  start_ms: number;
  end_ms: number;
  step_ms: number;
  func: string;
  range_ms: number;
}

export interface WireSeries {
  labels: Labels;
  timestamps: Uint8Array;
  values: Uint8Array;
  histogram_timestamps?: Uint8Array;
  histograms?: WireHistogram[];
  chunks?: WireChunk[];
}

export interface WireChunk {
  min_time_ms: number;
  max_time_ms: number;
  data: Uint8Array;
}

export interface WireHistogram {
  counter_reset_hint: string;
  schema: number;
  zero_threshold: number;
  zero_count: number;
  count: number;
  sum: number;
  positive_spans: { offset: number; length: number }[];
  negative_spans: { offset: number; length: number }[];
  positive_buckets: number[];
  negative_buckets: number[];
  custom_values: number[];
}

export interface WireExemplarsQuery {
  tenant: string;
  start_timestamp_ms: number;
  end_timestamp_ms: number;
  matcher_sets: { matchers: WireMatcher[] }[];
}

export interface WireExemplarSeries {
  series_labels: Labels;
  exemplars: { labels: Labels; value: number; timestamp_ms: number }[];
}
