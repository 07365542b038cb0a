// The fused aggregation paths (an aggregation straight over a range function of
// a range selector, or over a plain selector) must answer exactly as the
// general path (the engine with fusedAggregations off), bit for bit, on data with
// gaps, staleness markers, NaN, ±Inf, zeros and counter resets, for instant and
// range queries; queries the fused paths leave alone still agree.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { engineFor, type TestSeries, type TestValue } from './testing.ts';
import type { QueryResult } from './values.ts';

const M = 60_000;
let seed = 7;
const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;

function data(): TestSeries[] {
  const out: TestSeries[] = [];
  for (let i = 0; i < 60; i++) {
    const samples: [number, TestValue][] = [];
    let v = 100;
    for (let k = 0; k < 90; k++) {
      const r = rnd();
      if (r < 0.05) continue; // gap
      let x: TestValue;
      if (r < 0.07) x = 'stale';
      else if (r < 0.08) x = NaN;
      else if (r < 0.085) x = i % 2 ? Infinity : -Infinity;
      else if (r < 0.1) x = 0;
      else if (r < 0.12)
        x = v = Math.floor(rnd() * 10); // counter reset
      else x = v += Math.floor(rnd() * 1000) / 7;
      samples.push([k * 15_000, x]);
    }
    out.push({ labels: { __name__: 'x_total', job: `j${i % 4}`, instance: `i${i}`, zone: i % 3 ? 'a' : 'b' }, samples });
  }
  return out;
}

const normalise = (r: QueryResult) => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v));

describe('fused aggregations answer as the general path', () => {
  const series = data();
  const { engine } = engineFor(series);
  const { engine: general } = engineFor(series, { fusedAggregations: false });
  const cases: string[] = [];
  for (const agg of ['sum', 'avg', 'count', 'group', 'min', 'max']) {
    for (const by of ['', ' by (job)', ' by (job, zone)', ' by (nope)']) {
      for (const fn of ['rate', 'increase', 'avg_over_time', 'max_over_time', 'last_over_time', 'count_over_time', 'irate', 'delta']) {
        cases.push(`${agg}${by} (${fn}(x_total[5m]))`);
      }
      cases.push(`${agg}${by} (x_total)`, `${agg}${by} (x_total offset 3m)`, `${agg} without (instance) (rate(x_total[5m]))`);
    }
  }
  for (const q of ['0', '0.25', '0.5', '0.9', '1', '-1', '2']) {
    cases.push(`quantile by (job) (${q}, x_total)`, `quantile(${q}, x_total)`);
  }
  cases.push('quantile(NaN, x_total)', 'sum by (__name__) (x_total)', 'sum(rate({__name__=~"x_.*"}[5m]))', 'count(x_total @ 300)');
  for (const query of cases) {
    it(query, async () => {
      for (const time of [0, 7 * M, 19 * M + 500]) {
        const a = await engine.instantQuery({ tenant: 't', query, time });
        const b = await general.instantQuery({ tenant: 't', query, time });
        assert.equal(normalise(a), normalise(b), `instant at ${time}`);
      }
      const a = await engine.rangeQuery({ tenant: 't', query, start: 0, end: 22 * M, step: 37_000 });
      const b = await general.rangeQuery({ tenant: 't', query, start: 0, end: 22 * M, step: 37_000 });
      assert.equal(normalise(a), normalise(b), 'range');
    });
  }
});
