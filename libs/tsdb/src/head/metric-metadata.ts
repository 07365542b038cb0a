// A tenant's metric metadata (TYPE, HELP, UNIT per metric family) as agents
// send it with remote write. Keeps the distinct entries per family, newest
// last, a few at most: what Prometheus' /api/v1/metadata lists.

export interface MetricMetadataEntry {
  /** Lower-case Prometheus type: counter, gauge, histogram, summary, ... */
  type: string;
  help: string;
  unit: string;
}

export interface MetricMetadataInput extends MetricMetadataEntry {
  metricFamilyName: string;
}

const MAX_ENTRIES_PER_METRIC = 10;

export class MetricMetadataStore {
  private readonly byMetric = new Map<string, MetricMetadataEntry[]>();

  private readonly maxMetrics: number;

  constructor(maxMetrics = 100_000) {
    this.maxMetrics = maxMetrics;
  }

  get size(): number {
    return this.byMetric.size;
  }

  /** Records one entry; returns false when the store is full and the metric is new. */
  add(m: MetricMetadataInput): boolean {
    let list = this.byMetric.get(m.metricFamilyName);
    if (!list) {
      if (this.byMetric.size >= this.maxMetrics) return false;
      this.byMetric.set(m.metricFamilyName, (list = []));
    }
    const i = list.findIndex((e) => e.type === m.type && e.help === m.help && e.unit === m.unit);
    if (i === list.length - 1 && i >= 0) return true;
    if (i >= 0) list.splice(i, 1);
    list.push({ type: m.type, help: m.help, unit: m.unit });
    if (list.length > MAX_ENTRIES_PER_METRIC) list.shift();
    return true;
  }

  /** Metadata by metric family, optionally one metric, at most `limit` families (<= 0: no limit). */
  list(metric?: string, limit = 0): Map<string, MetricMetadataEntry[]> {
    const out = new Map<string, MetricMetadataEntry[]>();
    if (metric !== undefined) {
      const l = this.byMetric.get(metric);
      if (l) out.set(metric, l.slice());
      return out;
    }
    for (const [name, l] of this.byMetric) {
      if (limit > 0 && out.size >= limit) break;
      out.set(name, l.slice());
    }
    return out;
  }
}
