import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { labelsToRecord } from '@strata/model';
import type { TestSeries } from './testing.ts';
import { engineFor, every, instant } from './testing.ts';

const S = 1000;
const M = 60 * S;

/** The single value of an instant query, with its labels. */
async function single(series: TestSeries[], query: string, time: number): Promise<{ labels: Record<string, string>; value: number }> {
  const { engine } = engineFor(series);
  const r = await engine.instantQuery({ tenant: 't', query, time });
  assert.equal(r.resultType, 'vector');
  if (r.resultType !== 'vector') throw new Error('unreachable');
  assert.equal(r.result.length, 1, `${query}: ${JSON.stringify(r.result)}`);
  return { labels: labelsToRecord(r.result[0].metric), value: r.result[0].f };
}

function close(actual: number, expected: number): void {
  assert.ok(Math.abs(actual - expected) <= 1e-12 * Math.max(1, Math.abs(expected)), `${actual} != ${expected}`);
}

describe('functions: rate, increase, delta (Prometheus extrapolation)', () => {
  // A counter with a reset between 90s and 150s.
  const c1: TestSeries = {
    labels: { __name__: 'c1_total', job: 'j' },
    samples: [
      [30 * S, 5],
      [90 * S, 10],
      [150 * S, 2],
      [210 * S, 6],
    ],
  };
  // Samples cover only the middle of a 10m window.
  const c2: TestSeries = {
    labels: { __name__: 'c2_total' },
    samples: [
      [100 * S, 10],
      [160 * S, 20],
      [220 * S, 30],
    ],
  };
  // A counter that started just before its first sample.
  const c3: TestSeries = {
    labels: { __name__: 'c3_total' },
    samples: [
      [100 * S, 1],
      [160 * S, 31],
      [220 * S, 61],
    ],
  };
  const all = [c1, c2, c3];

  it('extrapolates to both edges when samples are close to them, and corrects resets', async () => {
    // Increase 6 - 5 + 10 (reset) = 11 over 180s of samples, each 30s from an edge of the 240s window.
    const inc = await single(all, 'increase(c1_total[4m])', 240 * S);
    close(inc.value, (11 * 240) / 180);
    assert.deepEqual(inc.labels, { job: 'j' }); // The name is dropped.
    close((await single(all, 'rate(c1_total[4m])', 240 * S)).value, (11 * 240) / 180 / 240);
    // delta() does not treat the drop as a reset.
    close((await single(all, 'delta(c1_total[4m])', 240 * S)).value, (1 * 240) / 180);
  });

  it('extrapolates only half a sample interval when the series starts or ends inside the window', async () => {
    // 20 over 120s; 100s before the first and 380s after the last sample: 30s (half of 60s) each way.
    close((await single(all, 'increase(c2_total[10m])', 600 * S)).value, (20 * 180) / 120);
    close((await single(all, 'rate(c2_total[10m])', 600 * S)).value, (20 * 180) / 120 / 600);
  });

  it('does not extrapolate a counter below zero', async () => {
    // 60s to the window start, but the counter would reach zero 2s before its first sample.
    close((await single(all, 'increase(c3_total[3m])', 220 * S)).value, (60 * 122) / 120);
    // A gauge has no such limit.
    close((await single(all, 'delta(c3_total[3m])', 220 * S)).value, (60 * 180) / 120);
  });

  it('windows are left-open: a sample exactly range ago is excluded', async () => {
    // At 210s a 1m window is (150s, 210s]: only one sample, so no rate.
    const { engine } = engineFor(all);
    assert.deepEqual(await instant(engine, 'rate(c1_total[1m])', 210 * S), []);
    // One more millisecond takes in the sample at 150s: 4 over 60s, extrapolated 1ms, per 60.001s.
    close((await single(all, 'rate(c1_total[1m1ms])', 210 * S)).value, 4 / 60);
  });

  it('irate, idelta, resets, changes', async () => {
    close((await single(all, 'irate(c1_total[4m])', 240 * S)).value, 4 / 60);
    close((await single(all, 'irate(c1_total[2m])', 160 * S)).value, 2 / 60); // After a reset, the new value is the increase.
    close((await single(all, 'idelta(c1_total[2m])', 160 * S)).value, -8);
    assert.equal((await single(all, 'resets(c1_total[4m])', 240 * S)).value, 1);
    assert.equal((await single(all, 'changes(c1_total[4m])', 240 * S)).value, 3);
  });

  it('rate over a range query gives a value per step', async () => {
    const { engine } = engineFor(all);
    const r = await engine.rangeQuery({ tenant: 't', query: 'rate(c2_total[2m])', start: 160 * S, end: 280 * S, step: M });
    assert.equal(r.resultType, 'matrix');
    if (r.resultType !== 'matrix') return;
    // 160s: samples at 100s and 160s, extrapolated 60s back (the counter's zero is exactly there): 20 per 120s.
    // 220s: samples at 160s and 220s, 60s back: 20 per 120s. 280s: one sample, no rate.
    assert.deepEqual(
      r.result[0].floats.map((p) => [p.t / S, p.f]),
      [
        [160, 20 / 120],
        [220, 20 / 120],
      ],
    );
  });
});

