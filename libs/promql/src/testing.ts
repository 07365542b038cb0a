// Test support: an in-memory Querier over series given as data, and helpers
// to run queries against it. Only tests import this; index.ts does not export it.

import assert from 'node:assert/strict';
import type { Labels, Querier, Series, SelectParams } from '@strata/model';
import { labelsFromRecord, labelsKey, labelsToRecord, matcherFn } from '@strata/model';
import { Engine } from './engine.ts';
import type { EngineOptions } from './engine.ts';
import type { QueryResult } from './values.ts';
import { writeStaleMarker } from './values.ts';

/** A sample value or the staleness marker. */
export type TestValue = number | 'stale';

export interface TestSeries {
  labels: Record<string, string>;
  /** [ms, value] pairs, ascending. */
  samples: [number, TestValue][];
}

/** Samples every `intervalMs` starting at `startMs`; `undefined` leaves a gap. */
export function every(intervalMs: number, values: (TestValue | undefined)[], startMs = 0): [number, TestValue][] {
  const out: [number, TestValue][] = [];
  values.forEach((v, i) => {
    if (v !== undefined) out.push([startMs + i * intervalMs, v]);
  });
  return out;
}

export class FakeQuerier implements Querier {
  readonly calls: SelectParams[] = [];
  private readonly series: { labels: Labels; samples: [number, TestValue][] }[];
  /** Delays every select, to exercise timeouts and cancellation. */
  delayMs = 0;

  constructor(series: TestSeries[]) {
    this.series = series
      .map((s) => ({ labels: labelsFromRecord(s.labels), samples: s.samples }))
      .sort((a, b) => (labelsKey(a.labels) < labelsKey(b.labels) ? -1 : 1));
  }

  async select(params: SelectParams): Promise<Series[]> {
    this.calls.push(params);
    if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
    const fns = params.matchers.map((m) => ({ name: m.name, fn: matcherFn(m) }));
    const out: Series[] = [];
    for (const s of this.series) {
      if (!fns.every(({ name, fn }) => fn(s.labels.find((l) => l.name === name)?.value ?? ''))) continue;
      const samples = s.samples.filter(([t]) => t >= params.mint && t <= params.maxt);
      if (samples.length === 0) continue;
      const values = new Float64Array(samples.length);
      samples.forEach(([, v], i) => (v === 'stale' ? writeStaleMarker(values, i) : (values[i] = v)));
      out.push({ labels: s.labels, timestamps: Float64Array.from(samples, ([t]) => t), values });
    }
    return out;
  }

  async labelNames(): Promise<string[]> {
    return [];
  }

  async labelValues(): Promise<string[]> {
    return [];
  }
}

/** An engine over the given series. */
export function engineFor(series: TestSeries[], opts: Partial<EngineOptions> = {}): { engine: Engine; querier: FakeQuerier } {
  const querier = new FakeQuerier(series);
  return { engine: new Engine({ querier, ...opts }), querier };
}

/** An instant vector result as `{labels} value` strings, sorted. */
export function vectorOf(r: QueryResult): string[] {
  assert.equal(r.resultType, 'vector');
  if (r.resultType !== 'vector') return [];
  return r.result.map((s) => `${JSON.stringify(labelsToRecord(s.metric))} ${s.f}`).sort();
}

export async function instant(engine: Engine, query: string, time: number): Promise<string[]> {
  return vectorOf(await engine.instantQuery({ tenant: 't', query, time }));
}
