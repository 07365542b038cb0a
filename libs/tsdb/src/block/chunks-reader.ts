// Reads chunks of a block's chunks/ segment files by reference, coalescing
// nearby chunks into one range read and checking each chunk's CRC32C.

import { BlockFormatError } from './block-errors.ts';
import { readExactly, type ByteSource } from './byte-source.ts';
import { CHUNKS_MAGIC, SEGMENT_HEADER_SIZE } from './chunks-writer.ts';
import { crc32c } from '../encoding/crc32c.ts';

const COALESCE_GAP = 16 * 1024;
/** Enough for the largest 120-sample XOR chunk plus framing; longer chunks are re-read. */
const CHUNK_SIZE_GUESS = 2400;

export interface RawChunk {
  encoding: number;
  /** Chunk data as stored (for XOR: 2-byte sample count, then the bit stream). */
  data: Uint8Array;
}

export class ChunksReader {
  private readonly sizes: number[];

  private readonly segments: ByteSource[];

  private constructor(segments: ByteSource[], sizes: number[]) {
    this.segments = segments;
    this.sizes = sizes;
  }

  /** `segments[i]` is chunks/00000(i+1). Checks each segment's header. */
  static async open(segments: ByteSource[]): Promise<ChunksReader> {
    const sizes: number[] = [];
    for (let i = 0; i < segments.length; i++) {
      const h = await readExactly(segments[i], 0, SEGMENT_HEADER_SIZE, `chunk segment ${i + 1}`);
      const magic = ((h[0] << 24) | (h[1] << 16) | (h[2] << 8) | h[3]) >>> 0;
      if (magic !== CHUNKS_MAGIC) throw new BlockFormatError(`chunk segment ${i + 1}: bad magic 0x${magic.toString(16)}`);
      if (h[4] !== 1) throw new BlockFormatError(`chunk segment ${i + 1}: unsupported format version ${h[4]}`);
      sizes.push(await segments[i].size());
    }
    return new ChunksReader(segments, sizes);
  }

  async close(): Promise<void> {
    for (const s of this.segments) await s.close?.();
  }

  /** Reads chunks by reference; result[i] belongs to refs[i]. */
  async read(refs: number[]): Promise<RawChunk[]> {
    const order = refs.map((_, i) => i).sort((a, b) => refs[a] - refs[b]);
    const out = new Array<RawChunk>(refs.length);
    let i = 0;
    while (i < order.length) {
      const seg = Math.floor(refs[order[i]] / 4294967296);
      if (seg >= this.segments.length) throw new BlockFormatError(`chunk ref ${refs[order[i]]} names segment ${seg + 1}, which does not exist`);
      const size = this.sizes[seg];
      const start = refs[order[i]] % 4294967296;
      let end = Math.min(start + CHUNK_SIZE_GUESS, size);
      let j = i + 1;
      while (j < order.length) {
        const r = refs[order[j]];
        if (Math.floor(r / 4294967296) !== seg) break;
        const o = r % 4294967296;
        if (o > end + COALESCE_GAP || end - start > 16 * 1024 * 1024) break;
        end = Math.min(Math.max(end, o + CHUNK_SIZE_GUESS), size);
        j++;
      }
      const buf = await this.segments[seg].read(start, end - start);
      for (let k = i; k < j; k++) {
        const o = refs[order[k]] % 4294967296;
        out[order[k]] = await this.chunkAt(seg, o, buf, o - start);
      }
      i = j;
    }
    return out;
  }

  private async chunkAt(seg: number, offset: number, buf: Uint8Array, p: number): Promise<RawChunk> {
    let b = buf;
    let at = p;
    let parsed = parseFrame(b, at);
    if (parsed === null) {
      const head = await this.segments[seg].read(offset, 6);
      const len = parseLen(head, 0);
      if (len === null) throw new BlockFormatError(`chunk at segment ${seg + 1} offset ${offset}: bad length`);
      b = await readExactly(this.segments[seg], offset, len.bytes + 1 + len.value + 4, `chunk at segment ${seg + 1} offset ${offset}`);
      at = 0;
      parsed = parseFrame(b, at);
      if (parsed === null) throw new BlockFormatError(`chunk at segment ${seg + 1} offset ${offset}: truncated`);
    }
    const { encStart, dataEnd } = parsed;
    const want = ((b[dataEnd] << 24) | (b[dataEnd + 1] << 16) | (b[dataEnd + 2] << 8) | b[dataEnd + 3]) >>> 0;
    const got = crc32c(b, encStart, dataEnd);
    if (want !== got) throw new BlockFormatError(`chunk at segment ${seg + 1} offset ${offset}: checksum mismatch`);
    return { encoding: b[encStart], data: b.subarray(encStart + 1, dataEnd) };
  }
}

function parseLen(b: Uint8Array, p: number): { value: number; bytes: number } | null {
  let value = 0;
  let mul = 1;
  for (let k = 0; k < 5 && p + k < b.length; k++) {
    const x = b[p + k];
    value += (x & 0x7f) * mul;
    if (x < 0x80) return { value, bytes: k + 1 };
    mul *= 128;
  }
  return null;
}

/** Frame = uvarint len, encoding byte, data, CRC32; null if not all in `b`. */
function parseFrame(b: Uint8Array, p: number): { encStart: number; dataEnd: number } | null {
  const len = parseLen(b, p);
  if (len === null) return null;
  const encStart = p + len.bytes;
  const dataEnd = encStart + 1 + len.value;
  if (dataEnd + 4 > b.length) return null;
  return { encStart, dataEnd };
}