describe('functions: *_over_time', () => {
  const g: TestSeries = { labels: { __name__: 'g', i: '1' }, samples: every(M, [1, 2, 3, 4]) };
  const cases: [string, number][] = [
    ['sum_over_time(g[4m])', 10],
    ['avg_over_time(g[4m])', 2.5],
    ['count_over_time(g[4m])', 4],
    ['min_over_time(g[4m])', 1],
    ['max_over_time(g[4m])', 4],
    ['last_over_time(g[4m])', 4],
    ['stdvar_over_time(g[4m])', 1.25],
    ['stddev_over_time(g[4m])', Math.sqrt(1.25)],
    ['quantile_over_time(0.5, g[4m])', 2.5],
    ['present_over_time(g[4m])', 1],
    ['sum_over_time(g[2m])', 7],
    ['deriv(g[4m])', 1 / 60],
    ['predict_linear(g[4m], 60)', 5],
  ];
  for (const [q, v] of cases) {
    it(`${q} = ${v}`, async () => close((await single([g], q, 3 * M)).value, v));
  }

  it('last_over_time keeps the metric name; the others drop it', async () => {
    assert.deepEqual((await single([g], 'last_over_time(g[4m])', 3 * M)).labels, { __name__: 'g', i: '1' });
    assert.deepEqual((await single([g], 'max_over_time(g[4m])', 3 * M)).labels, { i: '1' });
  });

  it('NaN does not win max_over_time and min_over_time unless alone', async () => {
    const n: TestSeries = { labels: { __name__: 'n' }, samples: every(M, [NaN, 3, NaN, 1]) };
    assert.equal((await single([n], 'max_over_time(n[4m])', 3 * M)).value, 3);
    assert.equal((await single([n], 'min_over_time(n[4m])', 3 * M)).value, 1);
  });

  it('staleness markers are not samples of a range', async () => {
    const s: TestSeries = { labels: { __name__: 's' }, samples: every(10 * S, [0, 1, 'stale', 2]) };
    assert.equal((await single([s], 'count_over_time(s[1m])', 30 * S)).value, 3);
    assert.equal((await single([s], 'absent_over_time(nope[1m])', 30 * S)).value, 1);
  });
});

