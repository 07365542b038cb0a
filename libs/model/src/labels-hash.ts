// A 30-bit hash of a label set, small enough to be a V8 small integer so the head's
// series map never boxes its keys. It folds one FNV-1a hash per name and per value, so
// labels given as strings, as bytes or as references into a record's symbols table
// (each symbol hashed once per record) all hash alike. Collisions are resolved by
// comparing labels. Query shards (query-shard.ts) split series by it.

import type { Labels } from './labels.ts';

export const FNV_OFFSET = 0x811c9dc5;
export const FNV_PRIME = 0x01000193;

/** FNV-1a over a string's UTF-16 code units (over an ASCII string's bytes alike). */
export function stringHash(s: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), FNV_PRIME);
  return h;
}

/** Folds the next name's or value's stringHash into a label set's hash. */
export function foldHash(h: number, x: number): number {
  h = Math.imul(h ^ x, 0x9e3779b1);
  return h ^ (h >>> 15);
}

/** The hash foldHash starts from. */
export const SERIES_HASH_SEED = 0x2545f491;

/** The head's key of a folded hash. */
export function seriesKey(h: number): number {
  return h & 0x3fffffff;
}

export function hashLabels(labels: Labels): number {
  let h = SERIES_HASH_SEED;
  for (let i = 0; i < labels.length; i++) {
    h = foldHash(h, stringHash(labels[i].name));
    h = foldHash(h, stringHash(labels[i].value));
  }
  return seriesKey(h);
}
