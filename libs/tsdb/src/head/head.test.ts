import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hashLabels, labelsFromRecord, labelsToRecord, type EncodedLabels, type Labels, type Matcher } from '@strata/model';
import { Head, emptyAppendStats } from '../index.ts';

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
  assert.equal(
    names(head, [
      { type: '=', name: '__name__', value: 'up' },
      { type: '!=', name: 'job', value: 'api' },
    ]).length,
    1,
  );
  assert.equal(names(head, [{ type: '=~', name: 'job', value: 'ap' }]).length, 0, 'regex must be anchored');
  assert.equal(names(head, [{ type: '=~', name: 'job', value: 'ap.*' }]).length, 4);
  assert.equal(names(head, [{ type: '!~', name: 'job', value: 'api|db' }]).length, 0);
  assert.equal(
    names(head, [
      { type: '=~', name: '__name__', value: '.+' },
      { type: '!~', name: 'instance', value: 'a' },
    ]).length,
    2,
  );
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
  assert.deepEqual(stats, { ...emptyAppendStats(), appended: 4, duplicates: 1, outOfOrder: 1, conflicting: 1 });
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

function bits(values: Float64Array, i: number): bigint {
  return new DataView(values.buffer, values.byteOffset).getBigUint64(i * 8, true);
}

test('samples live in 120-sample XOR chunks that never cross a block boundary', () => {
  const head = new Head({ chunkRangeMs: 7_200_000 });
  const stats = emptyAppendStats();
  const ts = new Float64Array(1000);
  const vs = new Float64Array(1000);
  for (let i = 0; i < 1000; i++) {
    ts[i] = 6_000_000 + i * 15_000;
    vs[i] = i % 7 === 0 ? NaN : i * 1.5;
  }
  new DataView(vs.buffer).setBigUint64(8 * 10, 0x7ff0000000000002n, true);
  head.append(labelsFromRecord({ __name__: 'c' }), ts, vs, stats);
  assert.equal(stats.appended, 1000);
  const [s] = head.select([], 0, 1e12);
  assert.equal(s.timestamps.length, 1000);
  for (let i = 0; i < 1000; i++) {
    assert.equal(s.timestamps[i], ts[i]);
    assert.equal(bits(s.values, i), bits(vs, i));
  }
  // Cut at the 2h boundary: whole chunks, none crossing 7_200_000.
  const cut = head.snapshotForBlock(0, 7_200_000);
  assert.equal(cut.length, 1);
  for (const c of cut[0].chunks) assert.ok(c.maxTime < 7_200_000 && c.minTime >= 6_000_000);
  const n = cut[0].chunks.reduce((a, c) => a + ((c.data[0] << 8) | c.data[1]), 0);
  assert.equal(n, Math.ceil((7_200_000 - 6_000_000) / 15_000));
  assert.ok(cut[0].chunks.slice(0, -1).every((c) => ((c.data[0] << 8) | c.data[1]) === 120));
});

test('with a block range, samples more than half a range behind the head are out of bounds', () => {
  const head = new Head({ chunkRangeMs: 60_000 });
  const stats = emptyAppendStats();
  head.append(labelsFromRecord({ __name__: 'a' }), new Float64Array([100_000]), new Float64Array([1]), stats);
  head.append(labelsFromRecord({ __name__: 'b' }), new Float64Array([69_999, 70_000, 80_000]), new Float64Array([1, 2, 3]), stats);
  assert.equal(stats.outOfBounds, 1);
  assert.equal(stats.appended, 3);
});

