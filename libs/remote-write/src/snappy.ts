// Snappy *block* format bodies (not the framed format), as remote write sends them.
// Must never allocate a body's declared size before checking it against the limit.

import { compressSync, uncompressSync } from 'snappy';
import { RemoteWriteError } from './errors.ts';

/**
 * The uncompressed length a snappy block declares in its varint header, or -1
 * if the header is missing or malformed (snappy caps it at 32 bits).
 */
function snappyDeclaredLength(body: Uint8Array): number {
  let v = 0;
  let mul = 1;
  for (let i = 0; i < 5 && i < body.length; i++) {
    const b = body[i];
    v += (b & 0x7f) * mul;
    if (b < 0x80) return v > 0xffffffff ? -1 : v;
    mul *= 128;
  }
  return -1;
}

/** Decompresses a remote write body, refusing one that would exceed `maxBytes` once decompressed. */
export function decompressBody(body: Uint8Array, maxBytes: number): Buffer {
  if (body.length === 0) throw new RemoteWriteError('bad-snappy', 'snappy: corrupt input (empty body)');
  const declared = snappyDeclaredLength(body);
  if (declared < 0) throw new RemoteWriteError('bad-snappy', 'snappy: corrupt input (bad length header)');
  if (declared > maxBytes) {
    throw new RemoteWriteError(
      'too-large',
      `decompressed body would be ${declared} bytes, above the limit of ${maxBytes} bytes; send smaller batches (lower max_samples_per_send)`,
    );
  }
  try {
    return uncompressSync(body, { asBuffer: true }) as Buffer;
  } catch (err) {
    const reason = (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').trim();
    throw new RemoteWriteError('bad-snappy', reason.startsWith('snappy:') ? reason : `snappy: ${reason}`);
  }
}

/** Compresses with the snappy block format (what remote write senders use). */
export function compressBody(buf: Uint8Array): Buffer {
  return compressSync(buf);
}
