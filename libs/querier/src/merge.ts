// Merges series from several sources: one output series per label set, samples
// in time order, one sample per timestamp (the zones hold identical copies).

import { labelsKey, type ExemplarSeries, type MetricMetadataEntry, type Series } from '@strata/model';

export function mergeSeries(sets: Series[][]): Series[] {
  if (sets.length === 1) return sets[0];
  const byKey = new Map<string, Series>();
  for (const set of sets) {
    for (const s of set) {
      const key = labelsKey(s.labels);
      const prev = byKey.get(key);
      byKey.set(key, prev ? mergeSamples(prev, s) : s);
    }
  }
  return [...byKey.values()];
}

function mergeSamples(a: Series, b: Series): Series {
  const n = a.timestamps.length + b.timestamps.length;
  const ts = new Float64Array(n);
  const vs = new Float64Array(n);
  const vBits = new BigUint64Array(vs.buffer);
  const aBits = new BigUint64Array(a.values.buffer, a.values.byteOffset, a.values.length);
  const bBits = new BigUint64Array(b.values.buffer, b.values.byteOffset, b.values.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.timestamps.length || j < b.timestamps.length) {
    const ta = i < a.timestamps.length ? a.timestamps[i] : Infinity;
    const tb = j < b.timestamps.length ? b.timestamps[j] : Infinity;
    if (ta <= tb) {
      ts[k] = ta;
      vBits[k++] = aBits[i++];
      if (ta === tb) j++;
    } else {
      ts[k] = tb;
      vBits[k++] = bBits[j++];
    }
  }
  const out: Series = { labels: a.labels, timestamps: ts.slice(0, k), values: vs.slice(0, k) };
  // Both sources hold the same native histograms (zone copies); keep the longer run.
  const h = (a.histograms?.timestamps.length ?? 0) >= (b.histograms?.timestamps.length ?? 0) ? a.histograms : b.histograms;
  if (h) out.histograms = h;
  return out;
}

export function mergeStrings(sets: string[][]): string[] {
  return [...new Set(sets.flat())].sort();
}

/** One entry per series, exemplars in time order without duplicates (zones hold the same ones). */
export function mergeExemplars(sets: ExemplarSeries[][]): ExemplarSeries[] {
  const byKey = new Map<string, ExemplarSeries>();
  for (const set of sets) {
    for (const s of set) {
      const key = labelsKey(s.seriesLabels);
      const prev = byKey.get(key);
      if (!prev) {
        byKey.set(key, { seriesLabels: s.seriesLabels, exemplars: [...s.exemplars] });
        continue;
      }
      const seen = new Set(prev.exemplars.map((e) => `${e.timestamp}/${labelsKey(e.labels)}`));
      for (const e of s.exemplars) if (!seen.has(`${e.timestamp}/${labelsKey(e.labels)}`)) prev.exemplars.push(e);
      prev.exemplars.sort((a, b) => a.timestamp - b.timestamp);
    }
  }
  return [...byKey.values()];
}

/** Distinct metadata entries, ordered by metric family name. */
export function mergeMetadata(sets: MetricMetadataEntry[][]): MetricMetadataEntry[] {
  const byKey = new Map<string, MetricMetadataEntry>();
  for (const set of sets) for (const m of set) byKey.set(JSON.stringify([m.metricFamilyName, m.type, m.help, m.unit]), m);
  return [...byKey.values()].sort((a, b) => (a.metricFamilyName < b.metricFamilyName ? -1 : a.metricFamilyName > b.metricFamilyName ? 1 : 0));
}