describe('functions: instant-vector functions', () => {
  const x: TestSeries[] = [
    { labels: { __name__: 'x', i: 'a' }, samples: [[0, -2.5]] },
    { labels: { __name__: 'x', i: 'b' }, samples: [[0, 2.5]] },
    { labels: { __name__: 'x', i: 'c' }, samples: [[0, NaN]] },
    { labels: { __name__: 'y', job: 'j', instance: 'host:9090' }, samples: [[0, 1]] },
  ];
  const cases: [string, string[]][] = [
    ['abs(x{i="a"})', ['{"i":"a"} 2.5']],
    ['ceil(x{i="a"})', ['{"i":"a"} -2']],
    ['floor(x{i="a"})', ['{"i":"a"} -3']],
    ['round(x{i=~"a|b"})', ['{"i":"a"} -2', '{"i":"b"} 3']],
    ['round(x{i="b"}, 2)', ['{"i":"b"} 2']],
    ['sqrt(x{i="b"} * 10)', ['{"i":"b"} 5']],
    ['exp(x{i="a"} * 0)', ['{"i":"a"} 1']],
    ['ln(x{i="b"} / 2.5)', ['{"i":"b"} 0']],
    ['log2(x{i="b"} * 3.2)', ['{"i":"b"} 3']],
    ['log10(x{i="b"} * 40)', ['{"i":"b"} 2']],
    ['clamp(x{i=~"a|b"}, -1, 1)', ['{"i":"a"} -1', '{"i":"b"} 1']],
    ['clamp(x{i=~"a|b"}, 1, -1)', []],
    ['clamp_min(x{i="a"}, 0)', ['{"i":"a"} 0']],
    ['clamp_max(x{i="b"}, 0)', ['{"i":"b"} 0']],
    ['time()', []],
    ['vector(time())', ['{} 100']],
    ['timestamp(y)', ['{"instance":"host:9090","job":"j"} 0']],
    ['scalar(y) + 1', []],
    ['vector(scalar(x))', ['{} NaN']],
    ['absent(nope{job="a", env=~"p.*"})', ['{"job":"a"} 1']],
    ['absent(x)', []],
    ['label_replace(y, "host", "$1-${2}!", "instance", "(.*):(.*)")', ['{"__name__":"y","host":"host-9090!","instance":"host:9090","job":"j"} 1']],
    ['label_replace(y, "host", "$1x", "instance", "(.*):(.*)")', ['{"__name__":"y","instance":"host:9090","job":"j"} 1']],
    ['label_replace(y, "host", "$2", "nope", "(.*):(.*)")', ['{"__name__":"y","instance":"host:9090","job":"j"} 1']],
    ['label_replace(y, "job", "", "job", ".*")', ['{"__name__":"y","instance":"host:9090"} 1']],
    ['label_replace(y, "x", "$1", "instance", "(?i)(HOST).*")', ['{"__name__":"y","instance":"host:9090","job":"j","x":"host"} 1']],
    ['label_join(y, "both", "/", "job", "instance")', ['{"__name__":"y","both":"j/host:9090","instance":"host:9090","job":"j"} 1']],
  ];
  for (const [q, want] of cases) {
    it(q, async () => {
      const { engine } = engineFor(x);
      if (want.length === 0 && /^(time|scalar)/.test(q)) {
        const r = await engine.instantQuery({ tenant: 't', query: q, time: 100 * S });
        assert.equal(r.resultType, 'scalar');
        return;
      }
      assert.deepEqual(await instant(engine, q, 100 * S), want.slice().sort());
    });
  }

  it('sort and sort_desc put NaN last', async () => {
    const { engine } = engineFor(x);
    for (const [q, order] of [
      ['sort(x)', ['a', 'b', 'c']],
      ['sort_desc(x)', ['b', 'a', 'c']],
    ] as const) {
      const r = await engine.instantQuery({ tenant: 't', query: q, time: 0 });
      assert.ok(r.resultType === 'vector');
      if (r.resultType === 'vector')
        assert.deepEqual(
          r.result.map((s) => labelsToRecord(s.metric).i),
          order,
        );
    }
  });

  it('label_replace rejects bad regexes and destination names, and colliding results', async () => {
    const { engine } = engineFor(x);
    const q = (query: string) => engine.instantQuery({ tenant: 't', query, time: 0 });
    await assert.rejects(q('label_replace(x, "a", "", "i", "(")'), { message: 'invalid regular expression in label_replace(): (' });
    await assert.rejects(q('label_replace(x, "", "", "i", ".*")'), { message: 'invalid destination label name in label_replace(): ' });
    await assert.rejects(q('label_replace(x, "i", "same", "i", ".*")'), { message: 'vector cannot contain metrics with the same labelset' });
  });

  it('histogram_quantile over classic buckets', async () => {
    const buckets: TestSeries[] = [
      ['0.1', 1],
      ['0.5', 3],
      ['1', 4],
      ['+Inf', 4],
    ].map(([le, v]) => ({ labels: { __name__: 'lat_bucket', job: 'j', le: String(le) }, samples: [[0, Number(v)]] }));
    const { engine } = engineFor(buckets);
    // 0.1 + (0.5 - 0.1) * 1/2, in float64 as Go computes it.
    assert.deepEqual(await instant(engine, 'histogram_quantile(0.5, lat_bucket)', 0), ['{"job":"j"} 0.30000000000000004']);
    assert.deepEqual(await instant(engine, 'histogram_quantile(0.9, lat_bucket)', 0), ['{"job":"j"} 0.8']);
    assert.deepEqual(await instant(engine, 'histogram_quantile(1, lat_bucket)', 0), ['{"job":"j"} 1']);
    assert.deepEqual(await instant(engine, 'histogram_quantile(2, lat_bucket)', 0), ['{"job":"j"} Infinity']);
    assert.deepEqual(await instant(engine, 'histogram_quantile(0.5, lat_bucket{le!="+Inf"})', 0), ['{"job":"j"} NaN']);
  });
});

