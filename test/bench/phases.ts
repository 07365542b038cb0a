// The bench's phases against one target: step the rate up to the limit, hold
// half of it (latency, CPU, RSS), query, measure disk, restart an ingester
// (replay) and soak. Each figure carries the load average it was taken at.

import { performance } from 'node:perf_hooks';
import { formatPhase, type LoadGenerator, type PhaseResult } from './loadgen.ts';
import { percentile } from './latency.ts';
import { cpuDelta, loadAverage, rssBytes, snapshotCpu, sum } from './proc-stats.ts';
import { sleep } from './sender.ts';
import { StrataTarget, histogramOf, histogramQuantile, metricOf, type BenchTarget } from './targets.ts';

export interface SearchConfig {
  startRate: number;
  maxRate: number;
  stepMs: number;
  /** Cap on samples per step (encoding them takes time and memory). */
  maxSamplesPerStep: number;
  budgetMs: number;
  /** p99 above this fails a step ("latency explodes"). */
  latencyLimitMs: number;
  /** A failed step is run again this many times before it counts as failed (a neighbour's CPU spike is not the limit). */
  retries: number;
}

export interface StepRecord {
  rate: number;
  ok: boolean;
  why: string;
  result: PhaseResult;
  cpuSeconds: number;
  ingestWaitMs: number;
  load: string;
}

export interface SearchOutcome {
  maxRate: number;
  best: StepRecord | undefined;
  steps: StepRecord[];
}

function durationFor(rate: number, c: Pick<SearchConfig, 'stepMs' | 'maxSamplesPerStep'>): number {
  return Math.max(3000, Math.min(c.stepMs, (c.maxSamplesPerStep / rate) * 1000));
}

// A phase starts from a quiet target: what a failed step left queued (Strata's ingesters still
// consuming its backlog, a merge in the background) would otherwise be counted against the next
// step's latency and the ½-max phase's CPU.
const SETTLE_BACKLOG_MS = 180_000;
const SETTLE_QUIET_MS = 30_000;
/** Below this many cores over one second, a target counts as quiet. */
const QUIET_CORES = 0.2;

/** Waits until the target ingested everything acknowledged and its processes are near idle; returns how long that took. */
export async function settle(target: BenchTarget, acked: { total: number }): Promise<{ waitedMs: number; behind: number; busyCores: number }> {
  const began = Date.now();
  const ingest = await target.waitIngested(acked.total, SETTLE_BACKLOG_MS);
  let busyCores = 0;
  for (const quietBy = Date.now() + SETTLE_QUIET_MS; Date.now() < quietBy;) {
    const before = snapshotCpu(target.processes());
    await sleep(1000);
    busyCores = sum(cpuDelta(before, snapshotCpu(target.processes())).values());
    if (busyCores < QUIET_CORES) break;
  }
  return { waitedMs: Date.now() - began, behind: ingest.behind, busyCores };
}

/** Runs one load phase from a settled target and waits for it to have ingested the phase; CPU covers both. */
export async function measuredPhase(
  target: BenchTarget,
  gen: LoadGenerator,
  acked: { total: number },
  rate: number,
  durationMs: number,
  drainTimeoutMs: number,
  windowMs?: number,
  shards?: number,
): Promise<{
  result: PhaseResult;
  cpu: Map<string, number>;
  ingest: { caughtUp: boolean; behind: number; waitedMs: number };
  load: string;
  settled: { waitedMs: number; behind: number; busyCores: number };
}> {
  const settled = await settle(target, acked);
  const before = snapshotCpu(target.processes());
  const result = await gen.run({ rate, durationMs, windowMs, shards });
  acked.total += result.okSamples;
  const ingest = await target.waitIngested(acked.total, drainTimeoutMs);
  const cpu = cpuDelta(before, snapshotCpu(target.processes()));
  return { result, cpu, ingest, load: loadAverage(), settled };
}

