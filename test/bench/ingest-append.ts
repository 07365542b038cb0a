// The ingester's per-record work without Kafka: decode a record value and
// append its series to a head, as Ingester.consume does. Prints samples/s on
// one core after the head holds every series (the steady state), for record
// format 2 (a 1.0 WriteRequest) and format 3 (symbolized), with what turning
// the 1.0 series into format 3 costs the distributor and the bytes each takes.
//
//   node --import tsx test/bench/ingest-append.ts [--series 100000] [--rounds 20] [--samples-per-record 500] [--shards 1]
//   (--shards 64: each record holds series of one of 64 sender shards, as a busy Prometheus sends;
//    --create-shards 50: the first round, which creates the series, is sent over 50 shards, so the
//    later rounds meet the series in another order than they were created in)

import { compressSync } from 'snappy';
import { SymbolizedDecoder, decodeWriteRequest, parseWriteRequest, symbolizeSeries } from '@strata/remote-write';
import { Head, emptyAppendStats } from '@strata/tsdb';
import { WindowEncoder } from './encode.ts';

const args = process.argv.slice(2);
const opt = (name: string, fallback: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const SERIES = opt('series', 100_000);
const ROUNDS = opt('rounds', 20);
const PER_RECORD = opt('samples-per-record', 500);
const SCRAPE_MS = 15_000;

const SHARDS = opt('shards', 1);
/** Shards of the first round, which creates the series: another count sends them in another order than they were created in. */
const CREATE_SHARDS = opt('create-shards', SHARDS);
const T0 = 1_700_000_000_000;

// Records as the distributor writes them: about 500 series of one scrape each.
const encoder = new WindowEncoder({
  protocol: 'v1',
  series: SERIES,
  shards: Math.max(SHARDS, CREATE_SHARDS),
  samplesPerRequest: PER_RECORD,
  uncompressed: true,
});
const windows = [
  encoder.encode({ firstRound: 0, rounds: 1, tsStart: T0, roundMs: SCRAPE_MS, shards: CREATE_SHARDS }),
  encoder.encode({ firstRound: 1, rounds: ROUNDS, tsStart: T0 + SCRAPE_MS, roundMs: SCRAPE_MS, shards: SHARDS }),
];
const records = windows.flatMap((w) => Array.from(w.offsets, (o, i) => new Uint8Array(w.data.buffer, o, w.lengths[i])));
/** Records of the first round (it creates every series). */
const perRound = windows[0].offsets.length;

const perSecond = (samples: number, cpu: NodeJS.CpuUsage) => Math.round(samples / ((cpu.user + cpu.system) / 1e6)).toLocaleString('en-US');

// What the distributor does to write format 3: 1.0 series bodies to a symbolized record.
const bodies = records.map((r) => parseWriteRequest(r).series.map((s) => s.raw));
const samplesIn = (from: number, to: number) => bodies.slice(from, to).reduce((n, b) => n + b.length, 0);
let cpu0 = process.cpuUsage();
const symbolized = bodies.map((b) => symbolizeSeries(b)!);
console.log(`symbolize (distributor): ${perSecond(samplesIn(0, bodies.length), process.cpuUsage(cpu0))} samples per CPU-second`);
const bytes = (rs: Uint8Array[], f: (r: Uint8Array) => number) => (rs.reduce((n, r) => n + f(r), 0) / samplesIn(0, bodies.length)).toFixed(1);
console.log(
  `bytes per sample in Kafka: format 2 ${bytes(records, (r) => compressSync(Buffer.from(r)).length)} (${bytes(records, (r) => r.length)} before snappy), ` +
    `format 3 ${bytes(symbolized, (r) => compressSync(Buffer.from(r)).length)} (${bytes(symbolized, (r) => r.length)} before snappy)`,
);

for (const format of (process.env.FORMATS ?? '2,3').split(',') as ('2' | '3')[]) {
  const head = new Head({ chunkRangeMs: 2 * 3_600_000 });
  const stats = emptyAppendStats();
  const decoder = new SymbolizedDecoder();
  const append = (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      if (format === '2') {
        for (const ts of decodeWriteRequest(records[i]).timeseries) head.append(ts, ts.timestamps, ts.values, stats);
        continue;
      }
      const r = decoder.decode(symbolized[i]);
      const symbols = head.symbols(r.bytes, r.symbolStart, r.symbolEnd, r.symbols);
      for (let k = 0, refFrom = 0, from = 0; k < r.series; refFrom = r.refEnd[k], from = r.sampleEnd[k], k++) {
        head.appendSamples(head.seriesBySymbols(symbols, r.refs, refFrom, r.refEnd[k], true)!, r.timestamps, r.values, from, r.sampleEnd[k], stats);
      }
    }
  };
  append(0, perRound); // creates every series
  const before = stats.appended;
  cpu0 = process.cpuUsage();
  const t0 = performance.now();
  append(perRound, records.length);
  const wall = (performance.now() - t0) / 1000;
  const samples = stats.appended - before;
  console.log(
    `ingest append, format ${format}: ${head.numSeries} series, ${samples.toLocaleString('en-US')} samples in ${wall.toFixed(2)}s → ` +
      `${Math.round(samples / wall).toLocaleString('en-US')} samples/s, ${perSecond(samples, process.cpuUsage(cpu0))} per CPU-second`,
  );
}
