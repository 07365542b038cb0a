// Errors the remote_write codec raises; the HTTP layer maps `status` to the
// response code in one place. Every one here is the sender's fault, so none is retriable.

export type RemoteWriteErrorCode =
  | 'bad-snappy'
  | 'too-large'
  | 'bad-protobuf'
  | 'bad-v2-request'
  | 'unsupported-media-type'
  | 'unsupported-content-encoding';

const STATUS: Record<RemoteWriteErrorCode, number> = {
  'bad-snappy': 400,
  'too-large': 413,
  'bad-protobuf': 400,
  'bad-v2-request': 400,
  'unsupported-media-type': 415,
  'unsupported-content-encoding': 415,
};

export class RemoteWriteError extends Error {
  override readonly name = 'RemoteWriteError';
  readonly code: RemoteWriteErrorCode;
  readonly status: number;
  readonly retriable: boolean;

  /** `message` must be one line: it goes back to the sender as the response body. */
  constructor(code: RemoteWriteErrorCode, message: string) {
    super(message);
    this.code = code;
    this.status = STATUS[code];
    this.retriable = false;
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
