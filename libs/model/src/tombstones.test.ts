import { test } from 'node:test';
import assert from 'node:assert/strict';
import { labelsFromRecord } from './labels.ts';
import { applyTombstones, applyTombstonesAll } from './tombstones.ts';

const series = (job: string) => ({
  labels: labelsFromRecord({ __name__: 'up', job }),
  timestamps: Float64Array.of(1, 2, 3, 4),
  values: Float64Array.of(10, 20, 30, 40),
});

test('tombstones drop only the covered samples of matching series; an emptied series goes', () => {
  const t = [{ matchers: [{ type: '=~' as const, name: 'job', value: 'a|b' }], mint: 2, maxt: 3 }];
  const a = applyTombstones(series('a'), t)!;
  assert.deepEqual([...a.timestamps], [1, 4]);
  assert.deepEqual([...a.values], [10, 40]);
  const c = series('c');
  assert.equal(applyTombstones(c, t), c, 'untouched series come back as they are');
  const all = applyTombstonesAll([series('a'), series('c')], [{ matchers: [{ type: '=', name: 'job', value: 'a' }], mint: 0, maxt: 10 }]);
  assert.deepEqual(
    all.map((s) => s.labels.find((l) => l.name === 'job')?.value),
    ['c'],
  );
});
