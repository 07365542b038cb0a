// The ingester's per-record work without Kafka: decode a record value and
// append its series to a head, as Ingester.consume does. Prints samples/s on
// one core after the head holds every series (the steady state).
//
//   node --import tsx test/bench/ingest-append.ts [--series 100000] [--rounds 20]

import { decodeWriteRequest } from '@strata/remote-write';
import { Head, emptyAppendStats } from '@strata/tsdb';
import { WindowEncoder } from './encode.ts';

const args = process.argv.slice(2);
const opt = (name: string, fallback: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const SERIES = opt('series', 100_000);
const ROUNDS = opt('rounds', 20);
const SCRAPE_MS = 15_000;

// Records as the distributor writes them: about 500 series of one scrape each.
const encoder = new WindowEncoder({ protocol: 'v1', series: SERIES, shards: 1, samplesPerRequest: 500, uncompressed: true });
const w = encoder.encode({ firstRound: 0, rounds: ROUNDS + 1, tsStart: 1_700_000_000_000, roundMs: SCRAPE_MS });
const records: Uint8Array[] = [];
for (let i = 0; i < w.offsets.length; i++) records.push(new Uint8Array(w.data.buffer, w.offsets[i], w.lengths[i]));
const perRound = Math.ceil(records.length / (ROUNDS + 1));

const head = new Head({ chunkRangeMs: 2 * 3_600_000 });
const stats = emptyAppendStats();
const append = (from: number, to: number) => {
  for (let i = from; i < to; i++) {
    for (const ts of decodeWriteRequest(records[i]).timeseries) head.append(ts, ts.timestamps, ts.values, stats);
  }
};
append(0, perRound); // creates every series
const before = stats.appended;
const cpu0 = process.cpuUsage();
const t0 = performance.now();
append(perRound, records.length);
const wall = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
const samples = stats.appended - before;
console.log(
  `ingest append: ${head.numSeries} series, ${samples.toLocaleString('en-US')} samples in ${wall.toFixed(2)}s → ` +
    `${Math.round(samples / wall).toLocaleString('en-US')} samples/s, ${Math.round(samples / ((cpu.user + cpu.system) / 1e6)).toLocaleString('en-US')} per CPU-second`,
);
