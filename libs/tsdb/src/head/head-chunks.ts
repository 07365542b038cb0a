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
const READ_BLOCK_BYTES = 4 * 1024;
/** Read blocks kept per process (all tenants): 64 MiB. */
const MAX_READ_BLOCKS = (64 * 1024 * 1024) / READ_BLOCK_BYTES;
const EMPTY = new Uint8Array(0);

/**
 * Blocks of segment files read for queries. A query walks series in the order they were created;
 * when that is the order their chunks were closed and written (a sender's order that never
 * changed), one block read serves the chunks of some twenty series. When it is not (series created
 * under one shard count and sent under another, scrape intervals that differ), a query over many
 * series reads the blocks of every chunk wave in turn and more than the cache holds: blocks are
 * small so such a miss costs a short read, and a query copies what it takes out of them (a view
 * would keep an evicted block alive as long as the answer). A hit is an array index (each segment
 * holds its blocks); eviction is the clock algorithm over the blocks in the order they were read:
 * a block read again since its last turn gets another turn. File bytes never change once written,
 * so a view into a block stays right after the block is evicted.
 */
const readOrder: { seg: ChunkSegment; block: number }[] = [];
let readHand = 0;

function cacheBlock(seg: ChunkSegment, block: number, bytes: Uint8Array): void {
  if (seg.blocks[block] === undefined && readOrder.length >= MAX_READ_BLOCKS) {
    for (;;) {
      readHand %= readOrder.length;
      const victim = readOrder[readHand];
      if (victim.seg.used[victim.block] === 1) {
        victim.seg.used[victim.block] = 0;
        readHand++;
        continue;
      }
      victim.seg.blocks[victim.block] = undefined;
      readOrder[readHand] = { seg, block };
      readHand++;
      break;
    }
  } else if (seg.blocks[block] === undefined) {
    readOrder.push({ seg, block });
  }
  seg.blocks[block] = bytes;
}

function dropReadBlocks(seg: ChunkSegment): void {
  for (let i = readOrder.length - 1; i >= 0; i--) if (readOrder[i].seg === seg) readOrder.splice(i, 1);
  seg.blocks.length = 0;
}

function readFully(fd: number, out: Uint8Array, pos: number): number {
  let got = 0;
  while (got < out.length) {
    const n = readSync(fd, out, got, out.length - got, pos + got);
    if (n === 0) break;
    got += n;
  }
  return got;
}

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
  /** Blocks of the file in the read cache, by block number, and whether each was read since the clock last passed it. */
  readonly blocks: (Uint8Array | undefined)[] = [];
  readonly used = new Uint8Array(SEGMENT_BYTES / READ_BLOCK_BYTES);

  constructor(path: string, fd: number, buf: Uint8Array) {
    this.path = path;
    this.fd = fd;
    this.buf = buf;
  }

  get size(): number {
    return this.flushed + this.pending;
  }

  /**
   * The `len` bytes at `off`, never to be written to: for a query (`cached`) a view of a block of
   * the file kept in the process' read cache; otherwise (a block cut, which reads every chunk once
   * in label order, so a cache would only churn) a copy read on its own.
   */
  read(off: number, len: number, cached = true): Uint8Array {
    if (off >= this.flushed) return this.buf.slice(off - this.flushed, off - this.flushed + len);
    if (this.held !== null) {
      for (const [start, bytes] of this.held) if (off >= start && off < start + bytes.length) return bytes.slice(off - start, off - start + len);
    }
    const block = Math.floor(off / READ_BLOCK_BYTES);
    if (cached && Math.floor((off + len - 1) / READ_BLOCK_BYTES) === block) {
      const start = block * READ_BLOCK_BYTES;
      const at = off - start;
      let bytes = this.blocks[block];
      // A block read while the file ended inside it is read again once a chunk lies past that end.
      if (bytes === undefined || at + len > bytes.length) {
        const want = new Uint8Array(Math.min(READ_BLOCK_BYTES, this.flushed - start));
        bytes = want.subarray(0, readFully(this.fd, want, start));
        if (at + len > bytes.length) throw new Error(`head chunk file ${this.path} ends before offset ${off + len}`);
        cacheBlock(this, block, bytes);
      } else {
        this.used[block] = 1;
      }
      return bytes.subarray(at, at + len);
    }
    const out = new Uint8Array(len);
    if (readFully(this.fd, out, off) < len) throw new Error(`head chunk file ${this.path} ends before offset ${off + len}`);
    return out;
  }
}

/**
 * A closed chunk in a segment file, for a block cut: its bytes are read when `data` is read (each
 * time: a cut reads each once), so a cut of millions of series holds no copy of every chunk at once.
 * A class, not an object literal with a getter: one of those per chunk took some 470 bytes (its
 * own closure, context and a dictionary of properties), this takes about 50.
 */
export class FileChunk {
  readonly minTime: number;
  readonly maxTime: number;
  private readonly segment: ChunkSegment;
  private readonly offset: number;
  private readonly length: number;

  constructor(minTime: number, maxTime: number, segment: ChunkSegment, offset: number, length: number) {
    this.minTime = minTime;
    this.maxTime = maxTime;
    this.segment = segment;
    this.offset = offset;
    this.length = length;
  }

  get data(): Uint8Array {
    return this.segment.read(this.offset, this.length, false);
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
      dropReadBlocks(s);
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
    for (const s of this.segments) {
      dropReadBlocks(s);
      closeSync(s.fd);
    }
    this.segments.length = 0;
  }

  private segmentFor(n: number): ChunkSegment {
    const last = this.segments[this.segments.length - 1];
    if (last !== undefined && last.size + n <= this.segmentBytes) return last;
    let buf: Uint8Array | null = null;
    if (last !== undefined) {
      this.flush(last);
      buf = last.buf; // empty now: the new segment writes through it
      last.buf = EMPTY;
    }
    if (this.segments.length === 0) mkdirSync(this.dir, { recursive: true });
    const path = join(this.dir, String(this.next++).padStart(6, '0'));
    const seg = new ChunkSegment(path, openSync(path, 'w+'), buf ?? new Uint8Array(this.bufferBytes));
    this.segments.push(seg);
    return seg;
  }

  /**
   * Writes the segment's buffer out and empties it for the next chunks (reads of unflushed chunks
   * hand out copies, so none refers to it); a full buffer is replaced by one twice its size. One
   * buffer serves every segment in turn, instead of a new megabyte per flush for the C heap to
   * find room for and the GC to free. After a failed write the buffer is kept, as the only copy
   * of its chunks, and a new one takes its place.
   */
  private flush(seg: ChunkSegment): void {
    if (seg.pending === 0) return;
    const full = seg.pending + FIRST_BUFFER_BYTES > seg.buf.length;
    let failed = false;
    try {
      let done = 0;
      while (done < seg.pending) done += writeSync(seg.fd, seg.buf, done, seg.pending - done, seg.flushed + done);
    } catch (err) {
      (seg.held ??= []).push([seg.flushed, seg.buf.subarray(0, seg.pending)]);
      this.diskError = err as Error;
      failed = true;
    }
    seg.flushed += seg.pending;
    seg.pending = 0;
    if (full && this.bufferBytes < MAX_BUFFER_BYTES) this.bufferBytes *= 2;
    if (failed || seg.buf.length < this.bufferBytes) seg.buf = new Uint8Array(this.bufferBytes);
  }
}
