// Unit tests for the promqltest script parser: value-sequence expansion, series
// descriptions, and how load/eval blocks and their expectations are read.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { EvalCmd, LoadCmd } from './script.ts';
import type { SeqValue } from './series-desc.ts';
import { parseGoNumber, parseScript } from './script.ts';
import { goUnquote, parseSeriesDesc, parseValueSequence } from './series-desc.ts';

const f = (value: number): SeqValue => ({ kind: 'float', value });
const gap: SeqValue = { kind: 'omitted' };
const stale: SeqValue = { kind: 'stale' };

function onlyEval(src: string): EvalCmd {
  const s = parseScript(src);
  assert.deepEqual(s.problems, []);
  const evals = s.commands.filter((c): c is EvalCmd => c.kind === 'eval');
  assert.equal(evals.length, 1);
  return evals[0];
}

describe('value sequences', () => {
  test('plain values, gaps and stale markers', () => {
    assert.deepEqual(parseValueSequence('5 _ stale -2 1e3 .5'), [f(5), gap, stale, f(-2), f(1000), f(0.5)]);
  });

  test('a+bxN gives N+1 values', () => {
    assert.deepEqual(parseValueSequence('1+2x3'), [f(1), f(3), f(5), f(7)]);
    assert.deepEqual(parseValueSequence('1-2x3'), [f(1), f(-1), f(-3), f(-5)]);
    assert.deepEqual(parseValueSequence('-1+1x2'), [f(-1), f(0), f(1)]);
    assert.deepEqual(parseValueSequence('0+10x0'), [f(0)]);
  });

  test('axN repeats N+1 times; _xN is N gaps', () => {
    assert.deepEqual(parseValueSequence('1x3'), [f(1), f(1), f(1), f(1)]);
    assert.deepEqual(parseValueSequence('_x3'), [gap, gap, gap]);
    // Hex is off in series descriptions: 0x2 is 0 repeated.
    assert.deepEqual(parseValueSequence('0x2'), [f(0), f(0), f(0)]);
    assert.deepEqual(parseValueSequence('stalex1'), [stale, stale]);
  });

  test('Inf, -Inf, +Inf and NaN', () => {
    const v = parseValueSequence('Inf -Inf +Inf NaN inf');
    assert.deepEqual(v.slice(0, 3), [f(Infinity), f(-Infinity), f(Infinity)]);
    assert.equal(v[3].kind, 'float');
    assert.ok(v[3].kind === 'float' && Number.isNaN(v[3].value));
    assert.deepEqual(v[4], f(Infinity));
    assert.deepEqual(parseValueSequence('Infx1'), [f(Infinity), f(Infinity)]);
  });

  test('native histograms are parsed, with repetition and increments', () => {
    const v = parseValueSequence('1 {{schema:0 sum:5 count:4 buckets:[1 2 1]}} {{sum:1}}x2 {{count:1}}+{{count:2}}x1 _');
    assert.deepEqual(
      v.map((x) => x.kind),
      ['float', 'histogram', 'histogram', 'histogram', 'histogram', 'histogram', 'histogram', 'omitted'],
    );
    const h = v[1].kind === 'histogram' ? v[1] : undefined;
    assert.equal(h?.text, '{{schema:0 sum:5 count:4 buckets:[1 2 1]}}');
    assert.equal(h?.h.testExpression(), '{{count:4 sum:5 buckets:[1 2 1]}}');
    // The increment is added for each repetition.
    const counts = v.slice(5, 7).map((x) => (x.kind === 'histogram' ? x.h.count : -1));
    assert.deepEqual(counts, [1, 3]);
  });

  test('rejects what Prometheus rejects', () => {
    assert.throws(() => parseValueSequence('foo'), /expected number or "stale"/);
    assert.throws(() => parseValueSequence('1+2'), /x<count>/);
    assert.throws(() => parseValueSequence('1m'), /bad number/);
    assert.throws(() => parseValueSequence('1 # comment'), /unexpected character/);
  });
});