test('out-of-order window: rejected by default, accepted within the window and merged on read', () => {
  const strict = new Head();
  const st = emptyAppendStats();
  strict.append(labelsFromRecord({ __name__: 'x' }), new Float64Array([10, 20, 15]), new Float64Array([1, 2, 3]), st);
  assert.equal(st.outOfOrder, 1);

  let window = 10;
  const head = new Head({ outOfOrderTimeWindowMs: () => window });
  const stats = emptyAppendStats();
  const x = labelsFromRecord({ __name__: 'x' });
  head.append(x, new Float64Array([10, 20, 30]), new Float64Array([1, 2, 3]), stats);
  head.append(x, new Float64Array([25, 21, 25, 25, 5]), new Float64Array([9, 8, 9, 7, 0]), stats);
  assert.deepEqual(stats, { ...emptyAppendStats(), appended: 5, duplicates: 1, conflicting: 1, outOfOrder: 1 });
  const [s] = head.select([], 0, 100);
  assert.deepEqual([...s.timestamps], [10, 20, 21, 25, 30]);
  assert.deepEqual([...s.values], [1, 2, 8, 9, 3]);
  window = 0; // read per append: a runtime override takes effect at once
  head.append(x, new Float64Array([29]), new Float64Array([1]), stats);
  assert.equal(stats.outOfOrder, 2);
  // Out-of-order samples go into the block of their range.
  const cut = head.snapshotForBlock(0, 26);
  assert.equal(cut[0].chunks.length, 1);
  assert.equal((cut[0].chunks[0].data[0] << 8) | cut[0].chunks[0].data[1], 4);
});

test('a cut sets the lower bound; truncation drops old chunks and empty series', () => {
  const head = new Head({ chunkRangeMs: 100 });
  const stats = emptyAppendStats();
  head.append(labelsFromRecord({ __name__: 'old' }), new Float64Array([10, 20]), new Float64Array([1, 2]), stats);
  head.append(labelsFromRecord({ __name__: 'both' }), new Float64Array([30, 120, 160]), new Float64Array([1, 2, 3]), stats);
  const cut = head.snapshotForBlock(0, 100);
  assert.deepEqual(
    cut.map((s) => s.labels[0].value),
    ['both', 'old'],
  );
  head.append(labelsFromRecord({ __name__: 'late' }), new Float64Array([90, 170]), new Float64Array([1, 2]), stats);
  assert.equal(stats.outOfBounds, 1, 'below the cut: rejected, not silently lost');
  assert.equal(head.numSeries, 3);
  head.truncate(100);
  assert.equal(head.numSeries, 2);
  assert.deepEqual(names(head, [], 0, 1000).length, 2);
  const [both] = head.select([{ type: '=', name: '__name__', value: 'both' }], 0, 1000);
  assert.deepEqual([...both.timestamps], [120, 160]);
  // Postings survive the renumbering.
  assert.deepEqual(head.labelValues('__name__', [], 0, 1000), ['both', 'late']);
  assert.equal(head.select([{ type: '=', name: '__name__', value: 'late' }], 0, 1000)[0].values[0], 2);
});

test('exemplars: ring buffer per tenant, out-of-order rejected, replay idempotent', () => {
  const head = new Head({ maxExemplars: 3 });
  const stats = emptyAppendStats();
  const a = labelsFromRecord({ __name__: 'a' });
  const ex = (t: number, id: string) => ({ labels: [{ name: 'trace_id', value: id }], value: t / 10, timestamp: t });
  head.append(a, new Float64Array([10]), new Float64Array([1]), stats, [ex(10, 'x'), ex(20, 'y')]);
  head.append(a, new Float64Array([]), new Float64Array([]), stats, [ex(20, 'y'), ex(15, 'z')]);
  assert.equal(stats.exemplarsAppended, 2);
  assert.equal(stats.exemplarsRejected, 1);
  head.append(labelsFromRecord({ __name__: 'b' }), new Float64Array([]), new Float64Array([]), stats, [ex(30, 'b1'), ex(40, 'b2')]);
  const got = head.exemplars([{ type: '=', name: '__name__', value: 'a' }], 0, 100);
  assert.deepEqual(
    got.map((s) => s.exemplars.map((e) => e.labels[0].value)),
    [['y']],
    'x was overwritten by the ring',
  );
  assert.equal(head.exemplars([], 35, 100)[0].exemplars[0].timestamp, 40);
});

test('metric metadata keeps distinct entries per family', () => {
  const head = new Head();
  head.appendMetadata({ metricFamilyName: 'up', type: 'gauge', help: 'Up.', unit: '' });
  head.appendMetadata({ metricFamilyName: 'up', type: 'gauge', help: 'Up.', unit: '' });
  head.appendMetadata({ metricFamilyName: 'rq', type: 'counter', help: 'Requests.', unit: '' });
  assert.deepEqual(head.metadata('up').get('up'), [{ type: 'gauge', help: 'Up.', unit: '' }]);
  assert.equal(head.metadata().size, 2);
  assert.equal(head.metadata(undefined, 1).size, 1);
});

