import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatExpr } from './ast.ts';
import { PromQLExecutionError } from './errors.ts';
import { parseExpr } from './parser.ts';
import type { TestSeries } from './testing.ts';
import { engineFor, every, instant } from './testing.ts';

const S = 1000;
const opts = { enableExperimentalFunctions: true };

describe('anchored and smoothed range selectors', () => {
  // 1..5 every 15s, then 9..13: no counter reset.
  const counter: TestSeries[] = [{ labels: { __name__: 'c' }, samples: every(15 * S, [1, 2, 3, 4, 5, 9, 10, 11, 12, 13]) }];

  it('anchored: from the last sample before the window to the last in it, without extrapolation', async () => {
    const { engine } = engineFor(counter, opts);
    assert.deepEqual(await instant(engine, 'increase(c[1m] anchored)', 80 * S), ['{} 7']);
    assert.deepEqual(await instant(engine, 'increase(c[1m] anchored)', 5 * S), ['{} 0']);
    assert.deepEqual(await instant(engine, 'rate(c[1m] anchored)', 80 * S), [`{} ${7 / 60}`]);
    assert.deepEqual(await instant(engine, 'changes(c[1m] anchored)', 80 * S), ['{} 4']);
  });

  it('smoothed: interpolated at both ends; a counter that dropped restarted from zero', async () => {
    const { engine } = engineFor(counter, opts);
    assert.deepEqual(await instant(engine, 'increase(c[1m] smoothed)', 120 * S), ['{} 7']);
    const reset = engineFor([{ labels: { __name__: 'r' }, samples: every(60 * S, [9, 8, 5, 4]) }], opts).engine;
    // left 8·¼ = 2, right 4·¼ = 1, resets add 8 and 5.
    assert.deepEqual(await instant(reset, 'increase(r[2m] smoothed)', 135 * S), ['{} 12']);
    const gauge = engineFor([{ labels: { __name__: 'g' }, samples: every(60 * S, [11, -1, 100, 0]) }], opts).engine;
    assert.deepEqual(await instant(gauge, 'delta(g[5m] smoothed)', 330 * S), ['{} -5']);
  });

  it('a smoothed instant selector interpolates at the evaluation time and carries the last value forward', async () => {
    const { engine } = engineFor([{ labels: { __name__: 'm' }, samples: every(10 * S, [1, 2, 3]) }], opts);
    assert.deepEqual(await instant(engine, 'm smoothed', 15 * S), ['{"__name__":"m"} 2.5']);
    assert.deepEqual(await instant(engine, 'm smoothed', 25 * S), ['{"__name__":"m"} 3']);
  });

  it('is experimental, prints back, and only works with the functions that support it', async () => {
    assert.throws(() => parseExpr('rate(c[1m] anchored)'), /anchored modifier is experimental and not enabled/);
    assert.equal(formatExpr(parseExpr('rate(c[1m] offset 1m smoothed)', opts)), 'rate(c[1m] offset 1m smoothed)');
    const { engine } = engineFor(counter, opts);
    await assert.rejects(engine.instantQuery({ tenant: 't', query: 'max_over_time(c[1m] anchored)', time: 0 }), (err: unknown) => {
      assert.ok(err instanceof PromQLExecutionError);
      assert.equal(err.message, 'anchored modifier can only be used with: changes, delta, increase, rate, resets - not with max_over_time');
      return true;
    });
  });
});
