// Random-access reads of one file of a block, the only way the block reader
// touches bytes, so a local file and an object store's range reads are alike.

import { readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

/** Reads up to this size are made synchronously (see readSmall). */
const SYNC_READ_MAX_BYTES = 16 * 1024;
import { BlockFormatError } from './block-errors.ts';

export interface ByteSource {
  size(): Promise<number>;
  /** Exactly `length` bytes at `offset` (fewer only past the end of the file). */
  read(offset: number, length: number): Promise<Uint8Array>;
  close?(): Promise<void>;
}

export class FileByteSource implements ByteSource {
  private readonly fh: FileHandle;
  private readonly bytes: number;
  readonly path: string;

  private constructor(fh: FileHandle, bytes: number, path: string) {
    this.fh = fh;
    this.bytes = bytes;
    this.path = path;
  }

  static async open(path: string): Promise<FileByteSource> {
    const fh = await open(path, 'r');
    try {
      return new FileByteSource(fh, (await fh.stat()).size, path);
    } catch (err) {
      await fh.close();
      throw err;
    }
  }

  async size(): Promise<number> {
    return this.bytes;
  }

  async read(offset: number, length: number): Promise<Uint8Array> {
    const n = Math.max(0, Math.min(length, this.bytes - offset));
    const buf = new Uint8Array(n);
    if (n <= SYNC_READ_MAX_BYTES) return this.readSmall(buf, offset);
    let got = 0;
    while (got < n) {
      const { bytesRead } = await this.fh.read(buf, got, n - got, offset + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return got === n ? buf : buf.subarray(0, got);
  }

  /**
   * A series entry or a chunk: one pread in this thread. Through libuv's pool each such read cost
   * ~40 µs of round trip, most of a 112-series block select (224 of them); a read of a page the
   * kernel holds takes a few µs, and block files are read back soon after they are written.
   */
  private readSmall(buf: Uint8Array, offset: number): Uint8Array {
    let got = 0;
    while (got < buf.length) {
      const bytesRead = readSync(this.fh.fd, buf, got, buf.length - got, offset + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return got === buf.length ? buf : buf.subarray(0, got);
  }

  async close(): Promise<void> {
    await this.fh.close();
  }
}

export class MemoryByteSource implements ByteSource {
  private readonly bytes: Uint8Array;

  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
  }

  async size(): Promise<number> {
    return this.bytes.length;
  }

  async read(offset: number, length: number): Promise<Uint8Array> {
    return this.bytes.subarray(offset, Math.min(this.bytes.length, offset + length));
  }
}

/** Reads exactly [offset, offset + length) or throws: for ranges the format says exist. */
export async function readExactly(src: ByteSource, offset: number, length: number, what: string): Promise<Uint8Array> {
  const b = await src.read(offset, length);
  if (b.length !== length) {
    throw new BlockFormatError(`${what}: wanted ${length} bytes at offset ${offset}, file ends after ${b.length}`);
  }
  return b;
}
