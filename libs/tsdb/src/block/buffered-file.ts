// Append-only file writer for block files: synchronous appends into a buffer,
// asynchronous flushes, fsync on close. Tracks the file position for offsets.

import { open, type FileHandle } from 'node:fs/promises';

const DEFAULT_BUFFER = 1 << 20;

export class BufferedFileWriter {
  /** Bytes appended so far (the file offset of the next byte). */
  pos = 0;
  private buf: Uint8Array;
  private used = 0;
  private full: Uint8Array[] = [];

  private readonly fh: FileHandle;
  readonly path: string;

  private constructor(fh: FileHandle, path: string, bufferSize: number) {
    this.fh = fh;
    this.path = path;
    this.buf = new Uint8Array(bufferSize);
  }

  static async create(path: string, bufferSize = DEFAULT_BUFFER): Promise<BufferedFileWriter> {
    return new BufferedFileWriter(await open(path, 'w'), path, bufferSize);
  }

  /** True once enough is buffered that the caller should await flush(). */
  get needsFlush(): boolean {
    return this.full.length > 0;
  }

  write(bytes: Uint8Array): void {
    let off = 0;
    while (off < bytes.length) {
      const n = Math.min(bytes.length - off, this.buf.length - this.used);
      this.buf.set(bytes.subarray(off, off + n), this.used);
      this.used += n;
      off += n;
      if (this.used === this.buf.length) {
        this.full.push(this.buf);
        this.buf = new Uint8Array(this.buf.length);
        this.used = 0;
      }
    }
    this.pos += bytes.length;
  }

  /** Appends zero bytes until pos is a multiple of `align`. */
  pad(align: number): void {
    const p = this.pos % align;
    if (p !== 0) this.write(new Uint8Array(align - p));
  }

  /** Writes out full buffers (not the partial one). */
  async flush(): Promise<void> {
    const full = this.full;
    this.full = [];
    for (const b of full) await writeAll(this.fh, b);
  }

  /** Flushes everything, fsyncs and closes. */
  async close(): Promise<void> {
    try {
      await this.flush();
      if (this.used > 0) await writeAll(this.fh, this.buf.subarray(0, this.used));
      this.used = 0;
      await this.fh.sync();
    } finally {
      await this.fh.close();
    }
  }

  /** Closes without caring for the contents (on failure paths). */
  async abort(): Promise<void> {
    await this.fh.close().catch(() => undefined);
  }
}

async function writeAll(fh: FileHandle, bytes: Uint8Array): Promise<void> {
  let off = 0;
  while (off < bytes.length) {
    const { bytesWritten } = await fh.write(bytes, off, bytes.length - off);
    off += bytesWritten;
  }
}
