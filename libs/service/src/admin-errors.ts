// The edge table of Strata's own plain-text operator endpoints (the ring's
// /ingester/prepare-partition-downscale and its kin): error kind → HTTP status.
// The push and query protocols have their own tables in their libs.

import type { ErrorKind } from '@strata/errors';

export const ADMIN_HTTP_STATUS: Readonly<Record<ErrorKind, number>> = {
  'bad-input': 400,
  unauthorized: 401,
  'too-large': 413,
  'unsupported-media-type': 415,
  limit: 429,
  unprocessable: 422,
  'not-found': 404,
  conflict: 409,
  deduplicated: 202,
  unavailable: 503,
  timeout: 503,
  canceled: 499,
  internal: 500,
};
