// The scale run's backfill, encoded once before any target starts and sent byte for byte the
// same to each: one round per sample spacing, one sample per series per round, rounds in time
// order from end-span to end. Kept on disk (≈ 21 B a sample) so the senders never encode.

import { writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { WindowEncoder } from './encode.ts';
import { loadAverage } from './proc-stats.ts';
import { SeriesSet } from './series.ts';
import { sleep } from './sender.ts';

export interface ScalePlan {
  series: number;
  /** CPUs per node exporter: node_cpu_seconds_total has 8 modes per CPU, so one instance has 8 × cpus. */
  cpus: number;
  spanMs: number;
  /** Sample spacing of every series (one round). */
  stepMs: number;
  rounds: number;
  /** The first round's sample time; the last sample is before endTs. */
  startTs: number;
  endTs: number;
  shards: number;
  samplesPerRequest: number;
}

export function planScale(
  o: { series: number; cpus: number; spanMs: number; stepMs: number; shards: number; samplesPerRequest: number },
  now = Date.now(),
): ScalePlan {
  if (o.spanMs % o.stepMs !== 0) throw new Error(`--scale ${o.spanMs / 60_000}m is not a whole number of --scale-step ${o.stepMs / 60_000}m`);
  const endTs = Math.floor(now / 60_000) * 60_000;
  return { ...o, rounds: o.spanMs / o.stepMs, startTs: endTs - o.spanMs, endTs };
}

/** The series set the plan sends (labels, per-instance counts); cheap: no series is built. */
export function seriesOf(plan: ScalePlan): SeriesSet {
  return new SeriesSet({ series: plan.series, cpus: plan.cpus });
}

/** One encoded round on disk: request bodies back to back, each with its shard. */
export interface Round {
  index: number;
  ts: number;
  file: string;
  offsets: number[];
  lengths: number[];
  samples: number[];
  shard: number[];
  totalSamples: number;
  bytes: number;
}

/** Encodes every round of the plan under `dir`; the encoder (≈ 250 B a series) is dropped afterwards. */
export async function encodeRounds(plan: ScalePlan, dir: string, log: (l: string) => void): Promise<Round[]> {
  const began = performance.now();
  const encoder = new WindowEncoder({
    series: plan.series,
    cpus: plan.cpus,
    protocol: 'v1',
    shards: plan.shards,
    samplesPerRequest: plan.samplesPerRequest,
    // Full requests only: a round's samples span a whole spacing, far more than Prometheus' 5 s deadline.
    batchDeadlineMs: Number.POSITIVE_INFINITY,
  });
  log(`  ${plan.series.toLocaleString('en-US')} series set up in ${((performance.now() - began) / 1000).toFixed(1)}s`);
  const rounds: Round[] = [];
  for (let r = 0; r < plan.rounds; r++) {
    const ts = plan.startTs + r * plan.stepMs;
    const w = encoder.encode({ firstRound: r, rounds: 1, tsStart: ts, roundMs: plan.stepMs, shards: plan.shards });
    const file = join(dir, `round-${String(r).padStart(4, '0')}.bin`);
    writeFileSync(file, w.data);
    rounds.push({
      index: r,
      ts,
      file,
      offsets: Array.from(w.offsets),
      lengths: Array.from(w.lengths),
      samples: Array.from(w.samples),
      shard: Array.from(w.shard),
      totalSamples: w.totalSamples,
      bytes: w.data.length,
    });
    if (r === 0 || (r + 1) % 6 === 0 || r === plan.rounds - 1) {
      const s = (performance.now() - began) / 1000;
      log(
        `  encoded ${r + 1}/${plan.rounds} rounds (${w.lengths.length} requests, ${(w.data.length / w.totalSamples).toFixed(1)} B/sample) in ${s.toFixed(0)}s; load ${loadAverage()}`,
      );
    }
    await sleep(0); // let a Ctrl-C through
  }
  writeFileSync(join(dir, 'rounds.json'), JSON.stringify({ plan, rounds }));
  return rounds;
}

/** Reads rounds in order, the next one read while the current one is sent. */
export class RoundReader {
  private readonly rounds: Round[];
  private next: Promise<Buffer> | undefined;
  private at = 0;

  constructor(rounds: Round[]) {
    this.rounds = rounds;
  }

  async read(): Promise<{ round: Round; data: Buffer } | undefined> {
    if (this.at >= this.rounds.length) return undefined;
    const round = this.rounds[this.at++];
    const data = await (this.next ?? readFile(round.file));
    this.next = this.at < this.rounds.length ? readFile(this.rounds[this.at].file) : undefined;
    return { round, data };
  }
}
