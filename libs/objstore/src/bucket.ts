// The object store seam (Thanos' objstore.Bucket, trimmed): whole-object and
// range reads, atomic whole-object writes, idempotent deletes, listing by
// "directory". Keys use '/' separators and never start with one.

export interface ObjectAttributes {
  size: number;
  lastModified: Date;
}

/** A local file to upload without reading it into memory first. */
export interface FileBody {
  file: string;
}

export type PutBody = Uint8Array | FileBody;

export interface ListOptions {
  /** Every key under the prefix; otherwise one level, with sub-"directories" as keys ending in '/'. */
  recursive?: boolean;
}

export interface Bucket {
  /** For logs: filesystem:/path or s3://bucket. */
  readonly name: string;
  /** The whole object; ObjectNotFoundError if absent. */
  get(key: string): Promise<Uint8Array>;
  /** `length` bytes at `offset` (fewer only past the end of the object); ObjectNotFoundError if absent. */
  getRange(key: string, offset: number, length: number): Promise<Uint8Array>;
  /** Writes the whole object; readers see the old object or the new one, never a part. */
  put(key: string, body: PutBody): Promise<void>;
  /** Deletes the object; no error if it does not exist. */
  delete(key: string): Promise<void>;
  /** Keys under `prefix` (a "directory": '' or ending in '/'; a '/' is added if missing), sorted. */
  list(prefix: string, opts?: ListOptions): Promise<string[]>;
  exists(key: string): Promise<boolean>;
  /** Size and modification time; ObjectNotFoundError if absent. */
  attributes(key: string): Promise<ObjectAttributes>;
  close(): Promise<void>;
}

export function isFileBody(body: PutBody): body is FileBody {
  return !(body instanceof Uint8Array);
}

/** '' stays ''; anything else ends with exactly one '/'. */
export function dirPrefix(prefix: string): string {
  if (prefix === '') return '';
  return prefix.endsWith('/') ? prefix : prefix + '/';
}
