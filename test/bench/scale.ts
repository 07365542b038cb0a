// `npm run bench -- --scale 6h --series 3300000`: can one process hold that many series? Each
// target in turn (never two at once: memory) is started with its defaults (Strata as `npm start`
// runs it), backfilled with the span at one sample per series per --scale-step, left to settle,
// measured (RSS per series) and asked two range queries over the span. Kills what it starts by pid.

import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROMETHEUS3_DIR, PROMETHEUS3_VERSION } from '../../scripts/prometheus3.mjs';
import { cpuDelta, loadAverage, machineDescription, peakRssBytes, rssBytes, snapshotCpu, sum } from './proc-stats.ts';
import { backfill } from './scale-backfill.ts';
import { RoundReader, encodeRounds, planScale, seriesOf, type Round, type ScalePlan } from './scale-data.ts';
import { compareAnswers, scaleQueries, timeQuery } from './scale-queries.ts';
import { renderScaleNotes, renderScaleTable, renderVerdict, type ScaleTargetReport } from './scale-report.ts';
import { sleep } from './sender.ts';
import { StrataSingleProcess } from './strata-single.ts';
import { PrometheusTarget, VictoriaMetricsTarget, metricOf, type BenchTarget } from './targets.ts';

export interface ScaleOptions {
  targets: ('strata' | 'prometheus' | 'victoria')[];
  series: number;
  cpus: number;
  spanMs: number;
  stepMs: number;
  shards: number;
  samplesPerRequest: number;
  /** At least this long between the backfill's end (everything consumed) and the RSS reading. */
  settleMs: number;
  queryRuns: number;
  runDir: string;
  keep: boolean;
}

/** After the minimum settle, wait this much longer at most for the target's CPU to go quiet (Strata cut a 3.3M-series block in 15 min). */
const SETTLE_QUIET_MAX_MS = 20 * 60_000;
/** Quiet: under QUIET_CORES for this long in a row. One quiet 2 s sample let a 1M-series run read RSS and time queries during a block cut. */
const QUIET_FOR_MS = 10_000;
const QUIET_CORES = 0.2;
const CATCH_UP_TIMEOUT_MS = 30 * 60_000;

/** Each target's own counters, read from its /metrics after the backfill. */
const COUNTERS: Record<ScaleTargetReport['key'], string[]> = {
  strata: [
    'strata_ingester_active_series',
    'strata_ingester_samples_consumed_total',
    'strata_ingester_samples_appended_total',
    'strata_ingester_samples_rejected_total',
    'strata_distributor_instance_rejected_requests_total',
    'strata_distributor_discarded_samples_total',
  ],
  prometheus: [
    'prometheus_tsdb_head_series',
    'prometheus_tsdb_head_samples_appended_total',
    'prometheus_tsdb_out_of_bound_samples_total',
    'prometheus_tsdb_out_of_order_samples_total',
    'prometheus_tsdb_compactions_total',
  ],
  victoria: ['vm_rows_inserted_total', 'vm_new_timeseries_created_total', 'vm_rows_ignored_total'],
};

/** Runs the scale bench, prints its table and notes, and writes them as JSON into the run directory; returns the JSON's path. */
export async function scaleBench(o: ScaleOptions, live: Set<BenchTarget>, log: (l: string) => void, command: string): Promise<string> {
  const began = Date.now();
  const { plan, reports } = await runScale(o, live, log);
  const span = `${o.spanMs / 3_600_000}h`;
  log(
    `\n== results (${((Date.now() - began) / 60_000).toFixed(1)} min; ${plan.series.toLocaleString('en-US')} series, ${span} backfilled at one sample per ${plan.stepMs / 60_000} min; load now ${loadAverage()})\n`,
  );
  log(renderScaleTable(reports, span));
  log('');
  log(renderScaleNotes(reports));
  const verdict = renderVerdict(reports);
  if (verdict) log(`\nissue 44's scale targets, Strata against Prometheus:\n${verdict}`);
  const path = join(o.runDir, 'scale-result.json');
  // The answers were compared above; they would make the file megabytes long.
  const stripped = reports.map((r) => ({ ...r, queries: r.queries.map(({ answer: _answer, ...q }) => q) }));
  writeFileSync(path, JSON.stringify({ command, machine: machineDescription(), plan, options: o, reports: stripped }, null, 2));
  return path;
}

