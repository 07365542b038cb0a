// Sends the encoded rounds to one target as fast as it takes them: one loop per shard, one request
// in flight each, retries as Prometheus' queue manager does (5xx, 429 and timeouts, for as long as
// it takes), and every round finished by all shards before the next starts (a shard running hours
// ahead would push the others' samples out of the head's appendable window). Counts every attempt
// by status and watches the pid.

import { performance } from 'node:perf_hooks';
import { RequestLog, percentile } from './latency.ts';
import { loadAverage, pidAlive, rssBytes, sum } from './proc-stats.ts';
import type { Round, RoundReader, ScalePlan } from './scale-data.ts';
import { PROMETHEUS_RETRY, Pusher, ShardQueue, newCounters, type ShardCounters } from './sender.ts';
import type { BenchTarget } from './targets.ts';

export interface BackfillFigures {
  plannedSamples: number;
  okSamples: number;
  /** Samples of requests that failed after their retries (or a status not retried). */
  failedSamples: number;
  /** Samples never sent (the target died). */
  unsentSamples: number;
  okRequests: number;
  failedRequests: number;
  retries: number;
  /** Every attempt by its answer: '204', '503', 'network', ... */
  attempts: Record<string, number>;
  failedAttempts: number;
  firstError: string | undefined;
  seconds: number;
  /** Acknowledged samples per second of the whole backfill. */
  rate: number;
  p50: number;
  p99: number;
  max: number;
  /** Most RSS sampled (each second) of the series holder and of the target's other processes. */
  peakRss: number;
  peakRssOthers: number;
  /** RSS of the series holder as the last round was answered (a block cut's garbage may still be in it). */
  rssAtEnd: number | undefined;
  roundsSent: number;
  /** Set when the target's process went away: when and how. */
  died?: string;
  /** The longest time no request was answered (to the second): how long the target stood still. */
  longestSilenceMs: number;
  /** Set when no request was answered for STALL_LIMIT_MS and the backfill gave up. */
  stalled?: string;
}

export interface BackfillOptions {
  plan: ScalePlan;
  log: (l: string) => void;
  /** A line on how far the target is (Strata: what its ingester consumed of `acked`), added to each round's. */
  progress?: (acked: number) => Promise<string>;
  /** How the target's process ended, when the target knows (Strata: its exit code). */
  exitOf?: () => string | undefined;
}

const WATCH_EVERY_MS = 1000;
/** Prometheus retries a recoverable error until it succeeds; the bench gives up on a target this silent. */
const STALL_LIMIT_MS = 30 * 60_000;
/** Prometheus' queue manager: no limit on retries, 30 ms to 5 s backoff, remote_timeout 30 s. */
const RETRY = { ...PROMETHEUS_RETRY, maxRetries: Number.POSITIVE_INFINITY };

