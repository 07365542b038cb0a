// Errors the OTLP codec raises; every one is the sender's fault (never retriable).
// The distributor maps `status` to the HTTP answer in one place.

export type OtlpErrorCode =
  | 'bad-protobuf'
  | 'bad-json'
  | 'bad-request'
  | 'bad-gzip'
  | 'too-large'
  | 'unsupported-media-type'
  | 'unsupported-content-encoding';

const STATUS: Record<OtlpErrorCode, number> = {
  'bad-protobuf': 400,
  'bad-json': 400,
  'bad-request': 400,
  'bad-gzip': 400,
  'too-large': 413,
  'unsupported-media-type': 415,
  'unsupported-content-encoding': 415,
};

export class OtlpError extends Error {
  override readonly name = 'OtlpError';
  readonly status: number;
  readonly retriable = false;

  /** `message` must be one line: it goes back to the sender. */
  constructor(
    readonly code: OtlpErrorCode,
    message: string,
  ) {
    super(message);
    this.status = STATUS[code];
  }
}
