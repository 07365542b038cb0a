// The ruler's errors: kinds only; the config API and the Prometheus API edges map them to statuses.

import { StrataError, type ErrorKind } from '@strata/errors';

export class RulerError extends StrataError {
  constructor(name: string, kind: ErrorKind, message: string, options?: { cause?: unknown }) {
    super(name, kind, message, options);
  }
}
