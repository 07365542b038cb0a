// Native histograms through the engine and into Prometheus' JSON (the corpus in
// test/promqltest covers the semantics; this pins the seams).

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Querier, SelectParams, Series } from '@strata/model';
import { labelsFromRecord, matcherFn } from '@strata/model';
import { Engine } from './engine.ts';
import { FloatHistogram } from './histogram/float-histogram.ts';
import { prepareSeries, statsOnly } from './prepared.ts';
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
          histogram: [120, { count: '5', sum: '9', buckets: [[0, '0.5', '1', '3'], [0, '1', '2', '2']] }],
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
    assert.deepEqual(data.result[1].values, [[0, '1'], [60, '1'], [120, '1']]);
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