async function runScale(o: ScaleOptions, live: Set<BenchTarget>, log: (l: string) => void): Promise<{ plan: ScalePlan; reports: ScaleTargetReport[] }> {
  const plan = planScale(o);
  const roundsDir = join(o.runDir, 'rounds');
  mkdirSync(roundsDir, { recursive: true });
  log(
    `scale: ${plan.series.toLocaleString('en-US')} series (${seriesOf(plan).perTarget} per instance, ${8 * plan.cpus} node_cpu_seconds_total each), ${plan.rounds} rounds ` +
      `${plan.stepMs / 60_000} min apart from ${new Date(plan.startTs).toISOString()} to ${new Date(plan.endTs).toISOString()} = ${(plan.series * plan.rounds).toLocaleString('en-US')} samples; ` +
      `${plan.shards} senders × ${plan.samplesPerRequest} samples/request, remote write 1.0; encoding once into ${roundsDir}`,
  );
  const rounds = await encodeRounds(plan, roundsDir, log);
  const reports: ScaleTargetReport[] = [];
  try {
    for (const key of o.targets) reports.push(await scaleTarget(key, plan, rounds, o, live, log));
  } finally {
    if (!o.keep) rmSync(roundsDir, { recursive: true, force: true });
  }
  const prom = reports.find((r) => r.key === 'prometheus');
  for (const r of reports) {
    if (!prom || r === prom) continue;
    r.comparisons = r.queries.map((q, i) => ({ label: q.label, ...compareAnswers(q.answer, prom.queries[i]?.answer) }));
  }
  return { plan, reports };
}

async function startTarget(key: ScaleTargetReport['key'], dir: string, log: (l: string) => void): Promise<BenchTarget> {
  if (key === 'strata') return StrataSingleProcess.start(dir, log);
  if (key === 'prometheus')
    return PrometheusTarget.start(dir, log, { binary: { path: join(PROMETHEUS3_DIR, 'bin', 'prometheus'), name: `Prometheus ${PROMETHEUS3_VERSION}` } });
  return VictoriaMetricsTarget.start(dir, log);
}

async function scaleTarget(
  key: ScaleTargetReport['key'],
  plan: ScalePlan,
  rounds: Round[],
  o: ScaleOptions,
  live: Set<BenchTarget>,
  log: (l: string) => void,
): Promise<ScaleTargetReport> {
  const dir = join(o.runDir, key);
  mkdirSync(dir, { recursive: true });
  const report: ScaleTargetReport = {
    name: key,
    key,
    series: plan.series,
    loadStart: loadAverage(),
    startup: [],
    counters: {},
    queries: [],
    comparisons: [],
    logProblems: { count: 0, first: [] },
  };
  log(`\n== ${key}: starting (load ${report.loadStart})`);
  let target: BenchTarget | undefined;
  try {
    target = await startTarget(key, dir, log);
    live.add(target);
    report.name = target.name;
    const strata = target instanceof StrataSingleProcess ? target : undefined;
    if (strata)
      report.startup = strata
        .logLines(() => true)
        .map(messageOf)
        .filter((m) => /^(memory budget|per-tenant limits \(|V8 heap)/.test(m));
    for (const s of report.startup) log(`  ${s}`);
    await sleep(5000);
    const main = target.memoryProcesses()[0];
    report.rssIdle = rssBytes(main.pid);

    log(`backfill: ${plan.rounds} rounds of ${plan.series.toLocaleString('en-US')} samples into ${target.pushUrl}`);
    const b = await backfill(target, new RoundReader(rounds), {
      plan,
      log,
      exitOf: () => strata?.exited,
      progress: strata
        ? async (acked) => `ingester consumed ${((((await strata.consumedSamples()) ?? 0) / Math.max(1, acked)) * 100).toFixed(1)}% of acknowledged`
        : undefined,
    });
    report.backfill = b;
    report.loadAfterBackfill = loadAverage();
    report.died = b.died;
    log(
      `backfill done: ${b.okSamples.toLocaleString('en-US')} acknowledged in ${b.seconds.toFixed(0)}s = ${Math.round(b.rate).toLocaleString('en-US')}/s, ${b.failedAttempts} failed attempts, ` +
        `no push answered for ${(b.longestSilenceMs / 1000).toFixed(0)}s at most; load ${report.loadAfterBackfill}`,
    );
    if (b.died || b.stalled) return report;

    const ingest = await target.waitIngested(b.okSamples, CATCH_UP_TIMEOUT_MS);
    report.catchUpMs = ingest.waitedMs;
    report.caughtUp = ingest.caughtUp;
    if (strata)
      log(
        `  ingester consumed everything acknowledged ${(ingest.waitedMs / 1000).toFixed(0)}s later${ingest.caughtUp ? '' : ` — NOT: ${ingest.behind} samples behind`}`,
      );

    report.settledMs = await settleQuietly(target, o.settleMs);
    report.rss = rssBytes(main.pid);
    report.peakRss = peakRssBytes(main.pid);
    const kafka = strata?.kafkaProcess();
    if (kafka) {
      report.kafkaRss = rssBytes(kafka.pid);
      report.kafkaPeakRss = peakRssBytes(kafka.pid);
    }
    const metricsBase = strata ? strata.url : target.queryBase;
    for (const name of COUNTERS[key]) report.counters[name] = await metricOf(metricsBase, name);
    log(
      `  settled ${(report.settledMs / 1000).toFixed(0)}s: RSS ${mibOf(report.rss)} MiB = ${Math.round((report.rss ?? 0) / plan.series)} B/series (peak ${mibOf(report.peakRss)} MiB)${kafka ? `; Kafka ${mibOf(report.kafkaRss)} MiB` : ''}; load ${loadAverage()}`,
    );

    for (const q of scaleQueries(plan, seriesOf(plan))) {
      const t = await timeQuery(target, q, plan, o.queryRuns);
      report.queries.push(t);
      log(
        `  ${q.label}: ${q.query}: p50 ${t.p50.toFixed(1)}ms (first ${t.firstRunMs.toFixed(0)}ms), ${t.series} series, ${t.points} points${t.errors ? `, ${t.errors} errors: ${t.firstError}` : ''}`,
      );
    }
    if (target.memoryProcesses().length === 0 || rssBytes(main.pid) === undefined)
      report.died = `pid ${main.pid} gone after the backfill, during the queries${strata?.exited ? ` (${strata.exited})` : ''}`;
  } catch (err) {
    report.error = (err as Error).stack ?? String(err);
    log(`${key} failed: ${report.error}`);
  } finally {
    report.loadEnd = loadAverage();
    report.logProblems = logProblems(key, dir, target);
    if (report.died || report.error) for (const l of lastLines(key, dir, target)) log(`  log: ${l}`);
    if (target) {
      await target.stop().catch(() => target!.killNow());
      target.killNow();
      live.delete(target);
    }
    if (!o.keep) rmSync(join(dir, 'data'), { recursive: true, force: true });
  }
  return report;
}

/**
 * Waits `minMs` (a head-compaction tick), then until the target's processes stay under QUIET_CORES
 * for QUIET_FOR_MS (a block cut or compaction finished), at most SETTLE_QUIET_MAX_MS more.
 */
async function settleQuietly(target: BenchTarget, minMs: number): Promise<number> {
  const began = Date.now();
  await sleep(minMs);
  let quietSince: number | undefined;
  for (const until = Date.now() + SETTLE_QUIET_MAX_MS; Date.now() < until;) {
    const before = snapshotCpu(target.processes());
    await sleep(2000);
    const quiet = sum(cpuDelta(before, snapshotCpu(target.processes())).values()) / 2 < QUIET_CORES;
    quietSince = quiet ? (quietSince ?? Date.now() - 2000) : undefined;
    if (quietSince !== undefined && Date.now() - quietSince >= QUIET_FOR_MS) break;
  }
  return Date.now() - began;
}

function logFileOf(key: ScaleTargetReport['key'], dir: string, target: BenchTarget | undefined): string {
  if (target instanceof StrataSingleProcess) return target.logFile;
  return join(dir, key === 'prometheus' ? 'prometheus.log' : key === 'victoria' ? 'victoria-metrics.log' : 'strata.log');
}

function readLines(file: string): string[] {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '');
  } catch {
    return [];
  }
}

