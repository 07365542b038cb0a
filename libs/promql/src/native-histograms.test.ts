// Native histograms through the engine and into Prometheus' JSON (the corpus in
// test/promqltest covers the semantics; this pins the seams).

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Querier, SelectParams, Series } from '@strata/model';
import { labelsFromRecord, matcherFn } from '@strata/model';
import { Engine } from './engine.ts';
import { FloatHistogram } from './histogram/float-histogram.ts';
import { prepareSeries, statsOnly } from './prepared-series.ts';
import { toPrometheusData } from './format.ts';
import { parseHistogramNotation as h } from './histogram/notation.ts';

const series: Series[] = [
  {
    labels: labelsFromRecord({ __name__: 'req_seconds', job: 'a' }),
    timestamps: new Float64Array(0),
    values: new Float64Array(0),
    histograms: {
      timestamps: Float64Array.from([0, 60_000, 120_000]),
      values: [h('{{sum:1 count:1 buckets:[1]}}'), h('{{sum:4 count:3 buckets:[2 1]}}'), h('{{sum:9 count:5 buckets:[3 2]}}')],
    },
  },
  { labels: labelsFromRecord({ __name__: 'up', job: 'a' }), timestamps: Float64Array.from([0, 60_000, 120_000]), values: Float64Array.from([1, 1, 1]) },
];

const querier: Querier = {
  async select(p: SelectParams) {
    const fns = p.matchers.map((m) => ({ name: m.name, fn: matcherFn(m) }));
    return series.filter((s) => fns.every(({ name, fn }) => fn(s.labels.find((l) => l.name === name)?.value ?? '')));
  },
  async labelNames() {
    return [];
  },
  async labelValues() {
    return [];
  },
};

describe('native histograms in the engine', () => {
  const engine = new Engine({ querier });

  it('selects, sums and rates histograms and writes them as Prometheus JSON', async () => {
    const r = await engine.instantQuery({ tenant: 't', query: 'req_seconds', time: 120_000 });
    assert.deepEqual(toPrometheusData(r), {
      resultType: 'vector',
      result: [
        {
          metric: { __name__: 'req_seconds', job: 'a' },
          histogram: [
            120,
            {
              count: '5',
              sum: '9',
              buckets: [
                [0, '0.5', '1', '3'],
                [0, '1', '2', '2'],
              ],
            },
          ],
        },
      ],
    });
    const inc = await engine.instantQuery({ tenant: 't', query: 'increase(req_seconds[2m1s])', time: 120_000 });
    assert.equal(inc.resultType === 'vector' && inc.result[0].h?.count, 4 * (121 / 120));
    const count = await engine.instantQuery({ tenant: 't', query: 'histogram_count(sum(req_seconds))', time: 60_000 });
    assert.deepEqual(toPrometheusData(count), { resultType: 'vector', result: [{ metric: {}, value: [60, '3'] }] });
  });

  it('range queries return histograms and floats side by side; floats functions skip histograms', async () => {
    const r = await engine.rangeQuery({ tenant: 't', query: '{job="a"}', start: 0, end: 120_000, step: 60_000 });
    const data = toPrometheusData(r);
    assert.equal(data.resultType, 'matrix');
    if (data.resultType !== 'matrix') return;
    assert.equal(data.result[0].histograms?.length, 3);
    assert.equal(data.result[0].values, undefined);
    assert.deepEqual(data.result[1].values, [
      [0, '1'],
      [60, '1'],
      [120, '1'],
    ]);
    const abs = await engine.instantQuery({ tenant: 't', query: 'abs({job="a"})', time: 0 });
    assert.equal(abs.resultType === 'vector' && abs.result.length, 1);
    const info = await engine.instantQuery({ tenant: 't', query: 'max(req_seconds)', time: 0 });
    assert.deepEqual(info.infos, ['PromQL info: ignored histogram in max aggregation (1:5)']);
  });
});

describe('histogram statistics for histogram_count/sum/avg', () => {
  it('keep count, sum and schema and detect counter resets as they go (HistogramStatsIterator)', () => {
    const prepared = prepareSeries({
      labels: labelsFromRecord({ __name__: 'h' }),
      timestamps: new Float64Array(0),
      values: new Float64Array(0),
      histograms: {
        timestamps: Float64Array.from([0, 1, 2, 3]),
        values: [
          h('{{sum:1 count:1 buckets:[1]}}'),
          h('{{sum:2 count:2 buckets:[2]}}'),
          h('{{sum:1 count:1 buckets:[0 1]}}'),
          h('{{sum:1 count:1 buckets:[0 1] counter_reset_hint:gauge}}'),
        ],
      },
    });
    const stats = statsOnly(prepared);
    assert.deepEqual(
      stats.liveH!.h.map((x: FloatHistogram) => [x.count, x.sum, x.counterResetHint, x.positiveBuckets.length]),
      [
        [1, 1, 'unknown', 0],
        [2, 2, 'not_reset', 0],
        [1, 1, 'reset', 0],
        [1, 1, 'gauge', 0],
      ],
    );
  });
});

describe('histogram stale markers', () => {
  // value.StaleNaN as a histogram's sum (Prometheus marks a histogram series stale so), once with exact bits, once quieted by V8.
  const stale = new Float64Array(new Uint32Array([2, 0x7ff00000]).buffer)[0];
  const quieted = new Float64Array(new Uint32Array([2, 0x7ff80000]).buffer)[0];
  const marker = (sum: number) => ({ ...h('{{sum:0 count:0}}'), sum });
  const staleSeries = (sum: number): Series => ({
    labels: labelsFromRecord({ __name__: 'req_seconds', job: 'a' }),
    timestamps: new Float64Array(0),
    values: new Float64Array(0),
    histograms: {
      timestamps: Float64Array.from([0, 60_000, 90_000]),
      values: [h('{{sum:1 count:1 buckets:[1]}}'), h('{{sum:4 count:3 buckets:[2 1]}}'), marker(sum)],
    },
  });
  const engineOf = (s: Series) =>
    new Engine({
      querier: {
        select: async () => [s],
        labelNames: async () => [],
        labelValues: async () => [],
      },
    });

  for (const [name, sum] of [
    ['exact', stale],
    ['quieted', quieted],
  ] as const) {
    it(`the series disappears from instant queries after the marker and the marker is no sample in ranges (${name} bits)`, async () => {
      const engine = engineOf(staleSeries(sum));
      const before = await engine.instantQuery({ tenant: 't', query: 'req_seconds', time: 80_000 });
      assert.equal(before.resultType === 'vector' && before.result.length, 1);
      const after = await engine.instantQuery({ tenant: 't', query: 'req_seconds', time: 120_000 });
      assert.deepEqual(toPrometheusData(after), { resultType: 'vector', result: [] });
      const n = await engine.instantQuery({ tenant: 't', query: 'count_over_time(req_seconds[5m])', time: 120_000 });
      assert.equal(n.resultType === 'vector' && n.result[0].f, 2);
      const p = prepareSeries(staleSeries(sum));
      assert.deepEqual(Array.from(p.stale ?? []), [0, 0, 1]);
      assert.equal(p.liveH?.h.length, 2);
    });
  }

  it('a histogram whose sum is another NaN is a sample', async () => {
    const other = new Float64Array(new Uint32Array([3, 0x7ff00000]).buffer)[0];
    const r = await engineOf(staleSeries(other)).instantQuery({ tenant: 't', query: 'req_seconds', time: 120_000 });
    assert.equal(r.resultType === 'vector' && r.result.length, 1);
  });
});
