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
}

type BudgetKind = 'series' | 'samples' | 'memory';

const ERROR_NAMES: Record<BudgetKind, string> = {
  series: 'max-series-per-query',
  samples: 'max-samples-per-query',
  memory: 'max-estimated-memory-per-query',
};

export function queryBudgetMessage(what: BudgetKind, limit: number): string {
  switch (what) {
    case 'series':
      return (
        `the query exceeded the maximum number of series (limit: ${limit} series) (err-strata-max-series-per-query). ` +
        'Consider reducing the time range and/or number of series selected by the query, e.g. by narrowing down the label matchers, ' +
        'or raise -querier.max-fetched-series-per-query'
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

/** The memory a fetched series is estimated to take while a query holds it (-querier.max-estimated-memory-per-query). */
export function estimatedSeriesBytes(s: Series): number {
  let bytes = SERIES_OVERHEAD_BYTES + s.timestamps.length * FLOAT_SAMPLE_BYTES + (s.histograms?.timestamps.length ?? 0) * HISTOGRAM_SAMPLE_BYTES;
  for (const l of s.labels) bytes += LABEL_OVERHEAD_BYTES + 2 * (l.name.length + l.value.length);
  return bytes;
}
