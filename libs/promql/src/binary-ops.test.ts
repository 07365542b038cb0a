import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { toPrometheusData } from './format.ts';
import type { TestSeries } from './testing.ts';
import { engineFor, instant } from './testing.ts';
import { formatExpr } from './ast.ts';
import { parseExpr } from './parser.ts';

const data: TestSeries[] = [
  { labels: { __name__: 'req', job: 'api', inst: '1' }, samples: [[0, 10]] },
  { labels: { __name__: 'req', job: 'api', inst: '2' }, samples: [[0, 20]] },
  { labels: { __name__: 'req', job: 'web', inst: '1' }, samples: [[0, 30]] },
  { labels: { __name__: 'err', job: 'api', inst: '1' }, samples: [[0, 1]] },
  { labels: { __name__: 'err', job: 'api', inst: '2' }, samples: [[0, 4]] },
  { labels: { __name__: 'limit', job: 'api' }, samples: [[0, 100]] },
  { labels: { __name__: 'limit', job: 'web' }, samples: [[0, 50]] },
  { labels: { __name__: 'team', job: 'api', team: 'core' }, samples: [[0, 1]] },
];

const q = (query: string) => instant(engineFor(data).engine, query, 0);

describe('binary operators: scalars', () => {
  const cases: [string, string][] = [
    ['1 + 2 * 3', '7'],
    ['2 ^ 3 ^ 2', '512'],
    ['-7 % 3', '-1'], // Go's math.Mod: the sign of the dividend.
    ['7 % -3', '1'],
    ['5.5 % 2', '1.5'],
    ['1 % 0', 'NaN'],
    ['1 ^ NaN', '1'], // Go's math.Pow, not JS's.
    ['(-1) ^ Inf', '1'],
    ['0 * -1', '-0'],
    ['1 / 0', '+Inf'],
    ['-1 / 0', '-Inf'],
    ['0 / 0', 'NaN'],
    ['1 atan2 1', String(Math.PI / 4)],
    ['1 == bool 1', '1'],
    ['NaN == bool NaN', '0'],
    ['NaN != bool NaN', '1'],
    ['2 >= bool 3', '0'],
  ];
  for (const [query, want] of cases) {
    it(`${query} = ${want}`, async () => {
      const r = await engineFor([]).engine.instantQuery({ tenant: 't', query, time: 0 });
      assert.deepEqual(toPrometheusData(r), { resultType: 'scalar', result: [0, want] });
    });
  }
});

describe('binary operators: vector and scalar', () => {
  it('arithmetic drops the name; filtering comparisons keep series and values', async () => {
    assert.deepEqual(await q('err * 2'), ['{"inst":"1","job":"api"} 2', '{"inst":"2","job":"api"} 8']);
    assert.deepEqual(await q('err > 2'), ['{"__name__":"err","inst":"2","job":"api"} 4']);
    // With the scalar on the left, the vector's value is kept.
    assert.deepEqual(await q('2 < err'), ['{"__name__":"err","inst":"2","job":"api"} 4']);
    assert.deepEqual(await q('err > bool 2'), ['{"inst":"1","job":"api"} 0', '{"inst":"2","job":"api"} 1']);
    assert.deepEqual(await q('10 - err'), ['{"inst":"1","job":"api"} 9', '{"inst":"2","job":"api"} 6']);
  });
});