export async function searchMaxRate(
  target: BenchTarget,
  gen: LoadGenerator,
  acked: { total: number },
  c: SearchConfig,
  log: (l: string) => void,
): Promise<SearchOutcome> {
  const steps: StepRecord[] = [];
  const deadline = performance.now() + c.budgetMs;
  let rate = c.startRate;
  let good = 0;
  let bad = Number.POSITIVE_INFINITY;
  let best: StepRecord | undefined;
  let retried = 0;
  while (performance.now() < deadline) {
    const durationMs = durationFor(rate, c);
    const m = await measuredPhase(target, gen, acked, rate, durationMs, Math.max(10_000, durationMs));
    const r = m.result;
    const why: string[] = [];
    if (r.failedSamples > 0) why.push(`${r.failedSamples} samples failed`);
    if (r.unsentSamples > 0) why.push(`${r.unsentSamples} samples unsent`);
    if (r.achievedRate < 0.9 * r.rate) why.push(`achieved only ${Math.round((100 * r.achievedRate) / r.rate)}% of the rate`);
    if (!(r.p99 <= c.latencyLimitMs)) why.push(`p99 ${Math.round(r.p99)}ms > ${c.latencyLimitMs}ms`);
    if (!m.ingest.caughtUp) why.push(`ingesters ${m.ingest.behind} samples behind ${Math.round(m.ingest.waitedMs / 1000)}s after the step`);
    const ok = why.length === 0;
    const rec: StepRecord = {
      rate: r.rate,
      ok,
      why: why.join('; '),
      result: r,
      cpuSeconds: sum(m.cpu.values()),
      ingestWaitMs: m.ingest.waitedMs,
      load: m.load,
    };
    steps.push(rec);
    const settledNote = m.settled.waitedMs > 1500 ? ` | settled ${(m.settled.waitedMs / 1000).toFixed(1)}s before` : '';
    const split = m.cpu.size > 1 ? ` (${[...m.cpu].map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ')})` : '';
    log(
      `  step ${ok ? 'OK  ' : 'FAIL'} ${formatPhase(r)} | cpu ${rec.cpuSeconds.toFixed(1)}s${split} | drain ${(m.ingest.waitedMs / 1000).toFixed(1)}s${settledNote} | load ${m.load}${ok ? '' : `\n    why: ${rec.why}`}`,
    );
    if (!ok && retried < c.retries) {
      retried++;
      log(`    running the same step again (${retried} of ${c.retries}) before calling it the limit`);
      await sleep(1500);
      continue;
    }
    retried = 0;
    if (ok) {
      good = Math.max(good, r.rate);
      if (!best || r.achievedRate > best.result.achievedRate) best = rec;
    } else bad = Math.min(bad, r.rate);
    if (!Number.isFinite(bad)) {
      if (rate >= c.maxRate) break;
      rate = Math.min(c.maxRate, rate * 2);
    } else if (good === 0) {
      rate = rate / 2;
      if (rate < 500) break;
    } else {
      if (bad / good <= 1.2) break;
      rate = Math.sqrt(good * bad);
    }
    await sleep(1500);
  }
  return { maxRate: best?.result.achievedRate ?? 0, best, steps };
}

export interface SteadyFigures {
  result: PhaseResult;
  cpuSeconds: number;
  cpuByProcess: Record<string, number>;
  samplesPerCpuSecond: number;
  rssIdle: number;
  rssNow: number;
  rssAllProcesses: number;
  seriesInMemory: number;
  /** Samples written per series so far: what the head holds per series (RSS per series depends on it). */
  samplesPerSeries: number;
  rssPerSeries: number;
  load: string;
  ingest: { caughtUp: boolean; behind: number; waitedMs: number };
  /** How long the target took to settle before the phase (a failed step's backlog). */
  settledMs: number;
  /** Strata: where push time goes, from the distributor's histograms. */
  breakdown?: string;
}