describe('series descriptions', () => {
  test('name, labels and values', () => {
    const s = parseSeriesDesc('http_requests{job="api", instance="0"}\t0+10x2');
    assert.deepEqual(s.labels, [
      { name: '__name__', value: 'http_requests' },
      { name: 'instance', value: '0' },
      { name: 'job', value: 'api' },
    ]);
    assert.deepEqual(s.values, [f(0), f(10), f(20)]);
  });

  test('labels only, a trailing comma, other quotes and escapes', () => {
    assert.deepEqual(parseSeriesDesc('{} 1').labels, []);
    assert.deepEqual(parseSeriesDesc(`{a='x', b=\`y\\n\`, c="q\\"z",} 1`).labels, [
      { name: 'a', value: 'x' },
      { name: 'b', value: 'y\\n' },
      { name: 'c', value: 'q"z' },
    ]);
    assert.deepEqual(parseSeriesDesc('{__name__="up", job="x"} 1').labels, [
      { name: '__name__', value: 'up' },
      { name: 'job', value: 'x' },
    ]);
  });

  test('UTF-8 names in quoted form', () => {
    assert.deepEqual(parseSeriesDesc('{"metric.name", "label.one"="v"} 1').labels, [
      { name: '__name__', value: 'metric.name' },
      { name: 'label.one', value: 'v' },
    ]);
  });

  test('a series without values is an error', () => {
    assert.throws(() => parseSeriesDesc('metric{a="b"}'), /missing value sequence/);
    assert.throws(() => parseSeriesDesc('metric{a="b" 1'), /label set/);
  });
});

