export { ERROR_KINDS, isRetriable } from './kinds.ts';
export type { ErrorKind } from './kinds.ts';
export { StrataError, asStrataError } from './strata-error.ts';
export type { StrataErrorOptions } from './strata-error.ts';