export async function steadyPhase(
  target: BenchTarget,
  gen: LoadGenerator,
  acked: { total: number },
  rate: number,
  durationMs: number,
  rssIdle: number,
  maxSamplesPerWindow: number,
  reshard: boolean,
  log: (l: string) => void,
): Promise<SteadyFigures> {
  const windowMs = Math.max(2000, Math.min(durationMs, (maxSamplesPerWindow / rate) * 1000));
  const shards = reshard ? await reshardAt(target, gen, acked, rate, log) : gen.shardsFor(rate);
  const dist = target instanceof StrataTarget ? target.cluster.distributorUrl : undefined;
  const histos = ['strata_distributor_push_duration_seconds', 'strata_distributor_kafka_produce_duration_seconds'];
  const before = dist ? await Promise.all(histos.map((h) => histogramOf(dist, h))) : [];
  const m = await measuredPhase(target, gen, acked, rate, durationMs, 60_000, windowMs, shards);
  let breakdown: string | undefined;
  if (dist) {
    const after = await Promise.all(histos.map((h) => histogramOf(dist, h)));
    const q = (i: number, p: number) => histogramQuantile(before[i], after[i], p) * 1000;
    breakdown =
      `distributor's own histograms (bucket upper bounds): push p50 ≤ ${q(0, 0.5)}ms p99 ≤ ${q(0, 0.99)}ms; ` +
      `Kafka produce (acks=all) p50 ≤ ${q(1, 0.5)}ms p99 ≤ ${q(1, 0.99)}ms`;
  }
  const cpuSeconds = sum(m.cpu.values());
  const rssNow = sum(target.memoryProcesses().map((p) => rssBytes(p.pid) ?? 0));
  const rssAll = sum(target.processes().map((p) => rssBytes(p.pid) ?? 0));
  let series = gen.seriesCreated;
  if (target instanceof StrataTarget) series = (await target.activeSeries('a')) || series;
  return {
    result: m.result,
    cpuSeconds,
    cpuByProcess: Object.fromEntries(m.cpu),
    samplesPerCpuSecond: m.result.okSamples / Math.max(1e-9, cpuSeconds),
    rssIdle,
    rssNow,
    rssAllProcesses: rssAll,
    seriesInMemory: series,
    samplesPerSeries: acked.total / Math.max(1, series),
    rssPerSeries: (rssNow - rssIdle) / Math.max(1, series),
    load: m.load,
    ingest: m.ingest,
    settledMs: m.settled.waitedMs,
    breakdown,
  };
}

/** Prometheus re-computes its shard count every 10 s. */
const RESHARD_EVERY_MS = 10_000;
const MAX_RESHARDS = 6;

/**
 * Sends at `rate` in 10 s rounds, resharding after each as Prometheus' queue manager would against
 * this target, until the count holds (or MAX_RESHARDS); returns it. Not measured: it only finds the
 * concurrency a Prometheus sending this rate would settle at, from the search's one request per
 * shard-second.
 */
async function reshardAt(target: BenchTarget, gen: LoadGenerator, acked: { total: number }, rate: number, log: (l: string) => void): Promise<number> {
  await settle(target, acked);
  let shards = gen.shardsFor(rate);
  for (let i = 0; i < MAX_RESHARDS; i++) {
    const r = await gen.run({ rate, durationMs: RESHARD_EVERY_MS, shards });
    acked.total += r.okSamples;
    const next = gen.desiredShards(shards, r);
    log(
      `  resharding (not counted): ${shards} shards, ${(r.sendMsPerSample * 1000).toFixed(1)} µs sending per sample, p99 ${r.p99.toFixed(0)}ms → ${next} shards`,
    );
    if (next === shards) break;
    shards = next;
  }
  return shards;
}

export interface QueryFigures {
  /** query → sorted latencies (ms), result sizes, errors. */
  perQuery: { query: string; kind: 'instant' | 'range'; p50: number; p99: number; results: number; errors: number; firstError?: string }[];
  p50: number;
  p99: number;
  load: string;
}

export const QUERY_SET: { query: string; kind: 'instant' | 'range' }[] = [
  { query: 'sum(rate(node_cpu_seconds_total[5m]))', kind: 'instant' },
  { query: 'sum by (mode) (rate(node_cpu_seconds_total[5m]))', kind: 'instant' },
  { query: 'topk(5, rate(node_network_receive_bytes_total[5m]))', kind: 'instant' },
  { query: 'node_load1{job="node",instance=~"host-00000[0-9].*"}', kind: 'instant' },
  { query: 'sum(rate(node_cpu_seconds_total{mode!="idle"}[1m]))', kind: 'range' },
];

