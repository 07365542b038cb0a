import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { labelsToRecord } from '@strata/model';
import type { TestSeries } from './testing.ts';
import { engineFor, every, instant } from './testing.ts';

const M = 60_000;

const x: TestSeries[] = [
  { labels: { __name__: 'x', job: 'a', inst: '1' }, samples: [[0, 1]] },
  { labels: { __name__: 'x', job: 'a', inst: '2' }, samples: [[0, 3]] },
  { labels: { __name__: 'x', job: 'b', inst: '1' }, samples: [[0, 5]] },
];

describe('aggregations', () => {
  const cases: [string, string[]][] = [
    ['sum(x)', ['{} 9']],
    ['sum by (job) (x)', ['{"job":"a"} 4', '{"job":"b"} 5']],
    ['sum(x) by (job)', ['{"job":"a"} 4', '{"job":"b"} 5']],
    ['sum without (inst) (x)', ['{"job":"a"} 4', '{"job":"b"} 5']],
    ['sum by (__name__) (x)', ['{"__name__":"x"} 9']],
    ['sum by (nope) (x)', ['{} 9']],
    ['sum without () (x)', ['{"inst":"1","job":"a"} 1', '{"inst":"1","job":"b"} 5', '{"inst":"2","job":"a"} 3']],
    ['count by (job) (x)', ['{"job":"a"} 2', '{"job":"b"} 1']],
    ['avg by (job) (x)', ['{"job":"a"} 2', '{"job":"b"} 5']],
    ['min by (inst) (x)', ['{"inst":"1"} 1', '{"inst":"2"} 3']],
    ['max by (inst) (x)', ['{"inst":"1"} 5', '{"inst":"2"} 3']],
    ['group by (job) (x)', ['{"job":"a"} 1', '{"job":"b"} 1']],
    ['stdvar(x)', ['{} 2.6666666666666665']],
    ['stddev(x)', ['{} 1.632993161855452']],
    ['stddev by (job) (x)', ['{"job":"a"} 1', '{"job":"b"} 0']],
    ['quantile(0.5, x)', ['{} 3']],
    ['quantile(0.25, x)', ['{} 2']],
    ['quantile(2, x)', ['{} Infinity']],
    ['topk(2, x)', ['{"__name__":"x","inst":"1","job":"b"} 5', '{"__name__":"x","inst":"2","job":"a"} 3']],
    ['bottomk by (job) (1, x)', ['{"__name__":"x","inst":"1","job":"a"} 1', '{"__name__":"x","inst":"1","job":"b"} 5']],
    ['topk(0, x)', []],
    ['count_values("value", x)', ['{"value":"1"} 1', '{"value":"3"} 1', '{"value":"5"} 1']],
    ['count_values by (job) ("v", x > 2)', ['{"job":"a","v":"3"} 1', '{"job":"b","v":"5"} 1']],
    ['count_values without (inst) ("v", x * 0)', ['{"job":"a","v":"0"} 2', '{"job":"b","v":"0"} 1']],
  ];
  for (const [q, want] of cases) {
    it(q, async () => assert.deepEqual(await instant(engineFor(x).engine, q, 0), want.slice().sort()));
  }

  it('topk orders an instant result by value, descending', async () => {
    const r = await engineFor(x).engine.instantQuery({ tenant: 't', query: 'topk(3, x)', time: 0 });
    assert.ok(r.resultType === 'vector');
    if (r.resultType === 'vector')
      assert.deepEqual(
        r.result.map((s) => s.f),
        [5, 3, 1],
      );
  });

  it('NaN never wins min, max, topk or bottomk against a number', async () => {
    const n: TestSeries[] = [
      { labels: { __name__: 'n', i: '1' }, samples: [[0, NaN]] },
      { labels: { __name__: 'n', i: '2' }, samples: [[0, 2]] },
      { labels: { __name__: 'n', i: '3' }, samples: [[0, -1]] },
    ];
    const { engine } = engineFor(n);
    assert.deepEqual(await instant(engine, 'max(n)', 0), ['{} 2']);
    assert.deepEqual(await instant(engine, 'min(n)', 0), ['{} -1']);
    assert.deepEqual(await instant(engine, 'topk(1, n)', 0), ['{"__name__":"n","i":"2"} 2']);
    assert.deepEqual(await instant(engine, 'bottomk(1, n)', 0), ['{"__name__":"n","i":"3"} -1']);
    assert.deepEqual(await instant(engine, 'sum(n)', 0), ['{} NaN']);
    // The NaN sorts as the smallest value for quantile.
    assert.deepEqual(await instant(engine, 'quantile(0, n)', 0), ['{} NaN']);
    await assert.rejects(engine.instantQuery({ tenant: 't', query: 'topk(NaN, n)', time: 0 }), { message: 'Parameter value is NaN' });
  });

  it('avg falls back to the incremental mean instead of overflowing', async () => {
    const big: TestSeries[] = [1, 2].map((i) => ({ labels: { __name__: 'b', i: String(i) }, samples: [[0, 1.5e308]] }));
    assert.deepEqual(await instant(engineFor(big).engine, 'avg(b)', 0), ['{} 1.5e+308']);
    assert.deepEqual(await instant(engineFor(big).engine, 'sum(b)', 0), ['{} Infinity']);
  });

  it('warns about quantiles outside [0, 1]', async () => {
    const r = await engineFor(x).engine.instantQuery({ tenant: 't', query: 'quantile(1.5, x)', time: 0 });
    assert.deepEqual(r.warnings, ['PromQL warning: quantile value should be between 0 and 1, got 1.5 (1:10)']);
  });

  it('range queries aggregate at each step; topk keeps each series apart', async () => {
    const s: TestSeries[] = [
      { labels: { __name__: 's', i: '1' }, samples: every(M, [1, 5, 1]) },
      { labels: { __name__: 's', i: '2' }, samples: every(M, [2, 2, 2]) },
    ];
    const { engine } = engineFor(s);
    const sum = await engine.rangeQuery({ tenant: 't', query: 'sum(s)', start: 0, end: 2 * M, step: M });
    assert.ok(sum.resultType === 'matrix');
    if (sum.resultType === 'matrix')
      assert.deepEqual(
        sum.result[0].floats.map((p) => p.f),
        [3, 7, 3],
      );
    const top = await engine.rangeQuery({ tenant: 't', query: 'topk(1, s)', start: 0, end: 2 * M, step: M });
    assert.ok(top.resultType === 'matrix');
    if (top.resultType === 'matrix') {
      assert.deepEqual(
        top.result.map((r) => [labelsToRecord(r.metric).i, r.floats.map((p) => p.t / M)]),
        [
          ['1', [1]],
          ['2', [0, 2]],
        ],
      );
    }
  });
});

