// Series found through a format-3 record's symbols: the same series whatever order the
// records list them in and whichever path (symbols or labels) appended before, and never
// a series the head has dropped.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Labels } from '@strata/model';
import { Head, emptyAppendStats } from '../index.ts';

const utf8 = new TextEncoder();

/** Appends one sample at `t` to each series, as a format-3 record would list them (symbols as bytes, labels as references). */
function appendRecord(head: Head, series: Labels[], t: number): void {
  const strings: string[] = [];
  const refs: number[] = [];
  const refEnd: number[] = [];
  for (const labels of series) {
    for (const { name, value } of labels) {
      for (const s of [name, value]) {
        if (!strings.includes(s)) strings.push(s);
        refs.push(strings.indexOf(s));
      }
    }
    refEnd.push(refs.length);
  }
  const encoded = strings.map((s) => utf8.encode(s));
  const bytes = new Uint8Array(encoded.reduce((n, b) => n + b.length, 0));
  const start = new Int32Array(strings.length);
  const end = new Int32Array(strings.length);
  for (let i = 0, pos = 0; i < encoded.length; pos += encoded[i].length, i++) {
    bytes.set(encoded[i], pos);
    start[i] = pos;
    end[i] = pos + encoded[i].length;
  }
  const sym = head.symbols(bytes, start, end, strings.length);
  const stats = emptyAppendStats();
  const refArray = Uint32Array.from(refs);
  for (let i = 0; i < series.length; i++) {
    const s = head.seriesBySymbols(sym, refArray, i === 0 ? 0 : refEnd[i - 1], refEnd[i], true)!;
    head.appendSamples(s, Float64Array.of(t), Float64Array.of(i + t / 1000), 0, 1, stats);
  }
  assert.equal(stats.appended, series.length);
}

const series = (name: string): Labels => [
  { name: '__name__', value: 'node_cpu_seconds_total' },
  { name: 'cpu', value: name },
  { name: 'room', value: 'küche ✓' },
];
const [a, b, c] = ['a', 'b', 'c'].map(series);

function times(head: Head, labels: Labels): number[] {
  const got = head.select([{ type: '=', name: 'cpu', value: labels[1].value }], 0, 1e6);
  assert.ok(got.length <= 1);
  return got.length === 0 ? [] : [...got[0].timestamps];
}

test('records listing the same series in another order append to the same series, as labels do', () => {
  const head = new Head();
  appendRecord(head, [a, b, c], 1000);
  appendRecord(head, [a, c, b], 2000);
  appendRecord(head, [c], 3000);
  appendRecord(head, [a, b, c], 4000);
  head.append(b, Float64Array.of(5000), Float64Array.of(0), emptyAppendStats());
  assert.equal(head.numSeries, 3);
  assert.deepEqual(times(head, a), [1000, 2000, 4000]);
  assert.deepEqual(times(head, b), [1000, 2000, 4000, 5000]);
  assert.deepEqual(times(head, c), [1000, 2000, 3000, 4000]);
});

test('a series dropped by truncation is created anew, never appended to where the head no longer reads', () => {
  const head = new Head();
  appendRecord(head, [a, b, c], 5000);
  appendRecord(head, [c, a], 11_000);
  // b held only the sample at 5000: truncation drops it, while a still follows b in the first record's order.
  head.truncate(10_000);
  assert.equal(head.numSeries, 2);
  appendRecord(head, [a, b, c], 12_000);
  assert.equal(head.numSeries, 3);
  assert.deepEqual(times(head, a), [11_000, 12_000]);
  assert.deepEqual(times(head, b), [12_000]);
  assert.deepEqual(times(head, c), [11_000, 12_000]);
});

test('a sender that changes its order once is relearned in the new order; every sample lands in its own series', () => {
  const head = new Head();
  const all = Array.from({ length: 400 }, (_, i) => series(`cpu${i}`));
  // Records of 40 series each, as one sender's shards send them.
  const send = (order: Labels[], t: number) => {
    for (let r = 0; r < order.length; r += 40) appendRecord(head, order.slice(r, r + 40), t);
  };
  let t = 0;
  for (let round = 0; round < 4; round++) send(all, (t += 1000));
  assert.equal(head.orderRelearnings, 0, 'met in the order the series were created in');
  // Resharded: every record holds other series, in another order.
  const other = all
    .map((s, i) => ({ s, k: (i * 7919) % 401 }))
    .sort((x, y) => x.k - y.k)
    .map((x) => x.s);
  for (let round = 0; round < 3; round++) send(other, (t += 1000));
  assert.equal(head.orderRelearnings, 1, 'another order: relearned in it');
  for (let round = 0; round < 6; round++) send(other, (t += 1000));
  assert.equal(head.orderRelearnings, 1, 'then met in table order');
  assert.equal(head.numSeries, all.length);
  const expected = Array.from({ length: 13 }, (_, i) => 1000 * (i + 1));
  for (const s of all) assert.deepEqual(times(head, s), expected, s[1].value);
  // The values too: each series got its own position's value in every record.
  const got = head.select([{ type: '=', name: 'cpu', value: 'cpu123' }], 0, 1e6)[0];
  const position = (order: Labels[]) => order.indexOf(all[123]) % 40;
  assert.deepEqual(
    [...got.values],
    expected.map((ts, i) => (i < 4 ? position(all) : position(other)) + ts / 1000),
  );
});

test('a guess is taken only when its labels are the record’s: a series of the same length right after the previous one is not', () => {
  const head = new Head();
  appendRecord(head, [a, b], 1000);
  appendRecord(head, [a, c], 2000);
  appendRecord(head, [a, b], 3000);
  assert.deepEqual(times(head, b), [1000, 3000]);
  assert.deepEqual(times(head, c), [2000]);
});
