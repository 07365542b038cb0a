// Errors of the block format: reading a corrupt or unsupported block, or asked
// to write data a block cannot hold. Fold into the lib's errors.ts registry
// once it exists; codes are stable.

export class BlockFormatError extends Error {
  readonly code = 'err-strata-block-corrupt';
  readonly status = 500;
  readonly retriable = false;

  constructor(message: string) {
    super(message);
    this.name = 'BlockFormatError';
  }
}

export class BlockUnsupportedError extends Error {
  readonly code = 'err-strata-block-unsupported';
  readonly status = 422;
  readonly retriable = false;

  constructor(message: string) {
    super(message);
    this.name = 'BlockUnsupportedError';
  }
}

export class BlockWriteError extends Error {
  readonly code = 'err-strata-block-write';
  readonly status = 500;
  readonly retriable = false;

  constructor(message: string) {
    super(message);
    this.name = 'BlockWriteError';
  }
}
