import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { labelsToRecord } from '@strata/model';
import type { TestSeries } from './testing.ts';
import { engineFor, every } from './testing.ts';

const M = 60_000;

/**
 * Orders Go gives (Prometheus 3's heaps and sort.Sort, run in Go 1.26 on these
 * values): series i holds values[i]; each list is the output's series indexes.
 */
const GOLDEN: { values: string[]; k: number; sort: number[]; sortDesc: number[]; quantile: number[]; topk: number[]; bottomk: number[]; limitk: number[] }[] = [
  { values: ['5', '5', '7'], k: 2, sort: [0, 1, 2], sortDesc: [2, 0, 1], quantile: [0, 1, 2], topk: [2, 1], bottomk: [0, 1], limitk: [0, 1] },
  { values: ['1', '1', '1', '1'], k: 2, sort: [0, 1, 2, 3], sortDesc: [0, 1, 2, 3], quantile: [0, 1, 2, 3], topk: [0, 1], bottomk: [0, 1], limitk: [0, 1] },
  {
    values: ['3', 'NaN', '3', 'NaN', '1', '3'],
    k: 3,
    sort: [4, 0, 2, 5, 3, 1],
    sortDesc: [0, 2, 5, 4, 3, 1],
    quantile: [3, 1, 4, 0, 2, 5],
    topk: [5, 0, 2],
    bottomk: [4, 0, 2],
    limitk: [1, 0, 2],
  },
  {
    values: ['+Inf', '2', '+Inf', '-Inf', '2', '-Inf', 'NaN'],
    k: 2,
    sort: [3, 5, 1, 4, 0, 2, 6],
    sortDesc: [0, 2, 1, 4, 3, 5, 6],
    quantile: [6, 3, 5, 1, 4, 0, 2],
    topk: [2, 0],
    bottomk: [5, 3],
    limitk: [1, 0],
  },
  {
    values: ['NaN', '1', 'NaN', '2', 'NaN', '0', 'NaN', '1', 'NaN', '2', 'NaN', '0', 'NaN', '1', 'NaN'],
    k: 4,
    sort: [5, 11, 1, 13, 7, 9, 3, 14, 2, 12, 10, 0, 8, 4, 6],
    sortDesc: [9, 3, 13, 1, 7, 5, 11, 12, 0, 6, 14, 4, 2, 8, 10],
    quantile: [14, 10, 4, 0, 2, 12, 8, 6, 5, 11, 7, 13, 1, 3, 9],
    topk: [9, 3, 1, 7],
    bottomk: [5, 11, 7, 1],
    limitk: [2, 1, 0, 3],
  },
  {
    values: ['0', '-0', '0', '-0', '1'],
    k: 2,
    sort: [0, 1, 2, 3, 4],
    sortDesc: [4, 0, 1, 2, 3],
    quantile: [0, 1, 2, 3, 4],
    topk: [4, 1],
    bottomk: [0, 1],
    limitk: [0, 1],
  },
];

const value = (v: string) => (v === '+Inf' ? Infinity : v === '-Inf' ? -Infinity : Number(v));
/** Series v{i="00".."NN"}, so label order is index order. */
const seriesOf = (values: string[]): TestSeries[] =>
  values.map((v, i) => ({ labels: { __name__: 'v', i: String(i).padStart(2, '0') }, samples: [[0, value(v)]] }));

async function order(values: string[], query: string): Promise<number[]> {
  const r = await engineFor(seriesOf(values), { enableExperimentalFunctions: true }).engine.instantQuery({ tenant: 't', query, time: 0 });
  assert.equal(r.resultType, 'vector');
  return r.resultType === 'vector' ? r.result.map((s) => Number(labelsToRecord(s.metric).i)) : [];
}