describe('functions: classic histograms, sort_by_label, min_of/max_of', () => {
  const bucket = (le: string, v: number): TestSeries => ({ labels: { __name__: 'h_bucket', le, job: 'j' }, samples: [[0, v]] });
  const h = [bucket('1', 2), bucket('2', 6), bucket('4', 8), bucket('+Inf', 10)];

  it('histogram_fraction interpolates inside buckets and assumes 0 as the lowest bound', async () => {
    close((await single(h, 'histogram_fraction(0, 2, h_bucket)', 0)).value, 0.6);
    close((await single(h, 'histogram_fraction(1.5, 3, h_bucket)', 0)).value, (2 + 1) / 10);
    close((await single(h, 'histogram_fraction(-Inf, +Inf, h_bucket)', 0)).value, 1);
  });

  it('histogram_quantiles adds one series per quantile, labelled as OpenMetrics floats', async () => {
    const { engine } = engineFor(h, { enableExperimentalFunctions: true });
    assert.deepEqual(await instant(engine, 'histogram_quantiles(h_bucket, "q", 0.5, 1)', 0), ['{"job":"j","q":"0.5"} 1.75', '{"job":"j","q":"1.0"} 4']);
  });

  it('histogram_quantile reports buckets it had to make monotonic, and bad le labels', async () => {
    const { engine } = engineFor([...h, bucket('3', 7), bucket('3.5', 6)]);
    const r = await engine.instantQuery({ tenant: 't', query: 'histogram_quantile(0.5, h_bucket)', time: 0 });
    assert.match(r.infos[0], /needed to be fixed for monotonicity/);
    const bad = engineFor([{ labels: { __name__: 's', le: 'x' }, samples: [[0, 1]] }]).engine;
    const w = await bad.instantQuery({ tenant: 't', query: 'histogram_quantile(0.5, s)', time: 0 });
    assert.deepEqual(w.warnings, ['PromQL warning: bucket label "le" is missing or has a malformed value of "x" for metric name "s" (1:25)']);
  });

  it('sort_by_label sorts naturally, sort_by_label_desc reverses', async () => {
    const series = ['10', '9', '100'].map((i): TestSeries => ({ labels: { __name__: 'm', instance: i }, samples: [[0, 1]] }));
    const { engine } = engineFor(series, { enableExperimentalFunctions: true });
    const order = async (q: string) => {
      const r = await engine.instantQuery({ tenant: 't', query: q, time: 0 });
      return r.resultType === 'vector' ? r.result.map((s) => labelsToRecord(s.metric).instance) : [];
    };
    assert.deepEqual(await order('sort_by_label(m, "instance")'), ['9', '10', '100']);
    assert.deepEqual(await order('sort_by_label_desc(m, "instance")'), ['100', '10', '9']);
  });

  it('min_of and max_of are scalars; NaN wins', async () => {
    const { engine } = engineFor([], { enableExperimentalFunctions: true });
    const scalar = async (q: string) => {
      const r = await engine.instantQuery({ tenant: 't', query: q, time: 0 });
      return r.resultType === 'scalar' ? r.result.f : undefined;
    };
    assert.equal(await scalar('min_of(3, 5)'), 3);
    assert.equal(await scalar('max_of(3, 5)'), 5);
    assert.ok(Number.isNaN(await scalar('max_of(NaN, 5)')));
  });
});
