// Errors of the object store lib, each a StrataError with a stable code and a kind.

import { StrataError } from '@strata/errors';

export class ObjectNotFoundError extends StrataError {
  readonly bucket: string;
  readonly key: string;

  constructor(bucket: string, key: string) {
    super('object-not-found', 'not-found', `object ${key} not found in ${bucket}`);
    this.bucket = bucket;
    this.key = key;
    this.name = 'ObjectNotFoundError';
  }
}

export class InvalidObjectKeyError extends StrataError {
  constructor(key: string, why: string) {
    super('object-key-invalid', 'bad-input', `invalid object key ${JSON.stringify(key)}: ${why}`);
    this.name = 'InvalidObjectKeyError';
  }
}

export class BucketConfigError extends StrataError {
  constructor(message: string) {
    super('bucket-config', 'internal', message);
    this.name = 'BucketConfigError';
  }
}

export function isObjectNotFound(err: unknown): boolean {
  return err instanceof ObjectNotFoundError;
}

/** exists() of a store without a cheaper check: its attributes, absent when it answers not found. */
export async function foundByAttributes(bucket: { attributes(key: string): Promise<unknown> }, key: string): Promise<boolean> {
  try {
    await bucket.attributes(key);
    return true;
  } catch (err) {
    if (err instanceof ObjectNotFoundError) return false;
    throw err;
  }
}
