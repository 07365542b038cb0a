// What one query may take out of storage, enforced where the data is read (the
// ingester's head) as well as in the querier: an over-budget select stops early
// instead of decoding everything first. One wording for both places.

import { StrataError } from '@strata/errors';
import type { Series } from './querier.ts';

export interface QueryBudget {
  /** Series one select may return; 0 or absent: no limit (-querier.max-fetched-series-per-query). */
  maxSeries?: number;
  /** Samples one select may decode; 0 or absent: no limit (-querier.max-samples). */
  maxSamples?: number;
  /** Estimated bytes (estimatedSeriesBytes) one select may hold; 0 or absent: no limit (-querier.max-estimated-memory-per-query). */
  maxEstimatedMemoryBytes?: number;
  /** Chunk bytes (seriesChunkBytes) one select may fetch; 0 or absent: no limit (-querier.max-fetched-chunk-bytes-per-query). */
  maxChunkBytes?: number;
  /** Chunks (seriesChunkCount) one select may fetch; 0 or absent: no limit (-querier.max-fetched-chunks-per-query). */
  maxChunks?: number;
}

type BudgetKind = 'series' | 'samples' | 'memory' | 'chunk-bytes' | 'chunks';

const ERROR_NAMES: Record<BudgetKind, string> = {
  series: 'max-series-per-query',
  samples: 'max-samples-per-query',
  memory: 'max-estimated-memory-per-query',
  'chunk-bytes': 'max-chunks-bytes-per-query',
  chunks: 'max-chunks-per-query',
};

export function queryBudgetMessage(what: BudgetKind, limit: number): string {
  switch (what) {
    case 'series':
      return (
        `the query exceeded the maximum number of series (limit: ${limit} series) (err-strata-max-series-per-query). ` +
        'Consider reducing the time range and/or number of series selected by the query, e.g. by narrowing down the label matchers, ' +
        "or raise the tenant's max_fetched_series_per_query (-querier.max-fetched-series-per-query)"
      );
    case 'samples':
      // Prometheus' own words first (clients match on them), then the limit and the flag.
      return (
        `query processing would load too many samples into memory in query execution (limit: ${limit} samples) (err-strata-max-samples-per-query); ` +
        'narrow the query or raise -querier.max-samples'
      );
    case 'memory':
      return (
        `the query exceeded the maximum estimated memory per query (limit: ${limit} bytes) (err-strata-max-estimated-memory-per-query); ` +
        'narrow the query (fewer series, a shorter range or a larger step) or raise -querier.max-estimated-memory-per-query'
      );
    case 'chunk-bytes':
      // Mimir's words, then the flag.
      return (
        `the query exceeded the aggregated chunks size limit (limit: ${limit} bytes) (err-strata-max-chunks-bytes-per-query). ` +
        'Consider reducing the time range and/or number of series selected by the query, e.g. by narrowing down the label matchers, ' +
        "or raise the tenant's max_fetched_chunk_bytes_per_query (-querier.max-fetched-chunk-bytes-per-query)"
      );
    case 'chunks':
      return (
        `the query exceeded the maximum number of chunks (limit: ${limit} chunks) (err-strata-max-chunks-per-query). ` +
        'Consider reducing the time range and/or number of series selected by the query, e.g. by narrowing down the label matchers, ' +
        "or raise the tenant's max_fetched_chunks_per_query (-querier.max-fetched-chunks-per-query)"
      );
  }
}

export function queryBudgetExceeded(what: BudgetKind, limit: number): StrataError {
  return new StrataError(ERROR_NAMES[what], 'unprocessable', queryBudgetMessage(what, limit));
}

/** What a fetched series is estimated to hold in a querier: objects and arrays per series, label strings, 16 bytes per float sample. */
const SERIES_OVERHEAD_BYTES = 512;
const LABEL_OVERHEAD_BYTES = 64;
const FLOAT_SAMPLE_BYTES = 16;
/** A native histogram sample decoded: its object, spans and bucket arrays (a typical one). */
const HISTOGRAM_SAMPLE_BYTES = 400;

/**
 * Float samples a series holds in [mint, maxt]: exact when decoded; for chunks (Series.chunks) each
 * chunk's count scaled by the share of its time span inside the range, since they are not decoded.
 */
export function seriesFloatSamples(s: Series, mint = -Infinity, maxt = Infinity): number {
  if (s.chunks === undefined) return s.timestamps.length;
  let n = 0;
  for (const c of s.chunks) {
    const inside = Math.min(c.maxTime, maxt) - Math.max(c.minTime, mint) + 1;
    n += c.maxTime > c.minTime ? Math.ceil((c.samples * inside) / (c.maxTime - c.minTime + 1)) : c.samples;
  }
  return n;
}

/** Bytes a float sample takes in an XOR chunk, for samples read decoded (scrape data: 1 to 2; Prometheus' figure is 1.37). */
const XOR_SAMPLE_BYTES = 2;
/** Bytes a native histogram sample takes in a histogram chunk (a typical 10-bucket one). */
const HISTOGRAM_CHUNK_SAMPLE_BYTES = 24;

/**
 * The chunk bytes a fetched series cost (-querier.max-fetched-chunk-bytes-per-query): its chunks'
 * encoded sizes when it came as chunks; read decoded (a head asked for samples), what they take encoded.
 */
export function seriesChunkBytes(s: Series): number {
  let bytes = (s.histograms?.timestamps.length ?? 0) * HISTOGRAM_CHUNK_SAMPLE_BYTES;
  if (s.chunks === undefined) return bytes + s.timestamps.length * XOR_SAMPLE_BYTES;
  for (const c of s.chunks) bytes += c.data.byteLength;
  return bytes;
}

/** Samples in one chunk as the head cuts them (Prometheus' 120), for series read decoded. */
const SAMPLES_PER_CHUNK = 120;

/**
 * The chunks a fetched series cost (-querier.max-fetched-chunks-per-query): its chunks when it came
 * as chunks; read decoded (a head asked for samples), the chunks its samples fill at 120 a chunk.
 */
export function seriesChunkCount(s: Series): number {
  if (s.chunks !== undefined) return s.chunks.length;
  const hs = s.histograms?.timestamps.length ?? 0;
  return Math.ceil(s.timestamps.length / SAMPLES_PER_CHUNK) + Math.ceil(hs / SAMPLES_PER_CHUNK);
}

/** The memory a fetched series is estimated to take while a query holds it (-querier.max-estimated-memory-per-query); for chunks, once decoded. */
export function estimatedSeriesBytes(s: Series, mint = -Infinity, maxt = Infinity): number {
  let bytes = SERIES_OVERHEAD_BYTES + seriesFloatSamples(s, mint, maxt) * FLOAT_SAMPLE_BYTES + (s.histograms?.timestamps.length ?? 0) * HISTOGRAM_SAMPLE_BYTES;
  for (const l of s.labels) bytes += LABEL_OVERHEAD_BYTES + 2 * (l.name.length + l.value.length);
  return bytes;
}
