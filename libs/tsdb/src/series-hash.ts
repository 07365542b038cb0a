// A 30-bit hash of a label set (FNV-1a over names and values with separators),
// small enough to be a V8 small integer so the head's series map never boxes
// its keys. Collisions are resolved by comparing labels.

import type { EncodedLabels, Labels } from '@strata/model';

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

function mix(h: number, s: string): number {
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), FNV_PRIME);
  return h;
}

export function hashLabels(labels: Labels): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < labels.length; i++) {
    h = Math.imul(mix(h, labels[i].name) ^ 0xff, FNV_PRIME);
    h = Math.imul(mix(h, labels[i].value) ^ 0xfe, FNV_PRIME);
  }
  return h & 0x3fffffff;
}

/** Same hash over a flat [name0, value0, name1, value1, ...] array. */
function hashFlatLabels(flat: readonly string[]): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < flat.length; i += 2) {
    h = Math.imul(mix(h, flat[i]) ^ 0xff, FNV_PRIME);
    h = Math.imul(mix(h, flat[i + 1]) ^ 0xfe, FNV_PRIME);
  }
  return h & 0x3fffffff;
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
  let h = FNV_OFFSET;
  let bits = 0;
  for (let k = l.firstLabel * 4, end = k + l.labelCount * 4; k < end; k += 4) {
    for (let i = a[k], e = a[k + 1]; i < e; i++) {
      bits |= b[i];
      h = Math.imul(h ^ b[i], FNV_PRIME);
    }
    h = Math.imul(h ^ 0xff, FNV_PRIME);
    for (let i = a[k + 2], e = a[k + 3]; i < e; i++) {
      bits |= b[i];
      h = Math.imul(h ^ b[i], FNV_PRIME);
    }
    h = Math.imul(h ^ 0xfe, FNV_PRIME);
  }
  return bits < 0x80 ? h & 0x3fffffff : -1;
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
