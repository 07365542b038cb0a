import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { labelsToRecord } from '@strata/model';
import { PromQLExecutionError, PromQLParseError } from './errors.ts';
import { parseExpr } from './parser.ts';
import type { TestSeries } from './testing.ts';
import { engineFor, every, instant } from './testing.ts';

const M = 60_000;

const series: TestSeries[] = [
  { labels: { __name__: 'up', instance: 'a', job: 'api' }, samples: every(M, [1, 1, 1]) },
  { labels: { __name__: 'up', instance: 'b', job: 'api' }, samples: every(M, [1, 1, 1]) },
  { labels: { __name__: 'target_info', instance: 'a', job: 'api', region: 'eu', k8s_pod: 'p1' }, samples: every(M, [1, 1, 'stale']) },
  { labels: { __name__: 'target_info', instance: 'a', job: 'api', region: 'us', k8s_pod: 'p1' }, samples: every(M, [undefined, undefined, 1]) },
  { labels: { __name__: 'build_info', instance: 'b', job: 'api', version: '1.2' }, samples: every(M, [1, 1, 1]) },
];

const opts = { enableExperimentalFunctions: true };

describe('info()', () => {
  it('adds target_info data labels by instance and job; unmatched series pass unchanged', async () => {
    const { engine } = engineFor(series, opts);
    assert.deepEqual(await instant(engine, 'info(up)', M), [
      '{"__name__":"up","instance":"a","job":"api","k8s_pod":"p1","region":"eu"} 1',
      '{"__name__":"up","instance":"b","job":"api"} 1',
    ]);
  });

  it('selects data labels and info metrics by the label selector; a matcher needing a value drops unmatched series', async () => {
    const { engine } = engineFor(series, opts);
    assert.deepEqual(await instant(engine, 'info(up, {region=~".+"})', M), ['{"__name__":"up","instance":"a","job":"api","region":"eu"} 1']);
    assert.deepEqual(await instant(engine, 'info(up, {__name__="build_info"})', M), [
      '{"__name__":"up","instance":"a","job":"api"} 1',
      '{"__name__":"up","instance":"b","job":"api","version":"1.2"} 1',
    ]);
    // Info series themselves are not enriched.
    assert.deepEqual(await instant(engine, 'info({job="api", __name__=~"up|build_info"}, {__name__="build_info"})', M), [
      '{"__name__":"build_info","instance":"b","job":"api","version":"1.2"} 1',
      '{"__name__":"up","instance":"a","job":"api"} 1',
      '{"__name__":"up","instance":"b","job":"api","version":"1.2"} 1',
    ]);
  });

  it('follows info series that change over a range query', async () => {
    const { engine } = engineFor(series, opts);
    const r = await engine.rangeQuery({ tenant: 't', query: 'info(up{instance="a"}, {region=~".+"})', start: 0, end: 2 * M, step: M });
    assert.ok(r.resultType === 'matrix');
    assert.deepEqual(
      r.result.map((s) => [labelsToRecord(s.metric).region, s.floats.map((p) => p.t / M)]),
      [
        ['eu', [0, 1]],
        ['us', [2]],
      ],
    );
  });

  it('rejects conflicting data labels and a second argument that is not a selector; allows match-all selectors', async () => {
    const { engine } = engineFor(
      [
        { labels: { __name__: 'm', instance: 'a' }, samples: [[0, 1]] },
        { labels: { __name__: 'a_info', instance: 'a', x: '1' }, samples: [[0, 1]] },
        { labels: { __name__: 'b_info', instance: 'a', x: '2' }, samples: [[0, 1]] },
      ],
      opts,
    );
    await assert.rejects(engine.instantQuery({ tenant: 't', query: 'info(m, {__name__=~".+_info"})', time: 0 }), (err: unknown) => {
      assert.ok(err instanceof PromQLExecutionError);
      assert.equal(err.message, 'conflicting label: x');
      return true;
    });
    assert.throws(
      () => parseExpr('info(m, sum(m))', opts),
      (err: unknown) => err instanceof PromQLParseError && /expected label selectors/.test(err.message),
    );
    assert.doesNotThrow(() => parseExpr('info(m, {x=~".*"})', opts));
  });
});
