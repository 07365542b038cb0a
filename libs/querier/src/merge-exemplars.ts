// Merges the ingester-only answers of several partitions: exemplars and
// metadata. Series and label merges are @strata/model's mergeSeriesSets.

import { labelsKey, type ExemplarSeries, type MetricMetadataEntry } from '@strata/model';

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
