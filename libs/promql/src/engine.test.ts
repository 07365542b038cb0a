import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { labelsToRecord } from '@strata/model';
import { PromQLBadDataError, PromQLExecutionError, PromQLParseError, PromQLTimeoutError } from './errors.ts';
import { toPrometheusData } from './format.ts';
import type { TestSeries } from './testing.ts';
import { engineFor, every, instant } from './testing.ts';

const S = 1000;
const M = 60 * S;

describe('engine: instant vector selectors', () => {
  const series: TestSeries[] = [
    { labels: { __name__: 'metric', job: 'a' }, samples: every(10 * S, [0, 1, 'stale', 2]) },
    { labels: { __name__: 'metric', job: 'b' }, samples: [[0, 5]] },
    { labels: { __name__: 'other', job: 'a' }, samples: [[0, 7]] },
  ];

  it('returns the latest sample within the lookback window', async () => {
    const { engine } = engineFor(series);
    assert.deepEqual(await instant(engine, 'metric', 10 * S), ['{"__name__":"metric","job":"a"} 1', '{"__name__":"metric","job":"b"} 5']);
    // The window is (t - 5m, t]: a sample exactly 5m old is gone.
    assert.deepEqual(await instant(engine, 'metric{job="b"}', 5 * M - 1), ['{"__name__":"metric","job":"b"} 5']);
    assert.deepEqual(await instant(engine, 'metric{job="b"}', 5 * M), []);
  });

  it('a staleness marker ends the series until the next sample', async () => {
    const { engine } = engineFor(series);
    assert.deepEqual(await instant(engine, 'metric{job="a"}', 20 * S), []);
    assert.deepEqual(await instant(engine, 'metric{job="a"}', 25 * S), []);
    assert.deepEqual(await instant(engine, 'metric{job="a"}', 30 * S), ['{"__name__":"metric","job":"a"} 2']);
  });

  it('honours lookbackDeltaMs', async () => {
    const { engine } = engineFor(series, { lookbackDeltaMs: 30 * S });
    assert.deepEqual(await instant(engine, 'metric{job="b"}', 29 * S), ['{"__name__":"metric","job":"b"} 5']);
    assert.deepEqual(await instant(engine, 'metric{job="b"}', 30 * S), []);
  });

  it('applies offsets, negative ones too, and @', async () => {
    const { engine } = engineFor(series);
    assert.deepEqual(await instant(engine, 'metric{job="a"} offset 20s', 30 * S), ['{"__name__":"metric","job":"a"} 1']);
    assert.deepEqual(await instant(engine, 'metric{job="a"} offset -20s', 10 * S), ['{"__name__":"metric","job":"a"} 2']);
    assert.deepEqual(await instant(engine, 'metric{job="a"} @ 10', 100 * S), ['{"__name__":"metric","job":"a"} 1']);
  });

  it('selects by regex on the metric name', async () => {
    const { engine } = engineFor(series);
    assert.deepEqual(await instant(engine, '{__name__=~"oth.*"}', 0), ['{"__name__":"other","job":"a"} 7']);
  });

  it('fetches each selector once, over the whole range plus lookback, range and offset', async () => {
    const { engine, querier } = engineFor(series);
    await engine.rangeQuery({ tenant: 'team-a', query: 'rate(metric[1m] offset 30s) + metric', start: 10 * M, end: 20 * M, step: M });
    assert.equal(querier.calls.length, 2);
    const [rate, plain] = querier.calls;
    assert.equal(rate.tenant, 'team-a');
    assert.equal(rate.mint, 10 * M - 5 * M - M - 30 * S);
    assert.equal(rate.maxt, 20 * M - 30 * S);
    assert.equal(plain.mint, 10 * M - 5 * M);
    assert.equal(plain.maxt, 20 * M);
  });
});

