// Errors of the block format: reading a corrupt or unsupported block, or asked
// to write data a block cannot hold. All `internal`: a bad block is Strata's or
// the operator's problem, never the query's sender's. Codes are stable.

import { StrataError } from '@strata/errors';

export class BlockFormatError extends StrataError {
  constructor(message: string) {
    super('block-corrupt', 'internal', message);
    this.name = 'BlockFormatError';
  }
}

export class BlockUnsupportedError extends StrataError {
  constructor(message: string) {
    super('block-unsupported', 'internal', message);
    this.name = 'BlockUnsupportedError';
  }
}

export class BlockWriteError extends StrataError {
  constructor(message: string) {
    super('block-write', 'internal', message);
    this.name = 'BlockWriteError';
  }
}