/**
 * Labels as a record carries them: TimeSeries label fields (`0a len {0a len name 12 len value}`,
 * short strings only) with ranges, decoded only on demand. 'value-first' encodes each Label's value
 * before its name; 'interleaved' puts another field between the labels (then rawStart is -1).
 */
function encoded(labels: Labels, how: 'plain' | 'value-first' | 'interleaved' = 'plain'): EncodedLabels & { decodes: number } {
  const bytes: number[] = [0x78, 0x79, 0x7a]; // an unrelated prefix, so offsets are not zero-based
  const ranges = new Int32Array(4 + labels.length * 4);
  labels.forEach((l, i) => {
    if (how === 'interleaved' && i > 0) bytes.push(0x12, 0); // an empty Sample field
    const fields: [number, number[], number][] = [
      [0x0a, [...Buffer.from(l.name, 'utf8')], 4 + 4 * i],
      [0x12, [...Buffer.from(l.value, 'utf8')], 6 + 4 * i],
    ];
    if (how === 'value-first') fields.reverse();
    bytes.push(0x0a, fields[0][1].length + fields[1][1].length + 4);
    for (const [tag, b, k] of fields) {
      bytes.push(tag, b.length);
      ranges[k] = bytes.length;
      bytes.push(...b);
      ranges[k + 1] = bytes.length;
    }
  });
  const contiguous = how !== 'interleaved';
  const out = {
    bytes: new Uint8Array(bytes),
    ranges,
    firstLabel: 1,
    labelCount: labels.length,
    rawStart: contiguous ? 3 : -1,
    rawEnd: contiguous ? bytes.length : -1,
    decodes: 0,
    get labels() {
      out.decodes++;
      return labels;
    },
  };
  return out;
}

test('labels in their bytes find the series made from strings and vice versa; non-ASCII too', () => {
  const head = new Head();
  const stats = emptyAppendStats();
  const ascii = labelsFromRecord({ __name__: 'up', job: 'api' });
  const utf8 = labelsFromRecord({ __name__: 'up', job: 'apï' });
  head.append(ascii, new Float64Array([1000]), new Float64Array([1]), stats);
  const e = encoded(ascii);
  head.append(e, new Float64Array([2000]), new Float64Array([2]), stats);
  assert.equal(e.decodes, 0, 'an ASCII series already in the head is found on its bytes');
  head.append(encoded(utf8), new Float64Array([1000]), new Float64Array([3]), stats);
  head.append(utf8, new Float64Array([2000]), new Float64Array([4]), stats);
  const similar = encoded(labelsFromRecord({ __name__: 'up', job: 'apj' }));
  head.append(similar, new Float64Array([1000]), new Float64Array([5]), stats);
  assert.equal(similar.decodes, 1, 'a new series is decoded once to be created');
  assert.equal(head.numSeries, 3);
  assert.equal(stats.appended, 5);
});

test('label fields equal byte for byte find their series; a hash collision of equal length and other encodings do not mix up', () => {
  // Two label sets of the same hash and the same encoded length: only the bytes tell them apart.
  const seen = new Map<number, string>();
  let pair: [string, string] | undefined;
  for (let i = 100_000; pair === undefined; i++) {
    const job = `j${i}`;
    const h = hashLabels(labelsFromRecord({ __name__: 'up', job }));
    const other = seen.get(h);
    if (other !== undefined) pair = [other, job];
    else seen.set(h, job);
  }
  const [a, b] = pair.map((job) => labelsFromRecord({ __name__: 'up', job }));
  const head = new Head();
  const stats = emptyAppendStats();
  head.append(encoded(a), new Float64Array([1000]), new Float64Array([1]), stats);
  head.append(encoded(b), new Float64Array([1000]), new Float64Array([2]), stats);
  for (let t = 2000; t <= 4000; t += 1000) {
    head.append(encoded(a), new Float64Array([t]), new Float64Array([t]), stats);
    // Also as another sender might encode it: value before name, and fields between the labels.
    head.append(encoded(b, t === 3000 ? 'value-first' : t === 4000 ? 'interleaved' : 'plain'), new Float64Array([t]), new Float64Array([-t]), stats);
  }
  // A series made from strings learns its bytes from the first record that matches it.
  const c = labelsFromRecord({ __name__: 'up', job: 'c' });
  head.append(c, new Float64Array([1000]), new Float64Array([7]), stats);
  head.append(encoded(c), new Float64Array([2000]), new Float64Array([8]), stats);
  const e = encoded(c);
  head.append(e, new Float64Array([3000]), new Float64Array([9]), stats);
  assert.equal(e.decodes, 0);
  assert.equal(head.numSeries, 3);
  assert.equal(stats.appended, 11);
  const got = Object.fromEntries(
    head.select([{ type: '=', name: '__name__', value: 'up' }], 0, 10_000).map((s) => [labelsToRecord(s.labels).job, [...s.values]]),
  );
  assert.deepEqual(got, { [pair[0]]: [1, 2000, 3000, 4000], [pair[1]]: [2, -2000, -3000, -4000], c: [7, 8, 9] });
});