export async function queryPhase(target: BenchTarget, atMs: number, spanMs: number, runs: number): Promise<QueryFigures> {
  const all: number[] = [];
  const perQuery: QueryFigures['perQuery'] = [];
  for (const q of QUERY_SET) {
    const lat: number[] = [];
    let errors = 0;
    let firstError: string | undefined;
    let results = 0;
    for (let i = 0; i <= runs; i++) {
      const params = new URLSearchParams({ query: q.query });
      if (q.kind === 'instant') params.set('time', (atMs / 1000).toFixed(3));
      else {
        params.set('start', ((atMs - spanMs) / 1000).toFixed(3));
        params.set('end', (atMs / 1000).toFixed(3));
        params.set('step', '15');
      }
      const path = q.kind === 'instant' ? '/api/v1/query' : '/api/v1/query_range';
      const t0 = performance.now();
      try {
        const res = await fetch(`${target.queryBase}${path}`, {
          method: 'POST',
          body: params,
          headers: { ...target.headers, 'content-type': 'application/x-www-form-urlencoded' },
          signal: AbortSignal.timeout(120_000),
        });
        const body = (await res.json()) as { status: string; error?: string; data?: { result?: unknown[] } };
        const ms = performance.now() - t0;
        if (res.status !== 200 || body.status !== 'success') {
          errors++;
          firstError ??= `${res.status} ${body.error ?? ''}`.slice(0, 200);
          continue;
        }
        results = body.data?.result?.length ?? 0;
        // The first run warms caches (page cache, JIT); it is not counted.
        if (i > 0) lat.push(ms);
      } catch (err) {
        errors++;
        firstError ??= (err as Error).message;
      }
    }
    lat.sort((a, b) => a - b);
    all.push(...lat);
    perQuery.push({ query: q.query, kind: q.kind, p50: percentile(lat, 50), p99: percentile(lat, 99), results, errors, firstError });
  }
  all.sort((a, b) => a - b);
  return { perQuery, p50: percentile(all, 50), p99: percentile(all, 99), load: loadAverage() };
}

export interface ReplayFigures {
  downMs: number;
  liveRatePerIngester: number;
  replayedSamples: number;
  replayMs: number;
  startupMs: number;
  replayRate: number;
  ratio: number;
  ready: boolean;
  load: string;
}

/**
 * Kills ingester-zone-b-0, keeps pushing at `rate` for `downMs`, restarts it under
 * the same load and times the replay of its partition until /ready.
 */
export async function replayPhase(
  target: StrataTarget,
  gen: LoadGenerator,
  acked: { total: number },
  rate: number,
  downMs: number,
  maxSamplesPerWindow: number,
  log: (l: string) => void,
): Promise<ReplayFigures> {
  const victim = target.cluster.process('ingester-zone-b-0');
  const peer = target.cluster.process('ingester-zone-a-0');
  await victim.kill('SIGKILL');
  log(`  replay: killed ${victim.name}; pushing at ${Math.round(rate)}/s for ${Math.round(downMs / 1000)}s`);
  const windowMs = (r: number, d: number) => Math.max(2000, Math.min(d, (maxSamplesPerWindow / r) * 1000));
  const peerBefore = (await metricOf(peer.url, 'strata_ingester_samples_appended_total')) ?? 0;
  const t0 = Date.now();
  const down = await gen.run({ rate, durationMs: downMs, windowMs: windowMs(rate, downMs) });
  acked.total += down.okSamples;
  const peerAfter = (await metricOf(peer.url, 'strata_ingester_samples_appended_total')) ?? 0;
  const liveRatePerIngester = (peerAfter - peerBefore) / Math.max(0.001, (Date.now() - t0) / 1000);

  // Restart under continued load; the load phase runs while the replay is timed.
  const spawnAt = performance.now();
  victim.start();
  // Load goes on while it replays (as in production); the replay is timed on its own if it takes longer.
  const loadMs = Math.max(20_000, Math.min(60_000, downMs));
  const during = gen.run({ rate, durationMs: loadMs, windowMs: windowMs(rate, loadMs) });
  // The replay is timed from the last poll that saw nothing appended yet (a lower bound of the rate).
  let lastEmptyAt = spawnAt;
  let readyAt: number | undefined;
  let replayed = 0;
  const deadline = spawnAt + 600_000;
  while (performance.now() < deadline) {
    const polledAt = performance.now();
    const appended = await metricOf(victim.url, 'strata_ingester_samples_appended_total');
    if (appended === undefined || appended === 0) lastEmptyAt = polledAt;
    if (await victim.isReady()) {
      readyAt = performance.now();
      replayed = (await metricOf(victim.url, 'strata_ingester_samples_appended_total')) ?? appended ?? 0;
      break;
    }
    if (!victim.running) throw new Error(`${victim.name} exited during replay; see ${victim.opts.logFile}`);
    await sleep(200);
  }
  const after = await during;
  acked.total += after.okSamples;
  const replayMs = readyAt !== undefined ? readyAt - lastEmptyAt : NaN;
  const replayRate = replayed / Math.max(0.001, replayMs / 1000);
  return {
    downMs,
    liveRatePerIngester,
    replayedSamples: replayed,
    replayMs,
    startupMs: lastEmptyAt - spawnAt,
    replayRate,
    ratio: replayRate / Math.max(1, liveRatePerIngester),
    ready: readyAt !== undefined,
    load: loadAverage(),
  };
}

