// The test scripts' storage: every loaded series in memory, floats (staleness
// markers bit-exact) and native histograms side by side, served through the
// Querier seam the engine reads. Independent of the ingester's head on purpose.

import type { Labels, LabelValuesParams, NativeHistogram, Querier, SelectParams, Series } from '@strata/model';
import { labelsKey, matcherFn } from '@strata/model';

interface StoredSeries {
  labels: Labels;
  floats: { t: number[]; bits: bigint[] };
  histograms: { t: number[]; h: NativeHistogram[] };
}

export class MemoryStorage implements Querier {
  private readonly series = new Map<string, StoredSeries>();

  private get(labels: Labels): StoredSeries {
    const key = labelsKey(labels);
    let s = this.series.get(key);
    if (!s) this.series.set(key, (s = { labels, floats: { t: [], bits: [] }, histograms: { t: [], h: [] } }));
    return s;
  }

  /** Appends a float by its bit pattern (so staleness markers survive). */
  appendFloatBits(labels: Labels, t: number, bits: bigint): void {
    const s = this.get(labels);
    s.floats.t.push(t);
    s.floats.bits.push(bits);
  }

  appendHistogram(labels: Labels, t: number, h: NativeHistogram): void {
    const s = this.get(labels);
    s.histograms.t.push(t);
    s.histograms.h.push(h);
  }

  async select(p: SelectParams): Promise<Series[]> {
    const out: Series[] = [];
    for (const s of this.matching(p)) {
      const fIdx = sortedIndices(s.floats.t).filter((i) => s.floats.t[i] >= p.mint && s.floats.t[i] <= p.maxt);
      const hIdx = sortedIndices(s.histograms.t).filter((i) => s.histograms.t[i] >= p.mint && s.histograms.t[i] <= p.maxt);
      if (fIdx.length === 0 && hIdx.length === 0) continue;
      const values = new Float64Array(fIdx.length);
      const bits = new BigUint64Array(values.buffer);
      fIdx.forEach((i, j) => (bits[j] = s.floats.bits[i]));
      const series: Series = { labels: s.labels, timestamps: Float64Array.from(fIdx, (i) => s.floats.t[i]), values };
      if (hIdx.length > 0) series.histograms = { timestamps: Float64Array.from(hIdx, (i) => s.histograms.t[i]), values: hIdx.map((i) => s.histograms.h[i]) };
      out.push(series);
    }
    return out;
  }

  async labelNames(p: SelectParams): Promise<string[]> {
    return [...new Set(this.matching(p).flatMap((s) => s.labels.map((l) => l.name)))].sort();
  }

  async labelValues(p: LabelValuesParams): Promise<string[]> {
    return [...new Set(this.matching(p).map((s) => s.labels.find((l) => l.name === p.name)?.value ?? '').filter((v) => v !== ''))].sort();
  }

  private matching(p: SelectParams): StoredSeries[] {
    const fns = p.matchers.map((m) => ({ name: m.name, fn: matcherFn(m) }));
    return [...this.series.values()].filter((s) => fns.every(({ name, fn }) => fn(s.labels.find((l) => l.name === name)?.value ?? '')));
  }
}

/** Indices in time order; a later append at the same timestamp wins, as in Prometheus' test storage. */
function sortedIndices(t: number[]): number[] {
  const idx = t.map((_, i) => i).sort((a, b) => t[a] - t[b] || a - b);
  const out: number[] = [];
  for (const i of idx) {
    if (out.length > 0 && t[out[out.length - 1]] === t[i]) out[out.length - 1] = i;
    else out.push(i);
  }
  return out;
}
