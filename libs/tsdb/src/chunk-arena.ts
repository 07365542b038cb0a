// Storage for head chunks: small byte strings that die together (truncation
// drops whole time ranges), so they are carved out of shared slabs instead of
// costing an ArrayBuffer (and its bookkeeping, ~250 bytes in V8) each. A slab
// is freed by the GC once no chunk in it is referenced.

const DEFAULT_SLAB_SIZE = 256 * 1024;

export class ChunkArena<Slab extends Uint8Array = Uint8Array> {
  /** The slab of the last alloc(). */
  slab: Slab;
  private used = 0;

  private readonly slabSize: number;
  private readonly newSlab: (n: number) => Slab;

  constructor(slabSize = DEFAULT_SLAB_SIZE, newSlab: (n: number) => Slab = (n) => new Uint8Array(n) as Slab) {
    this.slabSize = slabSize;
    this.newSlab = newSlab;
    this.slab = newSlab(0);
  }

  /** Reserves n bytes; returns their offset in `this.slab` (read it right after). */
  alloc(n: number): number {
    if (n > this.slabSize >>> 3) {
      this.slab = this.newSlab(n);
      this.used = this.slabSize; // a dedicated slab; the next alloc starts a fresh one
      return 0;
    }
    if (this.used + n > this.slab.length) {
      this.slab = this.newSlab(this.slabSize);
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
}
