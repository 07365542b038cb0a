// A tenant's in-memory head: series by label set, postings for matchers and
// time-ordered samples. It never reorders samples and never accepts two
// different values for one timestamp.

import { labelsKey, type Labels, type Matcher, type Series } from '@strata/model';
import { MemorySeries } from './memory-series.ts';
import { Postings } from './postings.ts';

export interface AppendStats {
  appended: number;
  /** Same timestamp and same value as the last sample: an idempotent replay. */
  duplicates: number;
  outOfOrder: number;
  /** Same timestamp as the last sample but another value. */
  conflicting: number;
}

export function emptyAppendStats(): AppendStats {
  return { appended: 0, duplicates: 0, outOfOrder: 0, conflicting: 0 };
}

export class Head {
  private readonly byKey = new Map<string, MemorySeries>();
  private readonly series: MemorySeries[] = [];
  private readonly postings = new Postings();
  private readonly strings = new Map<string, string>();

  get numSeries(): number {
    return this.series.length;
  }

  /** Appends one series' samples (ascending timestamps expected). */
  append(labels: Labels, timestamps: Float64Array, values: Float64Array, stats: AppendStats): void {
    const s = this.getOrCreate(labels);
    for (let i = 0; i < timestamps.length; i++) {
      const t = timestamps[i];
      const last = s.lastTimestamp;
      if (t > last) {
        s.push(t, values, i);
        stats.appended++;
      } else if (t === last) {
        if (s.lastValueEquals(values, i)) stats.duplicates++;
        else stats.conflicting++;
      } else {
        stats.outOfOrder++;
      }
    }
  }

  select(matchers: Matcher[], mint: number, maxt: number): Series[] {
    const out: Series[] = [];
    for (const id of this.postings.select(matchers)) {
      const s = this.series[id];
      const [from, to] = s.range(mint, maxt);
      if (from >= to) continue;
      out.push({ labels: s.labels, timestamps: s.timestamps.slice(from, to), values: s.values.slice(from, to) });
    }
    return out;
  }

  labelNames(matchers: Matcher[], mint: number, maxt: number): string[] {
    if (matchers.length === 0) return this.postings.labelNames().sort();
    const names = new Set<string>();
    for (const s of this.matching(matchers, mint, maxt)) for (const l of s.labels) names.add(l.name);
    return [...names].sort();
  }

  labelValues(name: string, matchers: Matcher[], mint: number, maxt: number): string[] {
    if (matchers.length === 0) return this.postings.labelValues(name).sort();
    const values = new Set<string>();
    for (const s of this.matching(matchers, mint, maxt)) {
      for (const l of s.labels) if (l.name === name) values.add(l.value);
    }
    return [...values].sort();
  }

  private *matching(matchers: Matcher[], mint: number, maxt: number): Generator<MemorySeries> {
    for (const id of this.postings.select(matchers)) {
      const s = this.series[id];
      const [from, to] = s.range(mint, maxt);
      if (from < to) yield s;
    }
  }

  private getOrCreate(labels: Labels): MemorySeries {
    const key = labelsKey(labels);
    let s = this.byKey.get(key);
    if (s) return s;
    const interned = labels.map((l) => ({ name: this.intern(l.name), value: this.intern(l.value) }));
    s = new MemorySeries(this.series.length, interned);
    this.series.push(s);
    this.byKey.set(key, s);
    this.postings.add(s.id, interned);
    return s;
  }

  private intern(s: string): string {
    const found = this.strings.get(s);
    if (found !== undefined) return found;
    this.strings.set(s, s);
    return s;
  }
}
