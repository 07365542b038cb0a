// Start (created) timestamps from remote write 2.0 into the records: Sample.start_timestamp (3),
// Histogram.start_timestamp (17) and rc.0-rc.3's TimeSeries.created_timestamp (6) kept in 2.0's
// field numbers when the tenant ingests them, dropped when not, read back by both record decoders.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Label } from '@strata/model';
import {
  decodeRecordValue,
  decodeWriteRequest,
  encodeHistogram,
  encodeRecordValue,
  encodeWriteRequest,
  encodeWriteRequestV2,
  parseWriteRequest,
  parseWriteRequestV2,
  readHistogram,
  seriesV2ToV1,
  SymbolizedDecoder,
  Symbolizer,
  withoutStartTimestamps,
  type DecodedHistogram,
  type WriteRequestV2Input,
} from './index.ts';
import { ProtoReader } from './wire.ts';

const l = (name: string, value: string): Label => ({ name, value });
const T = 1732950000000;
const CT = T - 60_000;

function histogram(timestamp: number, startTimestamp?: number): DecodedHistogram {
  return {
    timestamp,
    startTimestamp,
    float: false,
    histogram: {
      counterResetHint: 'unknown',
      schema: 1,
      zeroThreshold: 0.001,
      zeroCount: 1,
      count: 4,
      sum: 6,
      positiveSpans: [{ offset: 0, length: 2 }],
      negativeSpans: [],
      positiveBuckets: [1, 2],
      negativeBuckets: [],
    },
  };
}

function request(): WriteRequestV2Input {
  return {
    timeseries: [
      // Prometheus 3.x since 2.0-rc.4: a start timestamp on each sample (here only on the first).
      {
        labels: [l('__name__', 'requests_total'), l('job', 'api')],
        samples: [
          { value: 3, timestamp: T, startTimestamp: CT },
          { value: 5, timestamp: T + 15_000 },
        ],
      },
      // 2.0-rc.0 to rc.3: one created timestamp for the series' samples and histograms.
      { labels: [l('__name__', 'jobs_total')], samples: [{ value: 1, timestamp: T }], createdTimestamp: CT - 5 },
      { labels: [l('__name__', 'latency_seconds')], samples: [], histograms: [encodeHistogram(histogram(T, CT))] },
      { labels: [l('__name__', 'old_latency_seconds')], samples: [], histograms: [encodeHistogram(histogram(T))], createdTimestamp: CT - 7 },
      { labels: [l('__name__', 'temperature')], samples: [{ value: 21, timestamp: T }] },
    ],
  };
}

function records(startTimestamps: boolean): Buffer[] {
  const req = parseWriteRequestV2(encodeWriteRequestV2(request()));
  return req.series.map((s) => seriesV2ToV1(req, s, undefined, startTimestamps));
}

function histogramStarts(body: Uint8Array): (number | undefined)[] {
  return decodeWriteRequest(encodeRecordValue([body])).timeseries[0].histogramSamples.map((h) => h.startTimestamp);
}

test('2.0 start timestamps travel in the records when the tenant ingests them; created_timestamp fills in for each sample and histogram', () => {
  const bodies = records(true);
  const [counter, legacy, , , gauge] = decodeWriteRequest(encodeRecordValue(bodies)).timeseries;
  assert.deepEqual([...counter.starts!], [CT, 0], 'per sample: the second sample has none');
  assert.deepEqual([...counter.values], [3, 5]);
  assert.deepEqual([...legacy.starts!], [CT - 5]);
  assert.equal(gauge.starts, undefined, 'a series without start timestamps has no starts array');
  assert.deepEqual(histogramStarts(bodies[2]), [CT]);
  assert.deepEqual(histogramStarts(bodies[3]), [CT - 7]);
  const h = decodeWriteRequest(encodeRecordValue([bodies[3]])).timeseries[0].histogramSamples[0];
  assert.deepEqual(h.histogram, histogram(T).histogram, 'the histogram itself is unchanged');
});

