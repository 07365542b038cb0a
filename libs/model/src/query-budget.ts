// What one query may take out of storage, enforced where the data is read (the
// ingester's head) as well as in the querier: an over-budget select stops early
// instead of decoding everything first. One wording for both places.

import { StrataError } from '@strata/errors';

export interface QueryBudget {
  /** Series one select may return; 0 or absent: no limit (-querier.max-fetched-series-per-query). */
  maxSeries?: number;
  /** Samples one select may decode; 0 or absent: no limit (-querier.max-samples). */
  maxSamples?: number;
}

export function queryBudgetMessage(what: 'series' | 'samples', limit: number): string {
  return what === 'series'
    ? `the query exceeded the maximum number of series (limit: ${limit} series) (err-strata-max-series-per-query). ` +
        'Consider reducing the time range and/or number of series selected by the query, e.g. by narrowing down the label matchers, ' +
        'or raise -querier.max-fetched-series-per-query'
    : `query processing would load too many samples into memory in query execution (limit: ${limit} samples) (err-strata-max-samples-per-query); ` +
        'narrow the query or raise -querier.max-samples';
}

export function queryBudgetExceeded(what: 'series' | 'samples', limit: number): StrataError {
  return new StrataError(what === 'series' ? 'max-series-per-query' : 'max-samples-per-query', 'unprocessable', queryBudgetMessage(what, limit));
}
