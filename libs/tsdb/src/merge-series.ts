// Merges series from several sources (head, blocks, the two zones' copies):
// one series per label set, samples in time order, one sample per timestamp.
// The first source holding a timestamp wins; copies are identical anyway.

import { labelsKey, type Series } from '@strata/model';

export function mergeSeriesSets(sets: Series[][]): Series[] {
  const nonEmpty = sets.filter((s) => s.length > 0);
  if (nonEmpty.length === 0) return [];
  if (nonEmpty.length === 1) return nonEmpty[0];
  const byKey = new Map<string, Series>();
  for (const set of nonEmpty) {
    for (const s of set) {
      const key = labelsKey(s.labels);
      const prev = byKey.get(key);
      byKey.set(key, prev ? mergeSamples(prev, s) : s);
    }
  }
  return [...byKey.values()];
}

/** Two sample lists of one series merged; `a` wins equal timestamps. Value bits copied exactly. */
export function mergeSamples(a: Series, b: Series): Series {
  const na = a.timestamps.length;
  const nb = b.timestamps.length;
  if (nb === 0) return a;
  if (na === 0) return { labels: a.labels, timestamps: b.timestamps, values: b.values };
  const ts = new Float64Array(na + nb);
  const vs = new Float64Array(na + nb);
  const out = new Int32Array(vs.buffer);
  const aw = new Int32Array(a.values.buffer, a.values.byteOffset, na * 2);
  const bw = new Int32Array(b.values.buffer, b.values.byteOffset, nb * 2);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < na || j < nb) {
    const ta = i < na ? a.timestamps[i] : Infinity;
    const tb = j < nb ? b.timestamps[j] : Infinity;
    if (ta <= tb) {
      ts[k] = ta;
      out[2 * k] = aw[2 * i];
      out[2 * k + 1] = aw[2 * i + 1];
      i++;
      if (ta === tb) j++;
    } else {
      ts[k] = tb;
      out[2 * k] = bw[2 * j];
      out[2 * k + 1] = bw[2 * j + 1];
      j++;
    }
    k++;
  }
  return { labels: a.labels, timestamps: ts.subarray(0, k), values: vs.subarray(0, k) };
}
