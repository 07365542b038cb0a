// Deleted ranges of series (Prometheus' tombstones, Mimir's delete requests):
// a set of matchers and an inclusive time range. Readers drop the samples a
// tombstone covers; the compactor drops them for good when it rewrites a block.

import type { Labels } from './labels.ts';
import { matcherFn, type Matcher } from './matchers.ts';
import type { Series } from './querier.ts';

export interface Tombstone {
  matchers: Matcher[];
  /** Inclusive bounds in milliseconds. */
  mint: number;
  maxt: number;
}

/** The [mint, maxt] intervals of the tombstones whose matchers all match the labels. */
export function tombstoneIntervals(labels: Labels, tombstones: readonly Tombstone[]): [number, number][] {
  const out: [number, number][] = [];
  for (const t of tombstones) {
    const ok = t.matchers.every((m) => {
      const v = labels.find((l) => l.name === m.name)?.value ?? '';
      return matcherFn(m)(v);
    });
    if (ok) out.push([t.mint, t.maxt]);
  }
  return out;
}

function covered(t: number, intervals: readonly [number, number][]): boolean {
  for (const [a, b] of intervals) if (t >= a && t <= b) return true;
  return false;
}

/** The series without the samples tombstones cover; null when none is left. Untouched series come back as they are. */
export function applyTombstones(s: Series, tombstones: readonly Tombstone[]): Series | null {
  if (tombstones.length === 0) return s;
  const iv = tombstoneIntervals(s.labels, tombstones);
  if (iv.length === 0) return s;
  const keep: number[] = [];
  for (let i = 0; i < s.timestamps.length; i++) if (!covered(s.timestamps[i], iv)) keep.push(i);
  const timestamps = new Float64Array(keep.length);
  const values = new Float64Array(keep.length);
  keep.forEach((k, j) => {
    timestamps[j] = s.timestamps[k];
    values[j] = s.values[k];
  });
  const out: Series = { labels: s.labels, timestamps, values };
  if (s.histograms) {
    const hk: number[] = [];
    for (let i = 0; i < s.histograms.timestamps.length; i++) if (!covered(s.histograms.timestamps[i], iv)) hk.push(i);
    if (hk.length > 0)
      out.histograms = { timestamps: Float64Array.from(hk, (k) => s.histograms!.timestamps[k]), values: hk.map((k) => s.histograms!.values[k]) };
  }
  return out.timestamps.length === 0 && !out.histograms ? null : out;
}

/** Every series with its tombstoned samples dropped (and series left empty dropped). */
export function applyTombstonesAll(series: Series[], tombstones: readonly Tombstone[]): Series[] {
  if (tombstones.length === 0) return series;
  const out: Series[] = [];
  for (const s of series) {
    const kept = applyTombstones(s, tombstones);
    if (kept) out.push(kept);
  }
  return out;
}
