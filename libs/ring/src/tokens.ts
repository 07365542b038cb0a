// Tokens: each partition owns TOKENS_PER_PARTITION points on a 32-bit ring,
// derived only from its id (so every process computes the same ring without
// storing tokens), and a series token belongs to the partition owning the
// first ring token at or after it. Adding a partition therefore takes over
// about 1/(P+1) of the ring and moves only those series, all to itself.

export const TOKENS_PER_PARTITION = 128;

/** murmur3's 32-bit finaliser: spreads every input bit over the whole word. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

const cache = new Map<number, Uint32Array>();

/** The sorted, unique tokens of a partition; deterministic in the id. */
export function partitionTokens(id: number): Uint32Array {
  let tokens = cache.get(id);
  if (tokens) return tokens;
  // splitmix32 seeded from the id: an independent-looking stream per partition.
  let state = fmix32((id + 1) * 0x9e3779b1) | 0;
  const seen = new Set<number>();
  while (seen.size < TOKENS_PER_PARTITION) {
    state = (state + 0x9e3779b9) | 0;
    seen.add(fmix32(state));
  }
  tokens = Uint32Array.from(seen).sort();
  cache.set(id, tokens);
  return tokens;
}
