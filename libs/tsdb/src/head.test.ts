import { test } from 'node:test';
import assert from 'node:assert/strict';
import { labelsFromRecord, labelsToRecord, type Matcher } from '@strata/model';
import { Head, emptyAppendStats } from './index.ts';

function headWith(series: Record<string, string>[]): Head {
  const head = new Head();
  const stats = emptyAppendStats();
  for (const [i, rec] of series.entries()) {
    head.append(labelsFromRecord(rec), new Float64Array([1000, 2000, 3000]), new Float64Array([i, i + 1, i + 2]), stats);
  }
  return head;
}

const data: Record<string, string>[] = [
  { __name__: 'up', job: 'api', instance: 'a' },
  { __name__: 'up', job: 'api', instance: 'b' },
  { __name__: 'up', job: 'db', instance: 'c' },
  { __name__: 'http_requests_total', job: 'api', instance: 'a', code: '200' },
  { __name__: 'http_requests_total', job: 'api', instance: 'a', code: '500' },
];

function names(head: Head, matchers: Matcher[], mint = 0, maxt = 10_000): string[] {
  return head
    .select(matchers, mint, maxt)
    .map((s) => JSON.stringify(labelsToRecord(s.labels)))
    .sort();
}

test('matchers select like Prometheus, regexes fully anchored', () => {
  const head = headWith(data);
  assert.equal(names(head, [{ type: '=', name: '__name__', value: 'up' }]).length, 3);
  assert.equal(names(head, [{ type: '=', name: '__name__', value: 'up' }, { type: '!=', name: 'job', value: 'api' }]).length, 1);
  assert.equal(names(head, [{ type: '=~', name: 'job', value: 'ap' }]).length, 0, 'regex must be anchored');
  assert.equal(names(head, [{ type: '=~', name: 'job', value: 'ap.*' }]).length, 4);
  assert.equal(names(head, [{ type: '!~', name: 'job', value: 'api|db' }]).length, 0);
  assert.equal(names(head, [{ type: '=~', name: '__name__', value: '.+' }, { type: '!~', name: 'instance', value: 'a' }]).length, 2);
  // code="" selects series without a code label.
  assert.equal(names(head, [{ type: '=', name: 'code', value: '' }]).length, 3);
  assert.equal(names(head, [{ type: '=~', name: 'code', value: '5..' }]).length, 1);
  assert.equal(names(head, [{ type: '!=', name: 'code', value: '200' }]).length, 4);
  assert.equal(names(head, [{ type: '=', name: 'nope', value: 'x' }]).length, 0);
});

test('time ranges are inclusive at both ends', () => {
  const head = headWith(data.slice(0, 1));
  const [s] = head.select([{ type: '=', name: '__name__', value: 'up' }], 2000, 3000);
  assert.deepEqual([...s.timestamps], [2000, 3000]);
  assert.deepEqual([...s.values], [1, 2]);
  assert.equal(head.select([{ type: '=', name: '__name__', value: 'up' }], 3001, 4000).length, 0);
});

test('replayed samples are no-ops, conflicting and out-of-order ones are counted and dropped', () => {
  const head = new Head();
  const labels = labelsFromRecord({ __name__: 'x' });
  const stats = emptyAppendStats();
  head.append(labels, new Float64Array([1, 2, 3]), new Float64Array([1, 2, 3]), stats);
  head.append(labels, new Float64Array([3, 2, 3, 4]), new Float64Array([3, 9, 7, 4]), stats);
  assert.deepEqual(stats, { appended: 4, duplicates: 1, outOfOrder: 1, conflicting: 1 });
  const [s] = head.select([], 0, 10);
  assert.deepEqual([...s.values], [1, 2, 3, 4]);
});

test('stale markers keep their exact bits', () => {
  const head = new Head();
  const values = new Float64Array(2);
  const bits = new DataView(values.buffer);
  bits.setFloat64(0, 1, true);
  bits.setBigUint64(8, 0x7ff0000000000002n, true);
  head.append(labelsFromRecord({ __name__: 'x' }), new Float64Array([1, 2]), values, emptyAppendStats());
  const [s] = head.select([], 0, 10);
  assert.equal(new DataView(s.values.buffer, s.values.byteOffset).getBigUint64(8, true), 0x7ff0000000000002n);
});

test('label names and values honour matchers', () => {
  const head = headWith(data);
  assert.deepEqual(head.labelNames([], 0, 10_000), ['__name__', 'code', 'instance', 'job']);
  assert.deepEqual(head.labelValues('instance', [{ type: '=', name: 'job', value: 'api' }], 0, 10_000), ['a', 'b']);
  assert.deepEqual(head.labelNames([{ type: '=', name: '__name__', value: 'up' }], 0, 10_000), ['__name__', 'instance', 'job']);
});

test('many series grow without losing samples', () => {
  const head = new Head();
  const stats = emptyAppendStats();
  for (let t = 0; t < 1000; t++) head.append(labelsFromRecord({ __name__: 'g' }), new Float64Array([t]), new Float64Array([t * 2]), stats);
  const [s] = head.select([], 0, 1e9);
  assert.equal(s.timestamps.length, 1000);
  assert.equal(s.values[999], 1998);
});