/** Strata logs pino JSON: warn is level 40; a line that is not JSON is V8 or Node speaking (a fatal error). */
function isProblem(key: ScaleTargetReport['key'], line: string): boolean {
  if (key === 'strata') return !line.startsWith('{') || /"level":(40|50|60)/.test(line);
  return /\b(warn|error|fatal|panic)\b/i.test(line);
}

function logProblems(key: ScaleTargetReport['key'], dir: string, target: BenchTarget | undefined): { count: number; first: string[] } {
  const problems = readLines(logFileOf(key, dir, target)).filter((l) => isProblem(key, l));
  const seen = new Set<string>();
  const first: string[] = [];
  for (const l of problems) {
    const msg = key === 'strata' ? messageOf(l) : l;
    const shape = msg.replace(/\d+/g, 'N');
    if (seen.has(shape)) continue;
    seen.add(shape);
    first.push(msg.slice(0, 400));
    if (first.length === 8) break;
  }
  return { count: problems.length, first };
}

function lastLines(key: ScaleTargetReport['key'], dir: string, target: BenchTarget | undefined): string[] {
  return readLines(logFileOf(key, dir, target))
    .slice(-25)
    .map((l) => l.slice(0, 600));
}

/** A pino line's level and msg (the whole line when it is not JSON). */
function messageOf(line: string): string {
  try {
    const j = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string } };
    return `${j.level !== undefined && j.level >= 40 ? `[${j.level}] ` : ''}${j.msg ?? line}${j.err?.message ? `: ${j.err.message}` : ''}`;
  } catch {
    return line;
  }
}

function mibOf(bytes: number | undefined): string {
  return bytes === undefined ? 'n/m' : Math.round(bytes / 2 ** 20).toLocaleString('en-US');
}