describe('engine: range queries', () => {
  const series: TestSeries[] = [
    { labels: { __name__: 'x', i: 'b' }, samples: every(M, [0, 1, 2, 3, 4, 5]) },
    { labels: { __name__: 'x', i: 'a' }, samples: every(M, [10, undefined, undefined, undefined, undefined, undefined, undefined, 17]) },
  ];

  it('evaluates at every step and returns a matrix sorted by labels', async () => {
    const { engine } = engineFor(series);
    const r = await engine.rangeQuery({ tenant: 't', query: 'x', start: 0, end: 7 * M, step: M });
    assert.equal(r.resultType, 'matrix');
    if (r.resultType !== 'matrix') return;
    assert.deepEqual(
      r.result.map((s) => [labelsToRecord(s.metric).i, s.floats.map((p) => [p.t / M, p.f])]),
      [
        // Series a lasts 5m after its sample at 0, then reappears at 7m.
        [
          'a',
          [
            [0, 10],
            [1, 10],
            [2, 10],
            [3, 10],
            [4, 10],
            [7, 17],
          ],
        ],
        [
          'b',
          [
            [0, 0],
            [1, 1],
            [2, 2],
            [3, 3],
            [4, 4],
            [5, 5],
            [6, 5],
            [7, 5],
          ],
        ],
      ],
    );
  });

  it('turns scalars into a series without labels', async () => {
    const { engine } = engineFor([]);
    const r = await engine.rangeQuery({ tenant: 't', query: 'time() * 2', start: 0, end: 2 * M, step: M });
    assert.deepEqual(toPrometheusData(r), {
      resultType: 'matrix',
      result: [
        {
          metric: {},
          values: [
            [0, '0'],
            [60, '120'],
            [120, '240'],
          ],
        },
      ],
    });
  });

  it('rejects range vectors and strings, bad steps and reversed ranges', async () => {
    const { engine } = engineFor([]);
    const q = (query: string, step = M, end = M) => engine.rangeQuery({ tenant: 't', query, start: 0, end, step });
    await assert.rejects(q('x[5m]'), {
      name: 'PromQLBadDataError',
      message: 'invalid expression type "range vector" for range query, must be Scalar or instant Vector',
    });
    await assert.rejects(q('"s"'), /invalid expression type "string"/);
    await assert.rejects(q('x', 0), PromQLBadDataError);
    await assert.rejects(q('x', M, -1), /end timestamp must not be before start time/);
  });
});

describe('engine: result types of instant queries', () => {
  const series: TestSeries[] = [{ labels: { __name__: 'x' }, samples: every(10 * S, [1, 2, 'stale', 4]) }];

  it('scalars, strings and range vectors', async () => {
    const { engine } = engineFor(series);
    assert.deepEqual(await engine.instantQuery({ tenant: 't', query: '1 + 2', time: 1_700_000_000_123 }), {
      resultType: 'scalar',
      result: { t: 1_700_000_000_123, f: 3 },
      warnings: [],
      infos: [],
    });
    const str = await engine.instantQuery({ tenant: 't', query: '"hello"', time: 5 * S });
    assert.deepEqual(toPrometheusData(str), { resultType: 'string', result: [5, 'hello'] });
    // A range selector returns raw samples in (t - range, t], staleness markers dropped.
    const mat = await engine.instantQuery({ tenant: 't', query: 'x[30s]', time: 30 * S });
    assert.deepEqual(toPrometheusData(mat), {
      resultType: 'matrix',
      result: [
        {
          metric: { __name__: 'x' },
          values: [
            [10, '2'],
            [30, '4'],
          ],
        },
      ],
    });
  });

  it('formats the Prometheus API data exactly', async () => {
    const { engine } = engineFor([{ labels: { __name__: 'x', a: 'b' }, samples: [[1_700_000_000_000, 0.1]] }]);
    const r = await engine.instantQuery({ tenant: 't', query: 'x / 0 or x * 1e21 or x', time: 1_700_000_000_123 });
    assert.deepEqual(toPrometheusData(r), {
      resultType: 'vector',
      result: [{ metric: { a: 'b' }, value: [1700000000.123, '+Inf'] }],
    });
    const v = await engine.instantQuery({ tenant: 't', query: 'x * 1e21', time: 1_700_000_000_000 });
    assert.deepEqual(toPrometheusData(v).result, [{ metric: { a: 'b' }, value: [1700000000, '100000000000000000000'] }]);
  });
});

