// The Prometheus API edge: one table from error kind to the envelope's
// errorType and the HTTP status (Prometheus' and Mimir's pairs: bad_data 400,
// execution 422, timeout 503, canceled 499, ...). Libs below throw kinds; only this maps them.

import { StrataError, type ErrorKind } from '@strata/errors';

/** The `errorType` strings of Prometheus' HTTP API, plus Mimir's too_many_requests and too_large_entry. */
export type ErrorType = 'bad_data' | 'execution' | 'timeout' | 'canceled' | 'internal' | 'unavailable' | 'not_found' | 'too_many_requests' | 'too_large_entry';

export interface ApiErrorAnswer {
  errorType: ErrorType;
  status: number;
}

export const PROMETHEUS_API_ERRORS: Readonly<Record<ErrorKind, ApiErrorAnswer>> = {
  'bad-input': { errorType: 'bad_data', status: 400 },
  // A missing or unproven tenant: 401 so clients can tell it from a bad query, bad_data as before.
  unauthorized: { errorType: 'bad_data', status: 401 },
  'too-large': { errorType: 'too_large_entry', status: 413 },
  'unsupported-media-type': { errorType: 'bad_data', status: 415 },
  limit: { errorType: 'too_many_requests', status: 429 },
  unprocessable: { errorType: 'execution', status: 422 },
  'not-found': { errorType: 'not_found', status: 404 },
  conflict: { errorType: 'bad_data', status: 409 },
  // No query is ever deduplicated; should one be, it is Strata's bug.
  deduplicated: { errorType: 'internal', status: 500 },
  unavailable: { errorType: 'unavailable', status: 503 },
  timeout: { errorType: 'timeout', status: 503 },
  // The client went away (499 is nginx's "client closed request", as Prometheus answers).
  canceled: { errorType: 'canceled', status: 499 },
  internal: { errorType: 'internal', status: 500 },
};

/** A request parameter is unusable; the message names it and says what is accepted. */
export const badData = (message: string) => new StrataError('bad-data', 'bad-input', message);
