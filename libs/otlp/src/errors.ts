// Errors the OTLP codec raises, each a StrataError of the kind the edge answers
// (the distributor maps kinds to statuses in one place). Every one is the
// sender's fault, so none is retriable.

import { StrataError, type ErrorKind } from '@strata/errors';

export type OtlpErrorCode =
  'bad-protobuf' | 'bad-json' | 'bad-request' | 'bad-gzip' | 'bad-zstd' | 'too-large' | 'unsupported-media-type' | 'unsupported-content-encoding';

const KIND: Record<OtlpErrorCode, ErrorKind> = {
  'bad-protobuf': 'bad-input',
  'bad-json': 'bad-input',
  'bad-request': 'bad-input',
  'bad-gzip': 'bad-input',
  'bad-zstd': 'bad-input',
  'too-large': 'too-large',
  'unsupported-media-type': 'unsupported-media-type',
  'unsupported-content-encoding': 'unsupported-media-type',
};

export class OtlpError extends StrataError {
  override readonly name = 'OtlpError';
  /** The code without its `err-strata-otlp-` prefix. */
  readonly reason: OtlpErrorCode;

  /** `message` must be one line: it goes back to the sender. */
  constructor(reason: OtlpErrorCode, message: string) {
    super(`otlp-${reason}`, KIND[reason], message);
    this.reason = reason;
  }
}
