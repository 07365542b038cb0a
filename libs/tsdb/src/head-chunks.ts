// Closed head chunks on disk, as Prometheus keeps them in chunks_head/: a
// closed chunk never changes, so the head need not hold its bytes, only where
// they are. Chunks are appended to numbered segment files through a write
// buffer and read back (from the page cache, as a rule) when a query or a
// block cut asks. On start the directory is emptied: the head is rebuilt from
// Kafka, never from these files. A segment goes once the head is truncated
// past the newest chunk in it. If the disk refuses a write, the chunks stay in
// memory (nothing is lost) and every later one does too.

import { closeSync, mkdirSync, openSync, readSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ChunkArena } from './chunk-arena.ts';

const SEGMENT_BYTES = 128 * 1024 * 1024;
const FIRST_BUFFER_BYTES = 16 * 1024;
const MAX_BUFFER_BYTES = 1024 * 1024;

/** One segment file: flushed bytes on disk, the rest in its write buffer (or held after a failed flush). */
export class ChunkSegment {
  /** Bytes written to the file. */
  flushed = 0;
  /** Bytes in `buf` after `flushed`. */
  pending = 0;
  buf: Uint8Array;
  /** Newest sample time of any chunk in it. */
  maxTime = -Infinity;
  /** Buffers a flush could not write, kept so their chunks stay readable: [start offset, bytes]. */
  held: [number, Uint8Array][] | null = null;

  readonly path: string;
  readonly fd: number;

  constructor(path: string, fd: number, bufferBytes: number) {
    this.path = path;
    this.fd = fd;
    this.buf = new Uint8Array(bufferBytes);
  }

  get size(): number {
    return this.flushed + this.pending;
  }

  /** A copy of the `len` bytes at `off`. */
  read(off: number, len: number): Uint8Array {
    if (off >= this.flushed) return this.buf.slice(off - this.flushed, off - this.flushed + len);
    if (this.held !== null) {
      for (const [start, bytes] of this.held) if (off >= start && off < start + bytes.length) return bytes.slice(off - start, off - start + len);
    }
    const out = new Uint8Array(len);
    let got = 0;
    while (got < len) {
      const n = readSync(this.fd, out, got, len - got, off + got);
      if (n === 0) throw new Error(`head chunk file ${this.path} ends before offset ${off + len}`);
      got += n;
    }
    return out;
  }
}

export class HeadChunks {
  /** The segment of the last copy() (read it right after), or memory once the disk failed. */
  slab: ChunkSegment | Uint8Array = new Uint8Array(0);
  /** Why chunks are kept in memory instead, once a write failed. */
  diskError: Error | null = null;

  private readonly segments: ChunkSegment[] = [];
  private next = 1;
  private bufferBytes = FIRST_BUFFER_BYTES;
  private readonly memory = new ChunkArena();

  private readonly dir: string;
  private readonly segmentBytes: number;

  constructor(dir: string, segmentBytes = SEGMENT_BYTES) {
    this.dir = dir;
    this.segmentBytes = segmentBytes;
    rmSync(dir, { recursive: true, force: true });
  }

  /** Bytes in segment files (flushed or not). */
  get diskBytes(): number {
    let n = 0;
    for (const s of this.segments) n += s.size;
    return n;
  }

  get numSegments(): number {
    return this.segments.length;
  }

  /** Stores a closed chunk whose newest sample is at maxTime; returns its offset in `this.slab`. */
  copy(bytes: Uint8Array, maxTime: number): number {
    if (this.diskError === null) {
      try {
        const seg = this.segmentFor(bytes.length);
        if (seg.pending + bytes.length > seg.buf.length) this.flush(seg);
        if (this.diskError === null) {
          const off = seg.size;
          if (bytes.length > seg.buf.length) seg.buf = new Uint8Array(bytes.length);
          seg.buf.set(bytes, seg.pending);
          seg.pending += bytes.length;
          if (maxTime > seg.maxTime) seg.maxTime = maxTime;
          this.slab = seg;
          return off;
        }
      } catch (err) {
        this.diskError = err as Error;
      }
    }
    const off = this.memory.copy(bytes);
    this.slab = this.memory.slab;
    return off;
  }

  /** Deletes the segments whose chunks all end before mint (the head no longer refers to them). */
  truncateBefore(mint: number): void {
    for (let i = this.segments.length - 1; i >= 0; i--) {
      const s = this.segments[i];
      if (s.maxTime >= mint) continue;
      this.segments.splice(i, 1);
      closeSync(s.fd);
      try {
        unlinkSync(s.path);
      } catch {
        // Already gone: nothing to free.
      }
    }
  }

  /** Closes every file (their chunks cannot be read afterwards). */
  close(): void {
    for (const s of this.segments) closeSync(s.fd);
    this.segments.length = 0;
  }

  private segmentFor(n: number): ChunkSegment {
    const last = this.segments[this.segments.length - 1];
    if (last !== undefined && last.size + n <= this.segmentBytes) return last;
    if (last !== undefined) this.flush(last);
    if (this.segments.length === 0) mkdirSync(this.dir, { recursive: true });
    const path = join(this.dir, String(this.next++).padStart(6, '0'));
    const seg = new ChunkSegment(path, openSync(path, 'w+'), this.bufferBytes);
    this.segments.push(seg);
    return seg;
  }

  /**
   * Writes the segment's buffer out. The buffer is replaced, not reused: reads hand out copies,
   * but a reused buffer would change under a chunk that sits in it. A full buffer grows the next.
   */
  private flush(seg: ChunkSegment): void {
    if (seg.pending === 0) return;
    const full = seg.pending + FIRST_BUFFER_BYTES > seg.buf.length;
    try {
      let done = 0;
      while (done < seg.pending) done += writeSync(seg.fd, seg.buf, done, seg.pending - done, seg.flushed + done);
    } catch (err) {
      (seg.held ??= []).push([seg.flushed, seg.buf.subarray(0, seg.pending)]);
      this.diskError = err as Error;
    }
    seg.flushed += seg.pending;
    seg.pending = 0;
    if (full && this.bufferBytes < MAX_BUFFER_BYTES) this.bufferBytes *= 2;
    seg.buf = new Uint8Array(this.bufferBytes);
  }
}