describe('scripts', () => {
  test('load blocks: interval, series, nhcb, start-timestamp lines; a comment ends a block', () => {
    const s = parseScript(
      [
        'load 30s',
        '  a{x="1"} 1 2 3',
        '  a{x="1"} 7',
        '  b 0+1x1',
        '# comment',
        'load_with_nhcb 5m',
        '  h_bucket{le="1"} 1',
        '  c@st _ -1m',
        '  c 1 2',
        '',
        'clear',
      ].join('\n'),
    );
    assert.deepEqual(s.problems, []);
    assert.deepEqual(
      s.commands.map((c) => c.kind),
      ['load', 'load', 'clear'],
    );
    const [l1, l2] = s.commands as LoadCmd[];
    assert.equal(l1.intervalMs, 30_000);
    assert.equal(l1.withNhcb, false);
    // A repeated series in one load replaces the earlier line, as in Prometheus.
    assert.deepEqual(
      l1.series.map((x) => x.values),
      [[f(7)], [f(0), f(1)]],
    );
    assert.equal(l2.withNhcb, true);
    assert.equal(l2.intervalMs, 300_000);
    assert.deepEqual(l2.startTimestampSeries, [[{ name: '__name__', value: 'c' }]]);
  });

  test('instant eval with expected series', () => {
    const e = onlyEval('eval instant at 1m30s sum by (a) (x)\n  {a="1"} 3\n  {a="2"} NaN\n');
    assert.equal(e.isRange, false);
    assert.equal(e.evalMs, 90_000);
    assert.equal(e.query, 'sum by (a) (x)');
    assert.equal(e.line, 1);
    assert.deepEqual(
      [...e.expected.values()].map((x) => [x.pos, x.line]),
      [
        [1, 2],
        [2, 3],
      ],
    );
  });

  test('eval at a bare 0 and range evals', () => {
    assert.equal(onlyEval('eval instant at 0 x').evalMs, 0);
    const e = onlyEval('eval range from 0 to 10m step 5m rate(x[5m])\n  {} 1 _ 3');
    assert.deepEqual([e.isRange, e.startMs, e.endMs, e.stepMs], [true, 0, 600_000, 300_000]);
    assert.deepEqual([...e.expected.values()][0].values, [f(1), gap, f(3)]);
  });

  test('expect lines', () => {
    const e = onlyEval(
      [
        'eval instant at 5m sort(x)',
        '  expect ordered',
        '  expect warn msg: something went wrong',
        '  expect info regex: went (wrong|boom)',
        '  x{a="2"} 1',
        '  x{a="1"} 2',
      ].join('\n'),
    );
    assert.equal(e.scriptError, undefined);
    assert.equal(e.expect.ordered, true);
    assert.deepEqual(e.expect.warn, [{ message: 'something went wrong' }]);
    assert.equal(e.expect.info.length, 1);
    assert.ok(e.expect.info[0].regex?.test('it went boom'));
    assert.equal(onlyEval('eval instant at 0 x\n  expect no_warn\n  expect no_info').expect.noInfo, true);
    // expect lines do not take a position, so the series are 1 and 2.
    assert.deepEqual(
      [...e.expected.values()].map((x) => x.pos),
      [1, 2],
    );
  });

  test('expect fail with a message or a regex; bare fail matches anything', () => {
    assert.deepEqual(onlyEval('eval instant at 0 x\n  expect fail').expect.fail, [{}]);
    assert.deepEqual(onlyEval('eval instant at 0 x\n  expect fail msg:  vector cannot contain  ').expect.fail, [{ message: 'vector cannot contain' }]);
    assert.ok(onlyEval('eval instant at 0 x\n  expect fail regex: conflicting label').expect.fail[0].regex?.test('found conflicting labels'));
  });

  test('the same annotation type with and without no_ is a script error', () => {
    const e = onlyEval('eval instant at 0 x\n  expect warn\n  expect no_warn');
    assert.match(e.scriptError ?? '', /warn and no_warn cannot be used together/);
  });

  test('deprecated eval_fail / eval_ordered and expected_fail_message', () => {
    const e = onlyEval('eval_fail instant at 0 -{job="api"}\n  expected_fail_message vector cannot contain metrics with the same labelset');
    assert.equal(e.legacy.fail, true);
    assert.equal(e.expectedFailMessage, 'vector cannot contain metrics with the same labelset');
    const r = onlyEval('eval_fail instant at 0 x\n  expected_fail_regexp (a|b)c');
    assert.ok(r.expectedFailRegexp?.test('bc'));
    assert.equal(onlyEval('eval_ordered instant at 0 x').legacy.ordered, true);
  });

  test('a bare number line is a scalar and ends the block', () => {
    const e = onlyEval('eval instant at 0 scalar(x)\n  0x10');
    assert.equal(e.expectedScalar, 16);
    assert.equal(onlyEval('eval instant at 0 1\n  -Inf').expectedScalar, -Infinity);
  });

  test('expect string and expect range vector', () => {
    assert.equal(onlyEval('eval instant at 50m ("Foo")\n  expect string " Foo "').expectedString, ' Foo ');
    assert.equal(onlyEval('eval instant at 50m `Foo`\n  expect string `Foo`').expectedString, 'Foo');
    const e = onlyEval('eval instant at 1m x[1m]\n  expect range vector from 10s to 1m step 10s\n  x{env="a"} 2 3 4 5 6');
    assert.deepEqual([e.expectRangeVector, e.excludeFromRangeQuery, e.startMs, e.endMs, e.stepMs, e.evalMs], [true, true, 10_000, 60_000, 10_000, 60_000]);
  });

  test('several values for an instant eval need expect range vector', () => {
    const e = onlyEval('eval instant at 1m x\n  x 1 2');
    assert.match(e.scriptError ?? '', /expecting multiple values in instant evaluation not allowed/);
  });

  test('unknown commands are reported, the rest is still read', () => {
    const s = parseScript('frobnicate 1\n  x 1\n\neval instant at 0 x\n');
    assert.equal(s.problems.length, 1);
    assert.match(s.problems[0].message, /invalid command/);
    assert.equal(s.commands.length, 1);
  });
});

describe('Go literals', () => {
  test('numbers as strconv.ParseInt(s, 0, 64) then ParseFloat', () => {
    assert.equal(parseGoNumber('42'), 42);
    assert.equal(parseGoNumber('-0x1F'), -31);
    assert.equal(parseGoNumber('010'), 8);
    assert.equal(parseGoNumber('0b101'), 5);
    assert.equal(parseGoNumber('1_000'), 1000);
    assert.equal(parseGoNumber('1.5e3'), 1500);
    assert.equal(parseGoNumber('+Inf'), Infinity);
    assert.ok(Number.isNaN(parseGoNumber('NaN')!));
    assert.equal(parseGoNumber('0x1p-2'), 0.25);
    assert.equal(parseGoNumber('{} 1'), undefined);
    assert.equal(parseGoNumber('metric'), undefined);
  });

  test('strings as strconv.Unquote', () => {
    assert.equal(goUnquote('"a\\tb\\u00e9\\x41"'), 'a\tbéA');
    assert.equal(goUnquote('`raw\\n`'), 'raw\\n');
    assert.equal(goUnquote('"unterminated'), undefined);
    assert.equal(goUnquote('"bad \\q escape"'), undefined);
  });
});