describe("ties and NaN pick and order series as Prometheus' heaps and Go's sort do", () => {
  for (const c of GOLDEN) {
    it(`[${c.values.join(', ')}], k=${c.k}`, async () => {
      assert.deepEqual(await order(c.values, `topk(${c.k}, v)`), c.topk, 'topk');
      assert.deepEqual(await order(c.values, `bottomk(${c.k}, v)`), c.bottomk, 'bottomk');
      assert.deepEqual(await order(c.values, `limitk(${c.k}, v)`), c.limitk, 'limitk');
      assert.deepEqual(await order(c.values, 'sort(v)'), c.sort, 'sort');
      assert.deepEqual(await order(c.values, 'sort_desc(v)'), c.sortDesc, 'sort_desc');
      // quantile() interpolates between Go's sorted neighbours: NaN where it put NaN, -0 where it put -0.
      const sorted = c.quantile.map((i) => value(c.values[i]));
      for (const q of [0, 0.25, 0.5, 0.9, 1]) {
        const rank = q * (sorted.length - 1);
        const lo = Math.floor(rank);
        const w = rank - lo;
        const want = w === 0 ? sorted[lo] : sorted[lo] * (1 - w) + sorted[Math.min(sorted.length - 1, lo + 1)] * w;
        const r = await engineFor(seriesOf(c.values)).engine.instantQuery({ tenant: 't', query: `quantile(${q}, v)`, time: 0 });
        assert.ok(r.resultType === 'vector');
        if (r.resultType === 'vector') assert.ok(Object.is(r.result[0].f, want), `quantile(${q}): ${r.result[0].f} vs ${want}`);
      }
    });
  }

  it('a range query keeps the series the heap kept at each step (the later of two tied series when a larger one evicts)', async () => {
    const s: TestSeries[] = [
      { labels: { __name__: 'm', instance: 'a' }, samples: every(M, [5, 5, 1]) },
      { labels: { __name__: 'm', instance: 'b' }, samples: every(M, [5, 5, 1]) },
      { labels: { __name__: 'm', instance: 'c' }, samples: every(M, [7, 1, 2]) },
    ];
    const r = await engineFor(s).engine.rangeQuery({ tenant: 't', query: 'topk without (instance) (2, m)', start: 0, end: 2 * M, step: M });
    assert.ok(r.resultType === 'matrix');
    if (r.resultType !== 'matrix') return;
    const steps = Object.fromEntries(r.result.map((x) => [labelsToRecord(x.metric).instance, x.floats.map((p) => p.t / M)]));
    assert.deepEqual(steps, { a: [1], b: [0, 1, 2], c: [0, 2] });
  });

  it('groups come out in the order their first series comes in, each sorted by its own heap', async () => {
    const s: TestSeries[] = [
      { labels: { __name__: 'g', job: 'b', i: '1' }, samples: [[0, 1]] },
      { labels: { __name__: 'g', job: 'a', i: '2' }, samples: [[0, 2]] },
      { labels: { __name__: 'g', job: 'b', i: '3' }, samples: [[0, 3]] },
      { labels: { __name__: 'g', job: 'a', i: '4' }, samples: [[0, 2]] },
    ];
    const r = await engineFor(s).engine.instantQuery({ tenant: 't', query: 'topk by (job) (2, g)', time: 0 });
    assert.ok(r.resultType === 'vector');
    if (r.resultType === 'vector')
      assert.deepEqual(
        r.result.map((x) => labelsToRecord(x.metric).i),
        ['3', '1', '2', '4'],
      );
  });

  it('limit_ratio warns once for the largest ratio above 1', async () => {
    const s: TestSeries[] = [{ labels: { __name__: 'r', i: '1' }, samples: every(M, [1, 1, 1]) }];
    const r = await engineFor(s, { enableExperimentalFunctions: true }).engine.rangeQuery({
      tenant: 't',
      query: 'limit_ratio(1 + time() / 60, r)',
      start: 0,
      end: 2 * M,
      step: M,
    });
    assert.deepEqual(r.warnings, ['PromQL warning: ratio value should be between -1 and 1, got 3, capping to 1 (1:13)']);
  });
});
