import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { exponentialBound, reduceResolution, expandBuckets, compactBuckets } from './buckets.ts';
import { FloatHistogram } from './float-histogram.ts';
import { parseHistogramNotation as h } from './notation.ts';
import { histogramFraction, histogramQuantile, histogramVariance } from './stats.ts';

describe('native histogram buckets', () => {
  it('computes exponential bounds per schema', () => {
    assert.equal(exponentialBound(0, 0), 1);
    assert.equal(exponentialBound(1, 0), 2);
    assert.equal(exponentialBound(-1, 0), 0.5);
    // Prometheus' table, one bit below the correctly rounded √2 (Math.SQRT2): Prometheus prints 1.414213562373095.
    assert.equal(exponentialBound(1, 1), 1.414213562373095);
    assert.equal(exponentialBound(-1, 2), 0.8408964152537144);
    assert.equal(exponentialBound(3, 8), 2 * 0.5040779490592088);
    assert.equal(exponentialBound(1, -1), 4);
    assert.equal(exponentialBound(1024, 0), Number.MAX_VALUE);
  });

  it('reduces resolution by merging buckets, and compacts spans', () => {
    const pairs = [
      { index: 1, count: 1 },
      { index: 2, count: 2 },
      { index: 3, count: 3 },
      { index: 4, count: 4 },
    ];
    assert.deepEqual(reduceResolution(pairs, 1, 0), [
      { index: 1, count: 3 },
      { index: 2, count: 7 },
    ]);
    const c = compactBuckets(
      [
        { offset: 0, length: 3 },
        { offset: 0, length: 2 },
      ],
      [0, 1, 0, 0, 2],
      0,
    );
    assert.deepEqual(c, {
      spans: [
        { offset: 1, length: 1 },
        { offset: 2, length: 1 },
      ],
      buckets: [1, 2],
    });
    assert.deepEqual(expandBuckets(c.spans, c.buckets), [
      { index: 1, count: 1 },
      { index: 4, count: 2 },
    ]);
  });
});

describe('FloatHistogram', () => {
  it('parses the promqltest notation and prints it back', () => {
    const x = h('{{schema:1 sum:5 count:4 z_bucket:1 z_bucket_w:0.001 buckets:[1 2] offset:1 n_buckets:[1] counter_reset_hint:gauge}}');
    assert.equal(x.testExpression(), '{{schema:1 count:4 sum:5 z_bucket:1 z_bucket_w:0.001 counter_reset_hint:gauge offset:1 buckets:[1 2] n_buckets:[1]}}');
    // Bounds are computed, not tabled: Go's table can differ in the last bit (0.7071067811865475 there).
    assert.equal(x.toString(), '{count:4, sum:5, [-1,-0.7071067811865475):1, [-0.001,0.001]:1, (1,1.414213562373095]:1, (1.414213562373095,2]:2}');
    const nhcb = h('{{schema:-53 sum:5 count:4 custom_values:[5 10] buckets:[1 2 1]}}');
    assert.ok(nhcb.usesCustomBuckets());
    assert.deepEqual(
      nhcb.allBuckets().map((b) => [b.lower, b.upper, b.count]),
      [
        [-Infinity, 5, 1],
        [5, 10, 2],
        [10, Infinity, 1],
      ],
    );
  });

  it('adds across schemas by reducing the finer one, and subtracts', () => {
    const a = h('{{schema:1 sum:3 count:3 buckets:[1 1 1]}}');
    const b = h('{{schema:0 sum:2 count:2 buckets:[2]}}');
    a.add(b);
    assert.equal(a.compact(0).testExpression(), '{{count:5 sum:5 buckets:[3 2]}}');
    const c = h('{{sum:5 count:5 buckets:[3 2]}}');
    c.sub(h('{{sum:1 count:1 buckets:[1]}}'));
    assert.equal(c.compact(0).testExpression(), '{{count:4 sum:4 buckets:[2 2]}}');
  });

  it('widens the zero bucket to the larger threshold when adding', () => {
    const a = h('{{sum:1 count:2 z_bucket:1 z_bucket_w:0.5 buckets:[1]}}');
    const b = h('{{sum:1 count:2 z_bucket:1 z_bucket_w:1 buckets:[0 1]}}');
    a.add(b);
    // a's (0.5,1] bucket moves into the zero bucket; b's (0.5,1] is already inside it.
    assert.equal(a.compact(0).testExpression(), '{{count:4 sum:2 z_bucket:3 z_bucket_w:1 offset:1 buckets:[1]}}');
  });

  it('refuses to mix exponential and custom buckets, and reconciles custom bounds', () => {
    assert.throws(() => h('{{sum:1 count:1 buckets:[1]}}').add(h('{{schema:-53 custom_values:[1] buckets:[1]}}')), /mix of exponential and custom/);
    const a = h('{{schema:-53 sum:3 count:3 custom_values:[1 2 5] buckets:[1 1 1]}}');
    const r = a.add(h('{{schema:-53 sum:1 count:1 custom_values:[2 5] buckets:[1]}}'));
    assert.ok(r.nhcbBoundsReconciled);
    assert.deepEqual(a.customValues, [2, 5]);
    assert.equal(a.testExpression(), '{{schema:-53 count:4 sum:4 custom_values:[2 5] buckets:[3 1]}}');
  });

  it('detects counter resets from counts, buckets and the hint', () => {
    const prev = h('{{sum:5 count:5 buckets:[2 3]}}');
    assert.equal(h('{{sum:6 count:6 buckets:[2 4]}}').detectReset(prev), false);
    assert.equal(h('{{sum:6 count:6 buckets:[1 5]}}').detectReset(prev), true);
    assert.equal(h('{{sum:6 count:6 offset:1 buckets:[6]}}').detectReset(prev), true);
    assert.equal(h('{{sum:9 count:9 buckets:[3 6] counter_reset_hint:reset}}').detectReset(prev), true);
    assert.equal(h('{{sum:1 count:1 buckets:[1] counter_reset_hint:not_reset}}').detectReset(prev), false);
  });

  it('compares bitwise, whatever the span shape', () => {
    const a = FloatHistogram.from(h('{{sum:3 count:3 buckets:[1 2]}}'));
    const b = h('{{sum:3 count:3 buckets:[1 2]}}');
    b.positiveSpans = [
      { offset: 0, length: 1 },
      { offset: 0, length: 1 },
    ];
    assert.ok(a.equals(b));
    assert.ok(!a.equals(h('{{sum:3 count:3 buckets:[2 1]}}')));
  });

  it('computes quantiles, fractions and variance like Prometheus', () => {
    const x = h('{{schema:0 sum:10 count:4 buckets:[1 2 1]}}');
    // Buckets (0.5,1]:1 (1,2]:2 (2,4]:1; the median is in (1,2], exponential interpolation.
    assert.ok(Math.abs(histogramQuantile(0.5, x).value - 2 ** 0.5) < 1e-12);
    assert.equal(histogramQuantile(1.5, x).value, Infinity);
    assert.equal(histogramFraction(0, 1, x).value, 0.25);
    assert.equal(histogramFraction(2, 1, x).value, 0);
    const nhcb = h('{{schema:-53 sum:5 count:4 custom_values:[5 10] buckets:[1 2 1]}}');
    assert.equal(histogramQuantile(0.5, nhcb).value, 7.5);
    assert.ok(histogramVariance(x) > 0);
  });
});