describe('limit_ratio', () => {
  const many: TestSeries[] = Array.from({ length: 40 }, (_, i) => ({ labels: { __name__: 'r', i: String(i) }, samples: [[0, i]] }));

  it('keeps complementary sets for r and r - 1, the same at every step', async () => {
    const { engine } = engineFor(many, { enableExperimentalFunctions: true });
    const a = await instant(engine, 'limit_ratio(0.3, r)', 0);
    const b = await instant(engine, 'limit_ratio(-0.7, r)', 0);
    assert.equal(a.length + b.length, 40);
    assert.deepEqual(
      a.filter((x) => b.includes(x)),
      [],
    );
    assert.ok(a.length > 0 && b.length > 0);
    assert.deepEqual(await instant(engine, 'limit_ratio(0, r)', 0), []);
    assert.equal((await instant(engine, 'limit_ratio(1, r)', 0)).length, 40);
  });

  it('warns when capping the ratio and fails on NaN', async () => {
    const { engine } = engineFor(many, { enableExperimentalFunctions: true });
    const r = await engine.instantQuery({ tenant: 't', query: 'limit_ratio(1.5, r)', time: 0 });
    assert.equal(r.resultType === 'vector' ? r.result.length : -1, 40);
    assert.match(r.warnings[0], /ratio value should be between -1 and 1, got 1.5, capping to 1/);
    await assert.rejects(engine.instantQuery({ tenant: 't', query: 'limit_ratio(NaN, r)', time: 0 }), /Ratio value is NaN/);
  });
});