describe('binary operators: vector matching', () => {
  it('one-to-one on all labels but the name', async () => {
    assert.deepEqual(await q('err / req'), ['{"inst":"1","job":"api"} 0.1', '{"inst":"2","job":"api"} 0.2']);
    // A comparison keeps the left side's name.
    assert.deepEqual(await q('req > err'), ['{"__name__":"req","inst":"1","job":"api"} 10', '{"__name__":"req","inst":"2","job":"api"} 20']);
    assert.deepEqual(await q('req > bool err'), ['{"inst":"1","job":"api"} 1', '{"inst":"2","job":"api"} 1']);
  });

  it('on() and ignoring() shape the result labels', async () => {
    assert.deepEqual(await q('sum by (job) (req) / on(job) limit'), ['{"job":"api"} 0.3', '{"job":"web"} 0.6']);
    assert.deepEqual(await q('err * on(job, inst) req'), ['{"inst":"1","job":"api"} 10', '{"inst":"2","job":"api"} 80']);
    assert.deepEqual(await q('err + ignoring(inst) group_left limit'), ['{"inst":"1","job":"api"} 101', '{"inst":"2","job":"api"} 104']);
  });

  it('group_left and group_right copy labels from the "one" side', async () => {
    assert.deepEqual(await q('req * on(job) group_left(team) team'), [
      '{"inst":"1","job":"api","team":"core"} 10',
      '{"inst":"2","job":"api","team":"core"} 20',
    ]);
    assert.deepEqual(await q('limit / on(job) group_right req'), [
      '{"inst":"1","job":"api"} 10',
      '{"inst":"1","job":"web"} 1.6666666666666667',
      '{"inst":"2","job":"api"} 5',
    ]);
  });

  it('rejects duplicates on the "one" side (many-to-many) and implicit many-to-one', async () => {
    const { engine } = engineFor(data);
    await assert.rejects(engine.instantQuery({ tenant: 't', query: 'limit * on(job) req', time: 0 }), {
      name: 'PromQLExecutionError',
      message:
        'found duplicate series for the match group {job="api"} on the right hand-side of the operation: ' +
        '[{__name__="req", inst="2", job="api"}, {__name__="req", inst="1", job="api"}];' +
        'many-to-many matching not allowed: matching labels must be unique on one side',
    });
    await assert.rejects(engine.instantQuery({ tenant: 't', query: 'req * on(job) group_right limit', time: 0 }), {
      message:
        'found duplicate series for the match group {job="api"} on the left hand-side of the operation: ' +
        '[{__name__="req", inst="2", job="api"}, {__name__="req", inst="1", job="api"}];' +
        'many-to-many matching not allowed: matching labels must be unique on one side',
    });
    await assert.rejects(engine.instantQuery({ tenant: 't', query: 'req / ignoring(inst) limit', time: 0 }), {
      message: 'multiple matches for labels: many-to-one matching must be explicit (group_left/group_right)',
    });
  });

  it('set operators', async () => {
    assert.deepEqual(await q('req and err'), ['{"__name__":"req","inst":"1","job":"api"} 10', '{"__name__":"req","inst":"2","job":"api"} 20']);
    assert.deepEqual(await q('req unless err'), ['{"__name__":"req","inst":"1","job":"web"} 30']);
    assert.deepEqual(await q('req and on(job) limit > 60'), ['{"__name__":"req","inst":"1","job":"api"} 10', '{"__name__":"req","inst":"2","job":"api"} 20']);
    assert.deepEqual(await q('limit or on(job) req'), ['{"__name__":"limit","job":"api"} 100', '{"__name__":"limit","job":"web"} 50']);
    assert.deepEqual(await q('err or limit'), [
      '{"__name__":"err","inst":"1","job":"api"} 1',
      '{"__name__":"err","inst":"2","job":"api"} 4',
      '{"__name__":"limit","job":"api"} 100',
      '{"__name__":"limit","job":"web"} 50',
    ]);
  });
});

describe('binary operators: fill modifiers', () => {
  const fq = (query: string) => instant(engineFor(data, { enableExperimentalFunctions: true }).engine, query, 0);

  it('fill stands in for a missing sample on either side, with the match group labels', async () => {
    // err has no job="web" series; limit has one per job.
    assert.deepEqual(await fq('sum by (job) (err) + fill(0) sum by (job) (req)'), ['{"job":"api"} 35', '{"job":"web"} 30']);
    assert.deepEqual(await fq('sum by (job) (err) + fill_left(0) sum by (job) (req)'), ['{"job":"api"} 35', '{"job":"web"} 30']);
    assert.deepEqual(await fq('sum by (job) (err) + fill_right(0) sum by (job) (req)'), ['{"job":"api"} 35']);
    assert.deepEqual(await fq('sum by (job) (req) > bool fill(25) sum by (job) (err)'), ['{"job":"api"} 1', '{"job":"web"} 1']);
  });

  it('with group_left, fill_left fills the many side once per unmatched group and fill_right the one side', async () => {
    assert.deepEqual(await fq('err / on(job) group_left fill_left(7) limit'), [
      '{"inst":"1","job":"api"} 0.01',
      '{"inst":"2","job":"api"} 0.04',
      '{"job":"web"} 0.14',
    ]);
    assert.deepEqual(await fq('req / on(job) group_left fill_right(1) team'), [
      '{"inst":"1","job":"api"} 10',
      '{"inst":"1","job":"web"} 30',
      '{"inst":"2","job":"api"} 20',
    ]);
  });

  it('parses, prints and checks fill modifiers', () => {
    assert.equal(formatExpr(parseExpr('a + on(x) fill(0) b', { enableExperimentalFunctions: true })), 'a + on(x) fill(0) b');
    assert.equal(formatExpr(parseExpr('a + fill_right(-Inf) fill_left(1) b', { enableExperimentalFunctions: true })), 'a + fill_left(1) fill_right(-Inf) b');
    assert.throws(() => parseExpr('a + fill(0) b'), /fill modifiers are experimental/);
    assert.throws(() => parseExpr('a and fill(0) b', { enableExperimentalFunctions: true }), /fill modifiers are not allowed for "and" operation/);
    assert.throws(() => parseExpr('a + fill(0) 1', { enableExperimentalFunctions: true }), /fill modifiers only allowed between instant vectors/);
    // A metric named fill is still a metric.
    assert.equal(formatExpr(parseExpr('other + fill')), 'other + fill');
  });
});
