import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseExpr } from '../parser.ts';
import { parseHistogramNotation as h } from './notation.ts';
import { trimHistogram } from './trim.ts';

const notation = (x: ReturnType<typeof h>) => x.testExpression();

describe('histogram trim operators (</, >/)', () => {
  const exp = h('{{schema:0 sum:123.75 count:34 z_bucket:1 z_bucket_w:0.001 buckets:[2 4 8 16] n_buckets:[1 2]}}');
  const custom = h('{{schema:-53 sum:172.5 count:15 custom_values:[5 10 15 20] buckets:[1 6 4 3 1]}}');

  it('cuts exponential buckets on their bounds and inside them (logarithmically), estimating the sum from geometric middles', () => {
    assert.equal(notation(trimHistogram(exp, 2, true)), '{{count:10 sum:3.5355339059327373 z_bucket:1 z_bucket_w:0.001 buckets:[2 4] n_buckets:[1 2]}}');
    const inside = trimHistogram(exp, Math.SQRT2, true);
    assert.ok(Math.abs(inside.count - 8) < 1e-9);
    // The zero bucket spans 0 here, so half of it stays.
    assert.equal(trimHistogram(exp, 0, false).zeroCount, 0.5);
  });

  it('cuts custom buckets linearly; the +Inf bucket goes for </ and stays at its lower bound for >/', () => {
    assert.equal(notation(trimHistogram(custom, 13, true)), '{{schema:-53 count:9.4 sum:75.1 custom_values:[5 10 15 20] buckets:[1 6 2.4]}}');
    assert.equal(notation(trimHistogram(custom, 15, false)), '{{schema:-53 count:4 sum:72.5 custom_values:[5 10 15 20] offset:3 buckets:[3 1]}}');
  });

  it('returns the histogram unchanged when nothing is cut', () => {
    assert.equal(trimHistogram(custom, Infinity, true), custom);
    assert.equal(trimHistogram(custom, 0, false), custom);
  });

  it('is an experimental operator between a histogram vector and a number', () => {
    assert.throws(() => parseExpr('h </ 2'), /experimental/);
    assert.doesNotThrow(() => parseExpr('h </ 2', { enableExperimentalFunctions: true }));
    assert.throws(() => parseExpr('2 >/ h', { enableExperimentalFunctions: true }), /needs an instant vector of histograms on the left/);
  });
});
