// Label sets of the head kept flat (name, value, ...) compared with and hashed beside labels
// given as strings, bytes or record symbol references. The hash itself is @strata/model's.

import { FNV_OFFSET, FNV_PRIME, SERIES_HASH_SEED, compareUtf8, foldHash, seriesKey, type EncodedLabels, type Labels } from '@strata/model';

export function flatEquals(flat: readonly string[], labels: Labels): boolean {
  if (flat.length !== labels.length * 2) return false;
  for (let i = 0; i < labels.length; i++) {
    if (flat[2 * i] !== labels[i].name || flat[2 * i + 1] !== labels[i].value) return false;
  }
  return true;
}

/** compareLabels of two flat label lists (name, value, name, value, …): element by element, the shorter first on a tie. */
export function compareFlatLabels(a: readonly string[], b: readonly string[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return compareUtf8(a[i], b[i]);
  return a.length - b.length;
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
