// Test support: an in-memory Querier over appended series, so the querier's
// tests do not depend on the head's internals. Only tests import this.

import type { LabelValuesParams, Labels, Querier, SelectParams, Series } from '@strata/model';
import { labelsKey, matcherFn } from '@strata/model';

export class MemoryQuerier implements Querier {
  private readonly tenants = new Map<string, Map<string, Series>>();
  /** Delays every select, to exercise timeouts. */
  delayMs = 0;

  append(tenant: string, labels: Labels, timestamps: ArrayLike<number>, values: ArrayLike<number>): void {
    let t = this.tenants.get(tenant);
    if (!t) this.tenants.set(tenant, (t = new Map()));
    t.set(labelsKey(labels), { labels, timestamps: Float64Array.from(timestamps), values: Float64Array.from(values) });
  }

  async select(p: SelectParams): Promise<Series[]> {
    if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
    const out: Series[] = [];
    for (const s of this.matching(p)) {
      let lo = 0;
      while (lo < s.timestamps.length && s.timestamps[lo] < p.mint) lo++;
      let hi = lo;
      while (hi < s.timestamps.length && s.timestamps[hi] <= p.maxt) hi++;
      if (hi > lo) out.push({ labels: s.labels, timestamps: s.timestamps.slice(lo, hi), values: s.values.slice(lo, hi) });
    }
    return out;
  }

  async labelNames(p: SelectParams): Promise<string[]> {
    return [...new Set(this.matching(p).flatMap((s) => s.labels.map((l) => l.name)))].sort();
  }

  async labelValues(p: LabelValuesParams): Promise<string[]> {
    const values = this.matching(p).map((s) => s.labels.find((l) => l.name === p.name)?.value ?? '');
    return [...new Set(values.filter((v) => v !== ''))].sort();
  }

  private matching(p: SelectParams): Series[] {
    const fns = p.matchers.map((m) => ({ name: m.name, fn: matcherFn(m) }));
    return [...(this.tenants.get(p.tenant)?.values() ?? [])].filter((s) =>
      fns.every(({ name, fn }) => fn(s.labels.find((l) => l.name === name)?.value ?? '')),
    );
  }
}