describe('engine: duration expressions', () => {
  const series: TestSeries[] = [
    {
      labels: { __name__: 'c' },
      samples: every(
        S,
        Array.from({ length: 101 }, (_, i) => i),
      ),
    },
  ];

  it('resolves step() and range() per query, before fetching', async () => {
    const { engine, querier } = engineFor(series, { enableDurationExpressions: true });
    const r = await engine.rangeQuery({ tenant: 't', query: 'count_over_time(c[step()+1ms]) + 0', start: 50 * S, end: 60 * S, step: 10 * S });
    assert.ok(r.resultType === 'matrix');
    assert.deepEqual(
      r.result[0].floats.map((p) => p.f),
      [11, 11],
    );
    assert.equal(querier.calls[0].mint, 50 * S - 5 * M - 10 * S - 1);
    const off = await engine.rangeQuery({ tenant: 't', query: 'c offset min_of(range(), 8s)', start: 50 * S, end: 60 * S, step: 5 * S });
    assert.ok(off.resultType === 'matrix');
    assert.deepEqual(
      off.result[0].floats.map((p) => p.f),
      [42, 47, 52],
    );
    // An instant query has step() = range() = 0.
    assert.deepEqual(await instant(engine, 'c offset range()', 50 * S), ['{"__name__":"c"} 50']);
  });

  it('a duration that is not positive where it must be is bad data', async () => {
    const { engine } = engineFor(series, { enableDurationExpressions: true });
    await assert.rejects(engine.instantQuery({ tenant: 't', query: 'c[step()]', time: 50 * S }), (err: unknown) => {
      assert.ok(err instanceof PromQLBadDataError);
      assert.equal(err.message, 'duration must be greater than 0');
      return true;
    });
    await assert.rejects(engine.instantQuery({ tenant: 't', query: 'c[1m/(step()*0)]', time: 50 * S }), /division by zero/);
  });
});

