// Unit tests for the promqltest runner's checks, on small scripts: the runner
// must fail wrong answers as surely as it passes right ones.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { almostEqual, atModifierVariants, runScript } from './runner.ts';
import { parseScript } from './script.ts';

async function run(src: string) {
  const script = parseScript(src);
  assert.deepEqual(script.problems, []);
  return runScript(script);
}

const LOAD = `
load 1m
  m{a="1"} 0+1x10
  m{a="2"} 0+2x10
  s 1 2 stale 4
`;

describe('runner', () => {
  test('right answers pass, wrong ones fail with a reason', async () => {
    const out = await run(`${LOAD}
eval instant at 5m m
  m{a="1"} 5
  m{a="2"} 10

eval instant at 5m m
  m{a="1"} 5
  m{a="2"} 11

eval instant at 5m m
  m{a="1"} 5

eval instant at 5m sum(m)
  {} 15

eval instant at 5m sum(m)
  15
`);
    assert.deepEqual(
      out.map((o) => o.passed),
      [true, false, false, true, false],
    );
    assert.match(out[1].reason!, /expected 11 for m\{a="2"\} but got 10/);
    assert.match(out[2].reason!, /unexpected series m\{a="2"\}/);
    assert.match(out[4].reason!, /expected scalar result, but got a vector/);
  });

  test('range evals compare every step, gaps included', async () => {
    const out = await run(`${LOAD}
eval range from 0 to 3m step 1m m{a="1"}
  m{a="1"} 0 1 2 3

eval range from 0 to 3m step 1m m{a="1"}
  m{a="1"} 0 1 _ 3

eval range from 0 to 4m step 1m s
  s 1 2 _ 4 4
`);
    assert.deepEqual(
      out.map((o) => o.passed),
      [true, false, true],
    );
    assert.match(out[1].reason!, /expected 3 float points/);
  });

  test('stale markers end a series (loaded with their exact bits)', async () => {
    const out = await run(`${LOAD}
eval instant at 2m30s s

eval instant at 3m s
  s 4
`);
    assert.deepEqual(
      out.map((o) => [o.passed, o.reason]),
      [
        [true, undefined],
        [true, undefined],
      ],
    );
  });

  test('ordered results are checked by position', async () => {
    const out = await run(`${LOAD}
eval instant at 5m sort_desc(m)
  expect ordered
  m{a="2"} 10
  m{a="1"} 5

eval instant at 5m sort(m)
  expect ordered
  m{a="2"} 10
  m{a="1"} 5
`);
    assert.deepEqual(
      out.map((o) => o.passed),
      [true, false],
    );
    assert.match(out[1].reason!, /expected m\{a="1"\} at position 2 but was at 1/);
  });

  test('expected failures: any, by message, by regex, and a missing failure', async () => {
    const out = await run(`
load 1m
  x{a="1"} 1
  y{a="1"} 2

eval instant at 0 -{__name__=~"x|y"}
  expect fail

eval instant at 0 -{__name__=~"x|y"}
  expect fail msg: vector cannot contain metrics with the same labelset

eval instant at 0 -{__name__=~"x|y"}
  expect fail msg: something else

eval instant at 0 -{__name__=~"x|y"}
  expect fail regex: same label(set)?

eval instant at 0 x
  expect fail
`);
    assert.deepEqual(
      out.map((o) => o.passed),
      [true, true, false, true, false],
    );
    assert.equal(out[2].category, 'wrong-error');
    assert.equal(out[4].category, 'missing-error');
  });

  test('a query Strata cannot parse fails as a parse error', async () => {
    const out = await run(`${LOAD}
eval instant at 0 m +
`);
    assert.equal(out[0].passed, false);
    assert.equal(out[0].category, 'parse-error');
  });

  test('native histograms load, compare (layout exact, counts almost equal) and are flagged', async () => {
    const out = await run(`
load 1m
  h {{schema:0 sum:1 count:1 buckets:[1]}}+{{sum:2 count:2 buckets:[2]}}x2
  f 1

eval instant at 2m h
  h {{schema:0 sum:5 count:5 buckets:[5]}}

eval instant at 2m h
  h {{schema:0 sum:5 count:5 buckets:[4]}}

eval instant at 0 f
  f 1

eval instant at 0 {__name__=~"h|f"}
  f 1
  h {{sum:1 count:1 buckets:[1]}}

eval instant at 0 h
  h 1
`);
    assert.deepEqual(
      out.map((o) => [o.passed, o.nativeHistogram]),
      [
        [true, true],
        [false, true],
        [true, false],
        [true, true],
        [false, true],
      ],
    );
    assert.match(out[1].reason!, /expected \{\{count:5 sum:5 buckets:\[4\]\}\}/);
    assert.match(out[4].reason!, /expected float value 1 for h\{\} but got histogram/);
  });

  test('load_with_nhcb makes the base name a native-histogram series', async () => {
    const out = await run(`
load_with_nhcb 1m
  lat_bucket{le="1"} 1
  lat_bucket{le="+Inf"} 2

eval instant at 0 lat_bucket{le="1"}
  lat_bucket{le="1"} 1

eval instant at 0 lat
`);
    assert.deepEqual(
      out.map((o) => o.nativeHistogram),
      [false, true],
    );
  });

  test('clear empties the store', async () => {
    const out = await run(`${LOAD}
clear

eval instant at 5m m
`);
    assert.equal(out[0].passed, true);
  });

  test('skipThroughLine resumes after a given eval', async () => {
    const script = parseScript(`${LOAD}
eval instant at 5m m{a="1"}
  m{a="1"} 5

eval instant at 5m m{a="2"}
  m{a="2"} 10
`);
    const out = await runScript(script, { skipThroughLine: 7 });
    assert.deepEqual(
      out.map((o) => o.query),
      ['m{a="2"}'],
    );
  });
});

describe('almostEqual (Prometheus util/almost)', () => {
  test('relative epsilon, NaN equals NaN, zero is exact', () => {
    assert.ok(almostEqual(1, 1 + 1e-9));
    assert.ok(!almostEqual(1, 1.0001));
    assert.ok(almostEqual(NaN, NaN));
    assert.ok(!almostEqual(NaN, 1));
    assert.ok(almostEqual(Infinity, Infinity));
    assert.ok(!almostEqual(0, 1e-20));
    assert.ok(!almostEqual(1, 1, 1e-6, true, false));
  });
});

describe('@ variants (Prometheus atModifierTestCases)', () => {
  test('pin every selector and subquery, not what is inside a pinned subquery', () => {
    const v = atModifierVariants('rate(x[5m]) + max_over_time(y[10m:1m])', 60_000);
    assert.deepEqual(
      v.map((q) => q.evalMs),
      [-600_000, 0, 12_000, 60_000, 600_000],
    );
    assert.match(v[0].expr, /^rate\(x\[5m\] @ 60(\.000)?\) \+ max_over_time\(y\[10m:1m\] @ 60(\.000)?\)$/);
  });

  test('time-dependent functions get no variants; t=0 uses ±1s', () => {
    assert.deepEqual(atModifierVariants('time() - x', 60_000), []);
    assert.deepEqual(
      atModifierVariants('x', 0).map((q) => q.evalMs),
      [-1000, 0, 1000],
    );
  });
});
