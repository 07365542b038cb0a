// Writes a block's chunks/ segment files (000001, 000002, ...; at most 512MiB
// each) and hands out chunk references: segment index << 32 | byte offset.

import { join } from 'node:path';
import { BufferedFileWriter } from './buffered-file.ts';
import { BlockWriteError } from './block-errors.ts';
import { crc32c } from '../encoding/crc32c.ts';
import { Encbuf } from '../encoding/encoding.ts';

export const CHUNKS_MAGIC = 0x85bd40dd;
const CHUNKS_FORMAT_V1 = 1;
export const SEGMENT_HEADER_SIZE = 8;
export const DEFAULT_SEGMENT_SIZE = 512 * 1024 * 1024;
/** uvarint length (<= 5 bytes) + encoding byte + CRC32. */
const MAX_CHUNK_OVERHEAD = 5 + 1 + 4;

export function segmentFileName(index: number): string {
  return String(index + 1).padStart(6, '0');
}

export function chunkRef(segment: number, offset: number): number {
  return segment * 4294967296 + offset;
}

export class ChunksWriter {
  private file: BufferedFileWriter | null = null;
  private segment = -1;
  private readonly files: string[] = [];
  private readonly scratch = new Encbuf(64);
  private readonly encodingByte = new Uint8Array(1);

  private readonly dir: string;
  private readonly segmentSize: number;

  constructor(dir: string, segmentSize = DEFAULT_SEGMENT_SIZE) {
    this.dir = dir;
    this.segmentSize = segmentSize;
  }

  /** Segment file names written so far (relative to the chunks dir). */
  get segmentFiles(): string[] {
    return this.files.slice();
  }

  get needsFlush(): boolean {
    return this.file?.needsFlush ?? false;
  }

  async flush(): Promise<void> {
    await this.file?.flush();
  }

  /** Appends one chunk and returns its reference. Await flush() when needsFlush. */
  async append(encoding: number, data: Uint8Array): Promise<number> {
    const size = MAX_CHUNK_OVERHEAD + data.length;
    if (this.file === null || (this.file.pos > SEGMENT_HEADER_SIZE && this.file.pos + size > this.segmentSize)) {
      await this.cut();
    }
    const f = this.file as BufferedFileWriter;
    const offset = f.pos;
    if (offset > 0xffffffff) throw new BlockWriteError('chunk segment offset exceeds 4 bytes');
    const s = this.scratch;
    s.reset();
    s.putUvarint(data.length);
    s.putByte(encoding);
    f.write(s.get());
    f.write(data);
    s.reset();
    this.encodingByte[0] = encoding;
    s.putBE32(crc32c(data, 0, data.length, crc32c(this.encodingByte)));
    f.write(s.get());
    return chunkRef(this.segment, offset);
  }

  private async cut(): Promise<void> {
    if (this.file) await this.file.close();
    this.segment++;
    const name = segmentFileName(this.segment);
    this.file = await BufferedFileWriter.create(join(this.dir, name));
    this.files.push(name);
    const h = new Encbuf(SEGMENT_HEADER_SIZE);
    h.putBE32(CHUNKS_MAGIC);
    h.putByte(CHUNKS_FORMAT_V1);
    h.putZeros(3);
    this.file.write(h.get());
  }

  /** Flushes and fsyncs the last segment. Returns the segment file names. */
  async close(): Promise<string[]> {
    if (this.file) await this.file.close();
    this.file = null;
    return this.segmentFiles;
  }

  async abort(): Promise<void> {
    await this.file?.abort();
    this.file = null;
  }
}