describe('engine: errors', () => {
  it('parse errors are PromQLParseError', async () => {
    const { engine } = engineFor([]);
    await assert.rejects(engine.instantQuery({ tenant: 't', query: 'metric{label=}', time: 0 }), (err: unknown) => {
      assert.ok(err instanceof PromQLParseError);
      assert.equal(err.message, '1:14: parse error: unexpected "}" in label matching, expected string');
      return true;
    });
  });

  it('too many samples', async () => {
    const { engine } = engineFor(
      [
        { labels: { __name__: 'x', i: '1' }, samples: every(M, [1, 2, 3]) },
        { labels: { __name__: 'x', i: '2' }, samples: every(M, [1, 2, 3]) },
      ],
      { maxSamples: 5 },
    );
    await assert.doesNotReject(engine.rangeQuery({ tenant: 't', query: 'x', start: 0, end: M, step: M }));
    await assert.rejects(engine.rangeQuery({ tenant: 't', query: 'x', start: 0, end: 2 * M, step: M }), (err: unknown) => {
      assert.ok(err instanceof PromQLExecutionError);
      assert.equal(err.kind, 'unprocessable');
      assert.match(err.message, /^query processing would load too many samples into memory in query execution \(limit: 5 samples\).*-querier\.max-samples/);
      return true;
    });
  });

  it('estimated memory: the fetched series and the evaluated points count against -querier.max-estimated-memory-per-query', async () => {
    const data = Array.from({ length: 20 }, (_, i) => ({ labels: { __name__: 'x', i: String(i) }, samples: every(M, [1, 2, 3]) }));
    const memory = /^the query exceeded the maximum estimated memory per query \(limit: (\d+) bytes\).*-querier\.max-estimated-memory-per-query/;
    // Fetching 20 series is estimated well above 1,000 bytes.
    await assert.rejects(engineFor(data, { maxEstimatedMemoryBytes: 1000 }).engine.instantQuery({ tenant: 't', query: 'x', time: M }), (err: unknown) => {
      assert.ok(err instanceof PromQLExecutionError);
      assert.equal(err.kind, 'unprocessable');
      assert.match(err.message, memory);
      return true;
    });
    // Room for the fetch, not for a long range query's points: it fails while evaluating.
    const { engine } = engineFor(data, { maxEstimatedMemoryBytes: 40_000 });
    await assert.doesNotReject(engine.instantQuery({ tenant: 't', query: 'x', time: M }));
    await assert.rejects(engine.rangeQuery({ tenant: 't', query: 'x', start: 0, end: 100 * M, step: 1000 }), { message: memory });
    // The samples limit, when it is the lower of the two, is the one named.
    await assert.rejects(
      engineFor(data, { maxEstimatedMemoryBytes: 1e9, maxSamples: 30 }).engine.rangeQuery({ tenant: 't', query: 'x', start: 0, end: 2 * M, step: M }),
      {
        message: /limit: 30 samples/,
      },
    );
  });

  it('duplicate label sets after dropping the metric name', async () => {
    const { engine } = engineFor([
      { labels: { __name__: 'a', job: 'x' }, samples: [[0, 1]] },
      { labels: { __name__: 'b', job: 'x' }, samples: [[0, 2]] },
    ]);
    await assert.rejects(engine.instantQuery({ tenant: 't', query: 'ceil({job="x"})', time: 0 }), {
      name: 'PromQLExecutionError',
      message: 'vector cannot contain metrics with the same labelset',
    });
    await assert.rejects(engine.instantQuery({ tenant: 't', query: 'sum_over_time({job="x"}[5m])', time: 0 }), /same labelset/);
  });

  it('times out and can be aborted', async () => {
    const { engine, querier } = engineFor([{ labels: { __name__: 'x' }, samples: [[0, 1]] }], { timeoutMs: 20 });
    querier.delayMs = 200;
    await assert.rejects(engine.instantQuery({ tenant: 't', query: 'x', time: 0 }), (err: unknown) => {
      assert.ok(err instanceof PromQLTimeoutError);
      // The API edge answers this kind 503 with errorType timeout (querier's api-errors test).
      assert.equal(err.kind, 'timeout');
      assert.equal(err.retriable, true);
      assert.equal(err.message, 'query timed out in query execution');
      return true;
    });

    const slow = engineFor([{ labels: { __name__: 'x' }, samples: [[0, 1]] }]);
    slow.querier.delayMs = 200;
    const ac = new AbortController();
    const p = slow.engine.instantQuery({ tenant: 't', query: 'x', time: 0, signal: ac.signal });
    ac.abort();
    await assert.rejects(p, { name: 'PromQLTimeoutError', message: 'query was canceled in query execution' });
    await assert.rejects(slow.engine.instantQuery({ tenant: 't', query: 'x', time: 0, signal: ac.signal }), PromQLTimeoutError);
  });

  it('a timed-out or aborted query aborts the signal its selects were given', async () => {
    const { engine, querier } = engineFor([{ labels: { __name__: 'x' }, samples: [[0, 1]] }], { timeoutMs: 20 });
    querier.delayMs = 5_000;
    const started = Date.now();
    await assert.rejects(engine.instantQuery({ tenant: 't', query: 'x', time: 0 }), PromQLTimeoutError);
    assert.equal(querier.calls[0].signal?.aborted, true);
    const ac = new AbortController();
    const p = engine.instantQuery({ tenant: 't', query: 'x', time: 0, signal: ac.signal, timeoutMs: 60_000 });
    ac.abort();
    await assert.rejects(p, { name: 'PromQLTimeoutError', message: 'query was canceled in query execution' });
    assert.equal(querier.calls[1].signal?.aborted, true);
    assert.ok(Date.now() - started < 2_000, 'the fake stopped waiting when its signal fired');

    const ok = engineFor([{ labels: { __name__: 'x' }, samples: [[0, 1]] }]);
    await instant(ok.engine, 'x', 0);
    assert.equal(ok.querier.calls[0].signal?.aborted, false, 'a query that finished leaves it alone');
  });

  it('passes select hints: range, step, the enclosing function', async () => {
    const { engine, querier } = engineFor([]);
    await engine.rangeQuery({
      tenant: 't',
      query: 'sum(rate(a[1m])) + b + max_over_time(c[10m:30s]) + count(d offset 1m)',
      start: 10 * M,
      end: 20 * M,
      step: M,
    });
    const hints = Object.fromEntries(querier.calls.map((c) => [c.matchers.find((m) => m.name === '__name__')?.value, c.hints]));
    assert.deepEqual(hints.a, { start: 10 * M - 5 * M - M, end: 20 * M, step: M, range: M, func: 'rate' });
    assert.deepEqual(hints.b, { start: 10 * M - 5 * M, end: 20 * M, step: M, range: 0 });
    assert.deepEqual(hints.c, { start: 10 * M - 10 * M - 5 * M, end: 20 * M, step: 30 * S, range: 0, func: 'max_over_time' });
    assert.deepEqual(hints.d, { start: 10 * M - 5 * M - M, end: 20 * M - M, step: M, range: 0, func: 'count' });
    await engine.instantQuery({ tenant: 't', query: 'e', time: 0 });
    assert.equal(querier.calls[querier.calls.length - 1].hints?.step, 0);
  });

  it('querier errors pass through unchanged', async () => {
    const { engine, querier } = engineFor([]);
    class Unavailable extends Error {}
    querier.select = async () => {
      throw new Unavailable('partition 3 unavailable');
    };
    await assert.rejects(engine.instantQuery({ tenant: 't', query: 'x', time: 0 }), Unavailable);
  });
});

