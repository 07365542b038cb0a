// xxHash64 (seed 0) over bytes, and Prometheus' labels.Hash() built on it.
// limit_ratio picks series by this hash, so the same series are kept as in Prometheus.

import type { Labels } from '@strata/model';

const M64 = (1n << 64n) - 1n;
const P1 = 11400714785074694791n;
const P2 = 14029467366897019727n;
const P3 = 1609587929392839161n;
const P4 = 9650029242287828579n;
const P5 = 2870177450012600261n;

const rotl = (x: bigint, r: bigint): bigint => ((x << r) | (x >> (64n - r))) & M64;

function round(acc: bigint, input: bigint): bigint {
  acc = (acc + input * P2) & M64;
  acc = rotl(acc, 31n);
  return (acc * P1) & M64;
}

function mergeRound(acc: bigint, val: bigint): bigint {
  acc ^= round(0n, val);
  return (acc * P1 + P4) & M64;
}

function u64(b: Uint8Array, i: number): bigint {
  return new DataView(b.buffer, b.byteOffset + i, 8).getBigUint64(0, true);
}

function u32(b: Uint8Array, i: number): bigint {
  return BigInt(new DataView(b.buffer, b.byteOffset + i, 4).getUint32(0, true));
}

export function xxhash64(b: Uint8Array): bigint {
  const n = b.length;
  let i = 0;
  let h: bigint;
  if (n >= 32) {
    let v1 = (P1 + P2) & M64;
    let v2 = P2;
    let v3 = 0n;
    let v4 = (0n - P1) & M64;
    for (; i + 32 <= n; i += 32) {
      v1 = round(v1, u64(b, i));
      v2 = round(v2, u64(b, i + 8));
      v3 = round(v3, u64(b, i + 16));
      v4 = round(v4, u64(b, i + 24));
    }
    h = (rotl(v1, 1n) + rotl(v2, 7n) + rotl(v3, 12n) + rotl(v4, 18n)) & M64;
    h = mergeRound(h, v1);
    h = mergeRound(h, v2);
    h = mergeRound(h, v3);
    h = mergeRound(h, v4);
  } else {
    h = P5;
  }
  h = (h + BigInt(n)) & M64;
  for (; i + 8 <= n; i += 8) {
    h ^= round(0n, u64(b, i));
    h = (rotl(h, 27n) * P1 + P4) & M64;
  }
  if (i + 4 <= n) {
    h ^= (u32(b, i) * P1) & M64;
    h = (rotl(h, 23n) * P2 + P3) & M64;
    i += 4;
  }
  for (; i < n; i++) {
    h ^= (BigInt(b[i]) * P5) & M64;
    h = (rotl(h, 11n) * P1) & M64;
  }
  h ^= h >> 33n;
  h = (h * P2) & M64;
  h ^= h >> 29n;
  h = (h * P3) & M64;
  h ^= h >> 32n;
  return h;
}

/**
 * Prometheus 3's labels.Hash(): xxhash64 of the labels' stringlabels encoding
 * (the default build's), each name and value preceded by its byte length: one
 * byte below 255, else 0xff and three bytes little-endian.
 */
export function labelsHash(ls: Labels): bigint {
  const parts: Buffer[] = [];
  const sized = (s: string) => {
    const b = Buffer.from(s);
    const n = b.length;
    parts.push(n < 255 ? Buffer.from([n]) : Buffer.from([0xff, n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff]), b);
  };
  for (const l of ls) {
    sized(l.name);
    sized(l.value);
  }
  return xxhash64(Buffer.concat(parts));
}

/** Prometheus' HashRatioSampler offset: the label hash as a fraction of 2^64, in [0, 1]. */
export function ratioSampleOffset(ls: Labels): number {
  return Number(labelsHash(ls)) / 18446744073709551615;
}

/** Whether limit_ratio(ratio) keeps a series with this offset; a negative ratio keeps the complement. */
export function keepRatioSample(ratio: number, offset: number): boolean {
  return (ratio >= 0 && offset < ratio) || (ratio < 0 && offset >= 1 + ratio);
}