export interface SoakMinute {
  minute: number;
  rate: number;
  p99: number;
  failed: number;
  rssMemoryProcesses: number;
  rssAll: number;
  seriesCreated: number;
  load: string;
}

/** Least-squares slope of y over x. */
export function slope(xs: number[], ys: number[]): number {
  const n = xs.length;
  if (n < 2) return NaN;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i] - mx) * (ys[i] - my);
    den += (xs[i] - mx) ** 2;
  }
  return den === 0 ? NaN : num / den;
}

export async function soakPhase(
  target: BenchTarget,
  gen: LoadGenerator,
  acked: { total: number },
  rate: number,
  durationMs: number,
  maxSamplesPerWindow: number,
  log: (l: string) => void,
): Promise<{ minutes: SoakMinute[]; rssSlopeMBPerMin: number; p99SlopeMsPerMin: number; result: PhaseResult }> {
  const minutes: SoakMinute[] = [];
  const windowMs = Math.max(2000, Math.min(10_000, (maxSamplesPerWindow / rate) * 1000));
  const run = gen.run({ rate, durationMs, windowMs, graceMs: 60_000 });
  const began = Date.now();
  let done = false;
  void run.finally(() => (done = true));
  let k = 0;
  while (!done) {
    const next = began + (k + 1) * 60_000;
    while (!done && Date.now() < next) await sleep(Math.min(1000, next - Date.now()));
    if (done && Date.now() < next - 30_000) break;
    const s = gen.log.slice(next - 60_000, next);
    const m: SoakMinute = {
      minute: k + 1,
      rate: s.okSamples / 60,
      p99: percentile(s.latencies, 99),
      failed: s.failedSamples,
      rssMemoryProcesses: sum(target.memoryProcesses().map((p) => rssBytes(p.pid) ?? 0)),
      rssAll: sum(target.processes().map((p) => rssBytes(p.pid) ?? 0)),
      seriesCreated: gen.seriesCreated,
      load: loadAverage(),
    };
    minutes.push(m);
    log(
      `  soak min ${String(m.minute).padStart(3)}: ${Math.round(m.rate).toLocaleString('en-US')} samples/s, p99 ${m.p99.toFixed(0)}ms, failed ${m.failed}, ` +
        `RSS ${(m.rssMemoryProcesses / 2 ** 20).toFixed(0)} MiB (all processes ${(m.rssAll / 2 ** 20).toFixed(0)} MiB), series created ${m.seriesCreated}, load ${m.load}`,
    );
    k++;
  }
  const result = await run;
  acked.total += result.okSamples;
  // The first two minutes are warm-up (JIT, heap growth to the working set).
  const tail = minutes.length >= 5 ? minutes.filter((m) => m.minute > 2) : minutes;
  const xs = tail.map((m) => m.minute);
  return {
    minutes,
    rssSlopeMBPerMin: slope(
      xs,
      tail.map((m) => m.rssMemoryProcesses / 2 ** 20),
    ),
    p99SlopeMsPerMin: slope(
      xs,
      tail.map((m) => m.p99),
    ),
    result,
  };
}
