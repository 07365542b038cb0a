// Storage for head chunks: small byte strings that die together (truncation
// drops whole time ranges), so they are carved out of shared slabs instead of
// costing an ArrayBuffer (and its bookkeeping, ~250 bytes in V8) each. A slab
// is freed by the GC once no chunk in it is referenced.

const DEFAULT_SLAB_SIZE = 256 * 1024;

export class ChunkArena<Slab extends Uint8Array = Uint8Array> {
  /** The slab of the last alloc(). */
  slab: Slab;
  private used = 0;

  protected readonly slabSize: number;
  private readonly newSlab: (n: number) => Slab;

  constructor(slabSize = DEFAULT_SLAB_SIZE, newSlab: (n: number) => Slab = (n) => new Uint8Array(n) as Slab) {
    this.slabSize = slabSize;
    this.newSlab = newSlab;
    this.slab = newSlab(0);
  }

  /** Reserves n bytes; returns their offset in `this.slab` (read it right after). */
  alloc(n: number): number {
    if (this.dedicated(n)) {
      this.slab = this.newSlab(n);
      this.used = this.slabSize; // a dedicated slab; the next alloc starts a fresh one
      return 0;
    }
    if (this.used + n > this.slab.length) {
      this.slab = this.nextSlab();
      this.used = 0;
    }
    const off = this.used;
    this.used += n;
    return off;
  }

  /** Copies `bytes` into the arena; returns their offset in `this.slab` (read it right after). */
  copy(bytes: Uint8Array): number {
    const off = this.alloc(bytes.length);
    this.slab.set(bytes, off);
    return off;
  }

  /** Copies `bytes` into the arena; returns the copy. */
  copyOf(bytes: Uint8Array): Uint8Array {
    const off = this.copy(bytes);
    return this.slab.subarray(off, off + bytes.length);
  }

  /** Whether n bytes get a slab of their own rather than a range of a shared one. */
  protected dedicated(n: number): boolean {
    return n > this.slabSize >>> 3;
  }

  /** A slab of slabSize bytes for the next allocations. */
  protected nextSlab(): Slab {
    return this.newSlab(this.slabSize);
  }
}

/** Spare slabs kept for reuse per arena, in bytes (or one slab, if larger). */
const MAX_SPARE_BYTES = 4 * 1024 * 1024;
/**
 * The largest slab: just above glibc's largest dynamic mmap threshold (32 MiB on 64-bit), so a
 * slab this size is always a mapping of its own, handed back to the kernel when freed.
 */
const MAX_REUSED_SLAB = 32 * 1024 * 1024 + 64 * 1024;

/**
 * An arena for space that is handed back: the open chunks, each owned by one series until it
 * closes or outgrows it. A slab whose ranges were all released is reused whole, at once, or freed.
 * Slabs grow with the space in use (an eighth of it, up to MAX_REUSED_SLAB): a big head's slabs
 * are then mappings of their own that go back to the kernel when freed, where 256 KiB slabs left
 * holes in the C heap that stayed resident (the first chunk of every series grows by doubling,
 * and a slab lives until its slowest series leaves it: ~0.3 KB per series at 1 M series). Space
 * never released (a series dropped with its open chunk) is freed by the GC as in ChunkArena.
 * Releasing a range that is still read corrupts it: only its owner may.
 */
export class ReusingArena extends ChunkArena {
  /** Bytes handed out and not yet released, per shared slab. */
  private readonly live = new WeakMap<Uint8Array, number>();
  private liveBytes = 0;
  private readonly spare: Uint8Array[] = [];
  private spareBytes = 0;

  /** Gives back n bytes at some offset of `slab` that alloc() handed out. */
  release(slab: Uint8Array, n: number): void {
    const live = this.live.get(slab);
    if (live === undefined) return; // a dedicated slab
    this.liveBytes -= n;
    if (live > n || slab === this.slab) {
      this.live.set(slab, live - n);
      return;
    }
    this.retire(slab);
  }

  /** Bytes in use (handed out, not released) and in spare slabs. */
  get stats(): { liveBytes: number; spareBytes: number } {
    return { liveBytes: this.liveBytes, spareBytes: this.spareBytes };
  }

  protected override nextSlab(): Uint8Array {
    const old = this.slab;
    if (this.live.get(old) === 0) this.retire(old); // emptied while it was the current one
    const size = Math.min(MAX_REUSED_SLAB, Math.max(this.slabSize, 2 ** Math.ceil(Math.log2(this.liveBytes / 8))));
    for (;;) {
      const s = this.spare.pop();
      if (s === undefined) return new Uint8Array(size);
      this.spareBytes -= s.length;
      if (s.length >= size) return s; // smaller ones are left to the GC
    }
  }

  override alloc(n: number): number {
    const off = super.alloc(n);
    if (!this.dedicated(n)) {
      this.live.set(this.slab, (this.live.get(this.slab) ?? 0) + n);
      this.liveBytes += n;
    }
    return off;
  }

  private retire(slab: Uint8Array): void {
    this.live.delete(slab);
    if (this.spareBytes + slab.length > Math.max(MAX_SPARE_BYTES, slab.length)) return;
    this.spare.push(slab);
    this.spareBytes += slab.length;
  }
}
