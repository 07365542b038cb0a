// Snappy *block* format bodies (not the framed format), as remote write sends them.
// Must never allocate a body's declared size before checking it against the limit.

import { compress, uncompress, uncompressedLength } from '@strata/snappy';
import { RemoteWriteError } from './errors.ts';

/**
 * Buffers that decompressed bodies borrow and give back once nothing reads them any more:
 * a fresh buffer per body cost ≈ 90 ns a sample more (allocation and GC of large
 * ArrayBuffers). At most `maxFreeBytes` are kept free.
 */
export class BodyBuffers {
  private free: Uint8Array[] = [];
  private freeBytes = 0;
  private readonly maxFreeBytes: number;

  constructor(maxFreeBytes = 64 << 20) {
    this.maxFreeBytes = maxFreeBytes;
  }

  /** A buffer of at least `n` bytes, taken from the free ones when one fits. */
  take(n: number): Uint8Array {
    for (let i = this.free.length - 1; i >= 0; i--) {
      const b = this.free[i];
      if (b.length < n) continue;
      this.free[i] = this.free[this.free.length - 1];
      this.free.pop();
      this.freeBytes -= b.length;
      return b;
    }
    // Powers of two (from 64 KiB) fit the next bodies too; a body above 8 MiB gets its own size.
    if (n > 8 << 20) return new Uint8Array(n);
    let size = 64 * 1024;
    while (size < n) size *= 2;
    return new Uint8Array(size);
  }

  /** Gives back the buffer under `view` (from decompressBody); the caller reads nothing of it afterwards. */
  give(view: Uint8Array): void {
    const b = new Uint8Array(view.buffer);
    if (this.freeBytes + b.length > this.maxFreeBytes) return;
    this.free.push(b);
    this.freeBytes += b.length;
  }
}

/**
 * Decompresses a remote write body, refusing one that would exceed `maxBytes` once decompressed.
 * With `buffers`, the result is a view of a borrowed buffer: give it back when done with it.
 */
export function decompressBody(body: Uint8Array, maxBytes: number, buffers?: BodyBuffers): Buffer {
  if (body.length === 0) throw new RemoteWriteError('bad-snappy', 'snappy: corrupt input (empty body)');
  const header = uncompressedLength(body);
  if (header === undefined) throw new RemoteWriteError('bad-snappy', 'snappy: corrupt input (bad length header)');
  const n = header.length;
  if (n > maxBytes) {
    throw new RemoteWriteError(
      'too-large',
      `decompressed body would be ${n} bytes, above the limit of ${maxBytes} bytes; send smaller batches (lower max_samples_per_send)`,
    );
  }
  const out = buffers?.take(n) ?? Buffer.allocUnsafe(n);
  const failure = uncompress(body, header.start, out, n);
  if (failure !== undefined) {
    buffers?.give(out);
    throw new RemoteWriteError('bad-snappy', `snappy: corrupt input (${failure})`);
  }
  return Buffer.from(out.buffer, out.byteOffset, n);
}

/** Compresses with the snappy block format (what remote write senders use). */
export function compressBody(buf: Uint8Array): Buffer {
  return compress(buf);
}