test('without created-timestamp zero ingestion the records carry no start timestamp at all', () => {
  const bodies = records(false);
  for (const ts of decodeWriteRequest(encodeRecordValue(bodies)).timeseries) assert.equal(ts.starts, undefined);
  assert.deepEqual(histogramStarts(bodies[2]), [undefined], 'field 17 is stripped from a histogram that had it');
  assert.deepEqual(histogramStarts(bodies[3]), [undefined]);
  // Plain samples are still copied as sent.
  assert.deepEqual([...decodeWriteRequest(encodeRecordValue([bodies[0]])).timeseries[0].values], [3, 5]);
});

test('record format 3 keeps start timestamps per sample; a record with none decodes without a starts array', () => {
  const bodies = records(true);
  const floats = [bodies[0], bodies[1], bodies[4]];
  const value = new Symbolizer().symbolize(floats);
  assert.ok(value !== undefined, 'float series with start timestamps are still symbolized');
  const decoder = new SymbolizedDecoder();
  const r = decoder.decode(value);
  assert.deepEqual([...r.starts!.subarray(0, r.sampleEnd[r.series - 1])], [CT, 0, CT - 5, 0]);
  assert.deepEqual([...r.timestamps.subarray(0, 4)], [T, T + 15_000, T, T]);
  // The same decoder, a record without: no starts, even though its array is still allocated.
  const plain = new Symbolizer().symbolize(records(false).filter((_, i) => i !== 2 && i !== 3));
  assert.equal(decoder.decode(plain!).starts, undefined);
  // Tools reading either format see the same.
  assert.deepEqual([...decodeRecordValue(value, 'symbolized').timeseries[0].starts!], [CT, 0]);
});

test('a histogram start timestamp round-trips through encodeHistogram and readHistogram; 0 means none', () => {
  const body = encodeHistogram(histogram(T, CT));
  assert.equal(readHistogram(new ProtoReader(body), body.length).startTimestamp, CT);
  const none = encodeHistogram(histogram(T, 0));
  assert.equal(readHistogram(new ProtoReader(none), none.length).startTimestamp, undefined);
});

test('1.0: the parser notes a series with start timestamps; withoutStartTimestamps drops them and keeps the rest byte for byte', () => {
  const body = encodeWriteRequest({
    timeseries: [
      { labels: [l('__name__', 'a_total')], samples: [{ value: 1, timestamp: T, startTimestamp: CT }], exemplars: [{ labels: [], value: 1, timestamp: T }] },
      { labels: [l('__name__', 'h')], samples: [], histograms: [encodeHistogram(histogram(T, CT))] },
      { labels: [l('__name__', 'plain')], samples: [{ value: 2, timestamp: T }] },
    ],
  });
  const series = parseWriteRequest(body).series;
  assert.deepEqual(
    series.map((s) => s.startTimestamps),
    [true, true, false],
  );
  const stripped = series.map((s) => withoutStartTimestamps(s.raw));
  const decoded = decodeWriteRequest(encodeRecordValue(stripped)).timeseries;
  assert.equal(decoded[0].starts, undefined);
  assert.deepEqual([...decoded[0].values, decoded[0].exemplars.length], [1, 1]);
  assert.equal(decoded[1].histogramSamples[0].startTimestamp, undefined);
  assert.deepEqual(decoded[1].histogramSamples[0].histogram, histogram(T).histogram);
  assert.deepEqual(stripped[2], Buffer.from(series[2].raw), 'a series without start timestamps is unchanged');
  const never = encodeWriteRequest({
    timeseries: [{ labels: [l('__name__', 'a_total')], samples: [{ value: 1, timestamp: T }], exemplars: [{ labels: [], value: 1, timestamp: T }] }],
  });
  assert.deepEqual(stripped[0], Buffer.from(parseWriteRequest(never).series[0].raw), 'the same bytes as a series that never had one');
});
