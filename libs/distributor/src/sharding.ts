// The token of a series: a hash of (tenant, labels) so one series always
// lands on one partition (the ring picks which) and one ingester per zone.

import type { EncodedLabels, Label } from '@strata/model';
import { fmix32 } from '@strata/ring';

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

function fnv1a(hash: number, s: string): number {
  for (let i = 0; i < s.length; i++) {
    hash ^= s.charCodeAt(i);
    hash = Math.imul(hash, FNV_PRIME);
  }
  return hash;
}

/**
 * A 32-bit token for the series; labels as sent (validated as sorted). FNV-1a
 * leaves similar inputs close in the high bits, which the token ring orders
 * by, so the result goes through murmur3's finaliser.
 */
export function seriesToken(tenant: string, labels: readonly Label[]): number {
  return seriesTokenFrom(tenantSeed(tenant), labels);
}

/** The hash state after the tenant: computed once per request. */
export function tenantSeed(tenant: string): number {
  return fnv1a(FNV_OFFSET, tenant);
}

export function seriesTokenFrom(seed: number, labels: readonly Label[]): number {
  let h = seed;
  for (const l of labels) {
    h = fnv1a(h ^ 0xff, l.name);
    h = fnv1a(h ^ 0xfe, l.value);
  }
  return fmix32(h);
}

/** The same token from the label bytes of a series of ASCII labels (the only ones hashed this way). */
export function seriesTokenFromBytes(seed: number, s: EncodedLabels): number {
  const b = s.bytes;
  const ranges = s.ranges;
  let h = seed;
  for (let k = s.firstLabel * 4, end = k + s.labelCount * 4; k < end; k += 4) {
    h ^= 0xff;
    for (let i = ranges[k], e = ranges[k + 1]; i < e; i++) h = Math.imul(h ^ b[i], FNV_PRIME);
    h ^= 0xfe;
    for (let i = ranges[k + 2], e = ranges[k + 3]; i < e; i++) h = Math.imul(h ^ b[i], FNV_PRIME);
  }
  return fmix32(h);
}
