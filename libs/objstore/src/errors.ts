// Errors of the object store lib, each with a stable code.

export class ObjectNotFoundError extends Error {
  readonly code = 'err-strata-object-not-found';
  readonly status = 404;
  readonly retriable = false;

  constructor(
    readonly bucket: string,
    readonly key: string,
  ) {
    super(`object ${key} not found in ${bucket}`);
    this.name = 'ObjectNotFoundError';
  }
}

export class InvalidObjectKeyError extends Error {
  readonly code = 'err-strata-object-key-invalid';
  readonly status = 400;
  readonly retriable = false;

  constructor(key: string, why: string) {
    super(`invalid object key ${JSON.stringify(key)}: ${why}`);
    this.name = 'InvalidObjectKeyError';
  }
}

export class BucketConfigError extends Error {
  readonly code = 'err-strata-bucket-config';
  readonly status = 500;
  readonly retriable = false;

  constructor(message: string) {
    super(message);
    this.name = 'BucketConfigError';
  }
}

export function isObjectNotFound(err: unknown): boolean {
  return err instanceof ObjectNotFoundError;
}
