// Errors the remote_write codec raises, each a StrataError of the kind the
// edge answers (the distributor maps kinds to statuses in one place). Every one
// here is the sender's fault, so none is retriable.

import { StrataError, type ErrorKind } from '@strata/errors';

export type RemoteWriteErrorCode = 'bad-snappy' | 'too-large' | 'bad-protobuf' | 'bad-v2-request' | 'unsupported-media-type' | 'unsupported-content-encoding';

const KIND: Record<RemoteWriteErrorCode, ErrorKind> = {
  'bad-snappy': 'bad-input',
  'too-large': 'too-large',
  'bad-protobuf': 'bad-input',
  'bad-v2-request': 'bad-input',
  'unsupported-media-type': 'unsupported-media-type',
  'unsupported-content-encoding': 'unsupported-media-type',
};

export class RemoteWriteError extends StrataError {
  /** The code without its prefix: what went wrong in the codec's own words. */
  readonly reason: RemoteWriteErrorCode;

  /** `message` must be one line: it goes back to the sender as the response body. */
  constructor(reason: RemoteWriteErrorCode, message: string) {
    super(reason, KIND[reason], message);
    this.reason = reason;
  }
}

/** A malformed protobuf body; `reason` names the field and the byte offset. */
export function badProtobuf(reason: string): RemoteWriteError {
  return new RemoteWriteError('bad-protobuf', 'protobuf: ' + reason);
}

/** A remote write 2.0 request whose symbol references cannot be resolved; names the series. */
export function badV2Request(reason: string): RemoteWriteError {
  return new RemoteWriteError('bad-v2-request', 'remote write 2.0: ' + reason);
}