describe('engine: delayed name removal', () => {
  const series: TestSeries[] = [{ labels: { __name__: 'up_total', job: 'x' }, samples: every(M, [0, 60, 120]) }];

  it('keeps __name__ until the end, so label_replace can read it', async () => {
    const q = 'label_replace(rate(up_total[5m]), "name", "$1", "__name__", "(.+)")';
    const delayed = engineFor(series, { delayedNameRemoval: true }).engine;
    // 120 increase over 2m, not extrapolated below zero, over a 5m range.
    assert.deepEqual(await instant(delayed, q, 2 * M), ['{"job":"x","name":"up_total"} 0.4']);
    const eager = engineFor(series).engine;
    assert.deepEqual(await instant(eager, q, 2 * M), ['{"job":"x"} 0.4']);
  });
});

describe('engine: subqueries and @', () => {
  const series: TestSeries[] = [{ labels: { __name__: 'x' }, samples: every(M, [1, 2, 3, 4, 5]) }];

  it('evaluates the inner expression at multiples of the step after t - range', async () => {
    const { engine, querier } = engineFor(series);
    // At 4m, [3m:1m] evaluates x at 2m, 3m and 4m (1m itself is excluded).
    assert.deepEqual(await instant(engine, 'sum_over_time(x[3m:1m])', 4 * M), ['{} 12']);
    assert.deepEqual(await instant(engine, 'max_over_time((x * 2)[3m:1m] offset 1m)', 4 * M), ['{} 8']);
    const r = await engine.instantQuery({ tenant: 't', query: 'x[3m:1m]', time: 4 * M });
    assert.deepEqual(toPrometheusData(r), {
      resultType: 'matrix',
      result: [
        {
          metric: { __name__: 'x' },
          values: [
            [120, '3'],
            [180, '4'],
            [240, '5'],
          ],
        },
      ],
    });
    // The fetch covers the subquery's range too.
    assert.equal(querier.calls[0].mint, 4 * M - 3 * M - 5 * M);
  });

  it('a subquery without a step uses the default subquery step', async () => {
    const { engine } = engineFor(series, { defaultSubqueryStepMs: 2 * M });
    assert.deepEqual(await instant(engine, 'count_over_time(x[4m:])', 4 * M), ['{} 2']);
  });

  it('@ start() and @ end() pin a selector to the query range', async () => {
    const { engine } = engineFor(series);
    const r = await engine.rangeQuery({ tenant: 't', query: 'x @ end() - x @ start()', start: M, end: 3 * M, step: M });
    assert.deepEqual(toPrometheusData(r), {
      resultType: 'matrix',
      result: [
        {
          metric: {},
          values: [
            [60, '2'],
            [120, '2'],
            [180, '2'],
          ],
        },
      ],
    });
  });
});