export async function backfill(target: BenchTarget, reader: RoundReader, o: BackfillOptions): Promise<BackfillFigures> {
  const main = target.memoryProcesses()[0];
  if (!main) throw new Error(`${target.name} is not running`);
  const others = target.processes().filter((p) => p.pid !== main.pid);
  const pusher = new Pusher({ url: target.pushUrl, headers: target.headers, protocol: 'v1' }, o.plan.shards, RETRY);
  const requests = new RequestLog();
  const counters: ShardCounters[] = Array.from({ length: o.plan.shards }, () => newCounters());
  const f = {
    peakRss: 0,
    peakRssOthers: 0,
    died: undefined as string | undefined,
    stalled: undefined as string | undefined,
    round: -1,
    answered: 0,
    answeredAt: performance.now(),
    longestSilenceMs: 0,
  };
  const began = performance.now();
  const watch = setInterval(() => {
    if (f.died !== undefined || f.stalled !== undefined) return;
    if (requests.length > f.answered) {
      f.longestSilenceMs = Math.max(f.longestSilenceMs, performance.now() - f.answeredAt - WATCH_EVERY_MS);
      f.answered = requests.length;
      f.answeredAt = performance.now();
    } else if (performance.now() - f.answeredAt > STALL_LIMIT_MS) {
      f.stalled = `no request answered for ${STALL_LIMIT_MS / 60_000} min in round ${f.round + 1} of ${o.plan.rounds}; gave up`;
      pusher.setDeadline(performance.now());
      o.log(`  ${target.name} STALLED: ${f.stalled}`);
    }
    f.peakRss = Math.max(f.peakRss, rssBytes(main.pid) ?? 0);
    f.peakRssOthers = Math.max(f.peakRssOthers, sum(others.map((p) => rssBytes(p.pid) ?? 0)));
    if (!pidAlive(main.pid)) {
      f.died = `pid ${main.pid} gone ${((performance.now() - began) / 1000).toFixed(0)}s into the backfill, in round ${f.round + 1} of ${o.plan.rounds}${o.exitOf?.() ? ` (${o.exitOf()})` : ''}`;
      pusher.setDeadline(performance.now());
      o.log(`  ${target.name} DIED: ${f.died}`);
    }
  }, WATCH_EVERY_MS);
  let planned = 0;
  let unsent = 0;
  let acked = 0;
  try {
    for (let r = await reader.read(); r && f.died === undefined && f.stalled === undefined; r = await reader.read()) {
      f.round = r.round.index;
      planned += r.round.totalSamples;
      const t0 = performance.now();
      const from = requests.length;
      unsent += await sendRound(pusher, r.round, r.data, requests, counters);
      const s = requests.slice(-Infinity, Infinity, from);
      const seconds = (performance.now() - t0) / 1000;
      acked += s.okSamples;
      const all = totals(counters);
      const extra = o.progress ? ` | ${await o.progress(acked).catch((e: Error) => e.message)}` : '';
      o.log(
        `  round ${r.round.index + 1}/${o.plan.rounds} (${new Date(r.round.ts).toISOString().slice(11, 16)}Z): ${Math.round(s.okSamples / seconds).toLocaleString('en-US')}/s over ${seconds.toFixed(1)}s, ` +
          `failed attempts so far ${all.failedAttempts}${all.failedAttempts > 0 ? ` (${formatAttempts(all.attempts)})` : ''} | RSS ${mib(rssBytes(main.pid))}` +
          `${others.length > 0 ? ` (${others.map((p) => `${p.name} ${mib(rssBytes(p.pid))}`).join(', ')})` : ''}${extra} | load ${loadAverage()}`,
      );
    }
  } finally {
    clearInterval(watch);
    pusher.close();
  }
  const seconds = (performance.now() - began) / 1000;
  const s = requests.slice();
  const all = totals(counters);
  return {
    plannedSamples: planned,
    okSamples: s.okSamples,
    failedSamples: s.failedSamples,
    unsentSamples: unsent,
    okRequests: s.okRequests,
    failedRequests: s.failedRequests,
    retries: all.retries,
    attempts: all.attempts,
    failedAttempts: all.failedAttempts,
    firstError: all.firstError,
    seconds,
    rate: s.okSamples / seconds,
    p50: percentile(s.latencies, 50),
    p99: percentile(s.latencies, 99),
    max: s.latencies.length > 0 ? s.latencies[s.latencies.length - 1] : NaN,
    peakRss: f.peakRss,
    peakRssOthers: f.peakRssOthers,
    rssAtEnd: rssBytes(main.pid),
    roundsSent: f.round + 1,
    died: f.died,
    stalled: f.stalled,
    longestSilenceMs: Math.max(0, f.longestSilenceMs),
  };
}

/** One round over every shard, each in its own order; resolves when all shards are done. Returns the samples left unsent. */
async function sendRound(pusher: Pusher, round: Round, data: Buffer, requests: RequestLog, counters: ShardCounters[]): Promise<number> {
  const queues = counters.map(() => new ShardQueue());
  for (let i = 0; i < round.offsets.length; i++) {
    queues[round.shard[i]].push({ body: data.subarray(round.offsets[i], round.offsets[i] + round.lengths[i]), samples: round.samples[i], due: 0 });
  }
  for (const q of queues) q.close();
  const unsent = await Promise.all(queues.map((q, s) => pusher.runShard(q, requests, counters[s])));
  return unsent.reduce((a, b) => a + b, 0);
}

function totals(counters: ShardCounters[]): { attempts: Record<string, number>; failedAttempts: number; retries: number; firstError: string | undefined } {
  const attempts: Record<string, number> = {};
  let retries = 0;
  let firstError: string | undefined;
  for (const c of counters) {
    retries += c.retries;
    firstError ??= c.firstError;
    for (const [k, v] of c.statuses) attempts[k] = (attempts[k] ?? 0) + v;
  }
  const failedAttempts = sum(
    Object.entries(attempts)
      .filter(([k]) => !/^2\d\d$/.test(k))
      .map(([, v]) => v),
  );
  return { attempts, failedAttempts, retries, firstError };
}

export function formatAttempts(attempts: Record<string, number>): string {
  return Object.entries(attempts)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k}: ${v.toLocaleString('en-US')}`)
    .join(', ');
}

function mib(bytes: number | undefined): string {
  return bytes === undefined ? 'gone' : `${Math.round(bytes / 2 ** 20).toLocaleString('en-US')} MiB`;
}
