// Aggregations over more series than a query may fetch at once, answered shard by shard:
// the same groups and values as an engine without the limit (sum over integers, count,
// group, min and max with NaN and ±Inf), instant and range, plain selectors and range
// functions; what cannot be folded keeps its 422.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compareLabels } from '@strata/model';
import { engineFor, type TestSeries, type TestValue } from './testing.ts';
import type { QueryResult } from './values.ts';

const SERIES = 300;
const M = 60_000;

function data(): TestSeries[] {
  const out: TestSeries[] = [];
  for (let i = 0; i < SERIES; i++) {
    const samples: [number, TestValue][] = [];
    for (let k = 0; k < 30; k++) {
      if ((i + k) % 11 === 0) continue;
      const special = (i * 7 + k) % 97;
      const v: TestValue = special === 0 ? NaN : special === 1 ? Infinity : special === 2 ? -Infinity : (i % 13) * 100 + k * (i % 5);
      samples.push([k * 15_000, v]);
    }
    out.push({ labels: { __name__: i % 3 ? 'node_cpu_total' : 'node_load', job: `job-${i % 4}`, instance: `host-${i}` }, samples });
  }
  return out;
}

const normalise = (r: QueryResult) => {
  const sorted = r.resultType === 'vector' || r.resultType === 'matrix' ? { ...r, result: [...r.result].sort((a, b) => compareLabels(a.metric, b.metric)) } : r;
  return JSON.stringify(sorted, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v));
};

describe('aggregations over the series limit are answered shard by shard', () => {
  const series = data();
  const limited = engineFor(series, { maxFetchedSeries: 40 });
  const unlimited = engineFor(series);
  const queries = [
    'count by (job) ({__name__=~"node_.+"})',
    'count by (__name__) ({__name__=~"node_.+"})',
    'sum by (job) (node_cpu_total)',
    'sum(rate(node_cpu_total[2m]))',
    'max by (job) (node_cpu_total)',
    'min by (job) (max_over_time(node_cpu_total[1m]))',
    'group by (job) (node_load)',
    'count without (instance) (node_cpu_total)',
  ];
  for (const query of queries) {
    it(query, async () => {
      const instant = { tenant: 't', query, time: 6 * M };
      assert.equal(normalise(await limited.engine.instantQuery(instant)), normalise(await unlimited.engine.instantQuery(instant)), 'instant');
      const range = { tenant: 't', query, start: 0, end: 7 * M, step: 15_000 };
      assert.equal(normalise(await limited.engine.rangeQuery(range)), normalise(await unlimited.engine.rangeQuery(range)), 'range');
    });
  }

  it('each shard stays within the limit; an aggregation that does not fold keeps the 422', async () => {
    limited.querier.calls.length = 0;
    await limited.engine.instantQuery({ tenant: 't', query: 'count({__name__=~"node_.+"})', time: 6 * M });
    const shardSelects = limited.querier.calls.filter((c) => c.matchers.some((m) => m.name === '__query_shard__'));
    assert.ok(shardSelects.length >= 8, `${shardSelects.length} shard selects`);
    for (const q of [
      'topk(3, node_cpu_total)',
      'avg by (job) (node_cpu_total)',
      'sum(node_cpu_total) by (job) / 2',
      'count(node_cpu_total * on (instance) node_load)',
    ]) {
      await assert.rejects(limited.engine.instantQuery({ tenant: 't', query: q, time: 6 * M }), /maximum number of series \(limit: 40 series\)/, q);
    }
  });
});
