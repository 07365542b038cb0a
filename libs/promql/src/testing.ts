// Test support (`@strata/promql/testing`): series given as data, an engine
// over them (the in-memory querier of @strata/model/testing), and helpers to
// run queries. Only tests import this; index.ts does not export it.

import assert from 'node:assert/strict';
import { labelsFromRecord, labelsKey, labelsToRecord } from '@strata/model';
import { MemoryQuerier } from '@strata/model/testing';
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

/** The series as an in-memory querier's data for tenant `t`. */
export function querierFor(series: TestSeries[], tenant = 't'): MemoryQuerier {
  const querier = new MemoryQuerier();
  // Answered in label-key order, whatever order the test wrote them in.
  const sorted = series
    .map((s) => ({ labels: labelsFromRecord(s.labels), samples: s.samples }))
    .sort((a, b) => (labelsKey(a.labels) < labelsKey(b.labels) ? -1 : 1));
  for (const s of sorted) {
    const values = new Float64Array(s.samples.length);
    s.samples.forEach(([, v], i) => (v === 'stale' ? writeStaleMarker(values, i) : (values[i] = v)));
    querier.append(
      tenant,
      s.labels,
      s.samples.map(([t]) => t),
      values,
    );
  }
  return querier;
}

/** An engine over the given series. */
export function engineFor(series: TestSeries[], opts: Partial<EngineOptions> = {}): { engine: Engine; querier: MemoryQuerier } {
  const querier = querierFor(series);
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
