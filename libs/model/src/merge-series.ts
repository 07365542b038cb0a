// Merges answers of several readers of the same data (head and blocks, two
// zones' copies, ingesters and the bucket): one series per label set, float
// and native-histogram samples each in time order, one sample per timestamp.
// The first source holding a timestamp wins; copies are identical anyway.
// Value bits are copied exactly (stale markers are NaN payloads).

import { compareLabels, compareUtf8, labelsKey } from './labels.ts';
import type { NativeHistogram, Series } from './querier.ts';

/**
 * The series of several sources merged. One source passes through as it is
 * (in its own order, like Prometheus' merge of a single querier); several
 * come out sorted by label set, byte-wise, as Prometheus' merge does.
 */
export function mergeSeriesSets(sets: readonly Series[][]): Series[] {
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
  return [...byKey.values()].sort((a, b) => compareLabels(a.labels, b.labels));
}

/** Two sample lists of one series merged; `a` wins equal timestamps. */
export function mergeSamples(a: Series, b: Series): Series {
  const floats = mergeFloats(a, b);
  const out: Series = { labels: a.labels, timestamps: floats.timestamps, values: floats.values };
  const h = mergeHistograms(a.histograms, b.histograms);
  if (h) out.histograms = h;
  return out;
}

/** Distinct strings of several sorted or unsorted lists, sorted byte-wise (label names and values). */
export function mergeStringSets(lists: readonly string[][]): string[] {
  if (lists.length === 1) return lists[0];
  return [...new Set(lists.flat())].sort(compareUtf8);
}

function mergeFloats(a: Series, b: Series): { timestamps: Float64Array; values: Float64Array } {
  const na = a.timestamps.length;
  const nb = b.timestamps.length;
  if (nb === 0) return a;
  if (na === 0) return b;
  const ts = new Float64Array(na + nb);
  const vs = new Float64Array(na + nb);
  // Int32 views copy the bits whatever the sources' alignment; a float copy could canonicalise NaNs.
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
  return { timestamps: ts.subarray(0, k), values: vs.subarray(0, k) };
}

type Histograms = NonNullable<Series['histograms']>;

function mergeHistograms(a: Histograms | undefined, b: Histograms | undefined): Histograms | undefined {
  const na = a?.timestamps.length ?? 0;
  const nb = b?.timestamps.length ?? 0;
  if (nb === 0) return na === 0 ? undefined : a;
  if (na === 0) return b;
  const x = a as Histograms;
  const y = b as Histograms;
  const ts = new Float64Array(na + nb);
  const hs: NativeHistogram[] = [];
  let i = 0;
  let j = 0;
  while (i < na || j < nb) {
    const ta = i < na ? x.timestamps[i] : Infinity;
    const tb = j < nb ? y.timestamps[j] : Infinity;
    if (ta <= tb) {
      ts[hs.length] = ta;
      hs.push(x.values[i++]);
      if (ta === tb) j++;
    } else {
      ts[hs.length] = tb;
      hs.push(y.values[j++]);
    }
  }
  return { timestamps: ts.subarray(0, hs.length), values: hs };
}
