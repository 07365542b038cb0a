// Series found through a format-3 record's symbols: the same series whatever order the
// records list them in and whichever path (symbols or labels) appended before, and never
// a series the head has dropped.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Labels } from '@strata/model';
import { Head, emptyAppendStats } from './index.ts';

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