test('after series are dropped the survivors keep their labels and are found again on their bytes', () => {
  const head = new Head({ chunkRangeMs: 7_200_000 });
  const stats = emptyAppendStats();
  const keep = labelsFromRecord({ __name__: 'up', job: 'keep', zone: 'eu-1' });
  for (let i = 0; i < 100; i++) head.append(labelsFromRecord({ __name__: 'up', job: `gone-${i}` }), new Float64Array([1000]), new Float64Array([i]), stats);
  head.append(keep, new Float64Array([1000, 9_000_000]), new Float64Array([1, 2]), stats);
  head.truncate(7_200_000);
  assert.equal(head.numSeries, 1);
  const e = encoded(keep);
  head.append(e, new Float64Array([9_015_000]), new Float64Array([3]), stats);
  assert.equal(e.decodes, 0);
  assert.equal(head.numSeries, 1);
  assert.deepEqual(names(head, [{ type: '=', name: 'job', value: 'keep' }], 0, 10_000_000), [JSON.stringify(labelsToRecord(keep))]);
  assert.deepEqual(head.labelValues('zone', [{ type: '=', name: 'job', value: 'keep' }], 0, 10_000_000), ['eu-1']);
});

test('series idle at a cut, or switched to histograms and back, append floats again without touching any other series', () => {
  // Each series' open chunk is a range of a shared slab; closing one gives its space back and the
  // next sample takes new space. Many series and many samples, so later chunks land where the
  // closed ones were and grow past their first space.
  const H2 = 7_200_000;
  const head = new Head({ chunkRangeMs: H2 });
  const stats = emptyAppendStats();
  const n = 50;
  const name = (i: number) => labelsFromRecord({ __name__: 'm', i: String(i) });
  const want: [number, number][][] = Array.from({ length: n }, () => []);
  const push = (i: number, from: number, count: number) => {
    const ts = Float64Array.from({ length: count }, (_, k) => from + k * 15_000);
    const vs = Float64Array.from(ts, (t) => i * 1e9 + t / 1000 + 0.25);
    head.append(name(i), ts, vs, stats);
    for (let k = 0; k < count; k++) want[i].push([ts[k], vs[k]]);
  };
  for (let i = 0; i < n; i++) push(i, H2 - 30 * 15_000, 30);
  head.snapshotForBlock(0, H2); // every series is idle at the cut: its open chunk is closed
  const hist = {
    counterResetHint: 'unknown' as const,
    schema: 0,
    zeroThreshold: 0,
    zeroCount: 1,
    count: 1,
    sum: 1,
    positiveSpans: [],
    negativeSpans: [],
    positiveBuckets: [],
    negativeBuckets: [],
  };
  for (let i = 0; i < n; i += 3) head.appendHistograms(name(i), [{ timestamp: H2 + 1000, histogram: hist, float: false }], stats);
  for (let round = 0; round < 4; round++) for (let i = 0; i < n; i++) push(i, H2 + 15_000 + round * 200 * 15_000, 200);
  for (let i = 0; i < n; i++) {
    const [s] = head.select([{ type: '=', name: 'i', value: String(i) }], 0, 1e12);
    assert.deepEqual(
      Array.from(s.timestamps, (t, k) => [t, s.values[k]]),
      want[i],
      `series ${i}`,
    );
  }
});
