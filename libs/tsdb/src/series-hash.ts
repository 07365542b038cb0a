// A 30-bit hash of a label set, small enough to be a V8 small integer so the head's
// series map never boxes its keys. It folds one FNV-1a hash per name and per value, so
// labels given as strings, as bytes or as references into a record's symbols table
// (each symbol hashed once per record) all hash alike. Collisions are resolved by
// comparing labels.

import type { EncodedLabels, Labels } from '@strata/model';

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

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

export function flatEquals(flat: readonly string[], labels: Labels): boolean {
  if (flat.length !== labels.length * 2) return false;
  for (let i = 0; i < labels.length; i++) {
    if (flat[2 * i] !== labels[i].name || flat[2 * i + 1] !== labels[i].value) return false;
  }
  return true;
}

export function flatToLabels(flat: readonly string[]): Labels {
  const out: Labels = new Array<Labels[number]>(flat.length >>> 1);
  for (let i = 0; i < out.length; i++) out[i] = { name: flat[2 * i], value: flat[2 * i + 1] };
  return out;
}

/**
 * hashLabels of labels still in their bytes, or -1 when a byte is not ASCII
 * (then only the decoded strings give the same hash as hashLabels).
 */
export function hashLabelBytes(l: EncodedLabels): number {
  const b = l.bytes;
  const a = l.ranges;
  let h = SERIES_HASH_SEED;
  let bits = 0;
  for (let k = l.firstLabel * 4, end = k + l.labelCount * 4; k < end; k += 2) {
    let x = FNV_OFFSET;
    for (let i = a[k], e = a[k + 1]; i < e; i++) {
      bits |= b[i];
      x = Math.imul(x ^ b[i], FNV_PRIME);
    }
    h = foldHash(h, x);
  }
  return bits < 0x80 ? seriesKey(h) : -1;
}

/** flatEquals against ASCII label bytes. */
export function flatEqualsBytes(flat: readonly string[], l: EncodedLabels): boolean {
  if (flat.length !== l.labelCount * 2) return false;
  const b = l.bytes;
  const a = l.ranges;
  for (let j = 0, k = l.firstLabel * 4; j < flat.length; j++, k += 2) {
    const s = flat[j];
    const start = a[k];
    if (s.length !== a[k + 1] - start) return false;
    for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) !== b[start + i]) return false;
  }
  return true;
}

/** flatEquals against labels as pairs of references refs[from..to) into a record's symbols. */
export function flatEqualsRefs(flat: readonly string[], strings: readonly string[], refs: Uint32Array, from: number, to: number): boolean {
  if (flat.length !== to - from) return false;
  for (let j = 0; j < flat.length; j++) if (flat[j] !== strings[refs[from + j]]) return false;
  return true;
}
