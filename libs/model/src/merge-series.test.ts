import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareLabels, compareUtf8, labelsFromRecord, mergeSamples, mergeSeriesSets, mergeStringSets, type NativeHistogram, type Series } from './index.ts';

const STALE = 0x7ff0000000000002n;

function series(rec: Record<string, string>, ts: number[], vs: number[]): Series {
  return { labels: labelsFromRecord(rec), timestamps: Float64Array.from(ts), values: Float64Array.from(vs) };
}

function histogram(count: number): NativeHistogram {
  return {
    counterResetHint: 'unknown',
    schema: 0,
    zeroThreshold: 0,
    zeroCount: 0,
    count,
    sum: count,
    positiveSpans: [],
    negativeSpans: [],
    positiveBuckets: [],
    negativeBuckets: [],
  };
}

test('identical samples count once, the first source wins a timestamp, value bits survive', () => {
  const a = series({ __name__: 'x' }, [1, 2, 3], [1, 0, 3]);
  new BigUint64Array(a.values.buffer)[1] = STALE;
  const b = series({ __name__: 'x' }, [2, 3, 4], [9, 9, 4]);
  const m = mergeSamples(a, b);
  assert.deepEqual([...m.timestamps], [1, 2, 3, 4]);
  assert.equal(new BigUint64Array(m.values.buffer, m.values.byteOffset, m.values.length)[1], STALE);
  assert.deepEqual([m.values[0], m.values[2], m.values[3]], [1, 3, 4]);
});

test('native histograms are kept and merged by timestamp like floats', () => {
  const h = (t: number[], c: number[]): Series['histograms'] => ({ timestamps: Float64Array.from(t), values: c.map(histogram) });
  const a: Series = { ...series({ __name__: 'h' }, [], []), histograms: h([10, 20], [1, 2]) };
  const b: Series = { ...series({ __name__: 'h' }, [5], [0.5]), histograms: h([20, 30], [9, 3]) };
  const [m] = mergeSeriesSets([[a], [b]]);
  assert.deepEqual([...m.timestamps], [5]);
  assert.deepEqual([...(m.histograms?.timestamps ?? [])], [10, 20, 30]);
  assert.deepEqual(
    m.histograms?.values.map((x) => x.count),
    [1, 2, 3],
  );
  assert.equal(mergeSeriesSets([[a], [series({ __name__: 'h' }, [1], [1])]])[0].histograms?.values.length, 2, 'a source without histograms drops none');
});

test('several sources come out sorted byte-wise by label set; one source passes through', () => {
  // U+FFFD sorts before U+1F600 by bytes (and code points), after it by UTF-16 units.
  const astral = series({ __name__: 'x', v: '\u{1F600}' }, [1], [1]);
  const bmp = series({ __name__: 'x', v: '\uFFFD' }, [1], [1]);
  const plain = series({ __name__: 'x', v: 'a' }, [1], [1]);
  const merged = mergeSeriesSets([
    [astral, plain],
    [bmp, astral],
  ]);
  assert.deepEqual(
    merged.map((s) => s.labels[1].value),
    ['a', '\uFFFD', '\u{1F600}'],
  );
  const one = [astral, plain];
  assert.equal(mergeSeriesSets([one, []]), one);
  assert.deepEqual(mergeSeriesSets([[], []]), []);
  assert.ok(compareLabels(bmp.labels, astral.labels) < 0);
  assert.ok(compareUtf8('\uFFFD', '\u{1F600}') < 0 && '\uFFFD' > '\u{1F600}');
});

test('label strings merge distinct and byte-wise', () => {
  assert.deepEqual(
    mergeStringSets([
      ['b', '\u{1F600}'],
      ['a', 'b', '\uFFFD'],
    ]),
    ['a', 'b', '\uFFFD', '\u{1F600}'],
  );
  assert.deepEqual(mergeStringSets([]), []);
});
