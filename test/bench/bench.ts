// `npm run bench`: the same remote-write load against Strata's full pipeline,
// Prometheus 2.42 and VictoriaMetrics 1.79, one after the other, and one table
// with ratios to Prometheus. Every process is started here, on loopback, and
// killed by pid at the end, on failure and on Ctrl-C. Never a test: no asserts.
//
//   npm run bench -- [--quick] [--series 100000] [--targets strata,prometheus,victoria]
//   npm run bench -- --soak 30m            (Strata, ½ max rate with churn, RSS and p99 per minute)
//   npm run bench -- --strata-args '-blocks-storage.tsdb.block-ranges-period=10m' ...  (extra Strata flags)
//   npm run bench -- --profile [--rate N]  (Strata under node --cpu-prof, heap snapshot of one ingester,
//                                          what lived into the old generation and the GCs per process)
//   npm run bench -- --reshard false      (½ max at the search's shard count, not at the one Prometheus settles at)
//   npm run bench -- --scale 6h --series 3300000 [--scale-step 15m] [--cpus 14] [--settle 60s]  (scale.ts: one process
//                                          backfilled with the span: ingest, RSS per series, span-long queries)

import { existsSync, mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { formatSummary, summariseProfile, type CpuProfile } from './cpuprofile.ts';
import { formatAllocations, summariseAllocations, type GcCounts } from './alloc-profile.ts';
import type { Protocol } from './encode.ts';
import { formatHeap, formatHeapGrowth, summariseHeapFile } from './heap-snapshot.ts';
import { LoadGenerator, formatPhase, parseChurn, parseDuration } from './loadgen.ts';
import { measuredPhase, queryPhase, replayPhase, searchMaxRate, soakPhase, steadyPhase, type SearchConfig } from './phases.ts';
import { loadAverage, machineDescription, rssBytes, sum } from './proc-stats.ts';
import { renderNotes, renderTable, type TargetReport } from './report.ts';
import { scaleBench } from './scale.ts';
import { sleep } from './sender.ts';
import { heapSizeMiB, memoryBudget } from '@strata/service';
import { PrometheusTarget, StrataTarget, VictoriaMetricsTarget, type BenchTarget } from './targets.ts';

type TargetKey = 'strata' | 'prometheus' | 'victoria';

interface Options {
  quick: boolean;
  targets: TargetKey[];
  series: number;
  wide: number;
  protocol: Protocol;
  /** Most shards the sender uses (the search sends one full request per shard-second up to this). */
  shards: number;
  /** The ½-max phase first reshards as Prometheus would (--reshard false: the search's shard count). */
  reshard: boolean;
  samplesPerRequest: number;
  partitions: number;
  search: SearchConfig;
  /** Skip the search: this is the max rate. */
  rate?: number;
  halfMs: number;
  queryRuns: number;
  replayDownMs: number;
  soakMs: number;
  /** Extra flags for every Strata process (--strata-args '-flag=x ...'), e.g. a short block range for the soak. */
  strataArgs: string[];
  churn: { share: number; everyMs: number };
  profile: boolean;
  profileMs: number;
  maxSamplesPerWindow: number;
  dataDir?: string;
  keep: boolean;
  json?: string;
  /** --scale: the span backfilled (0: not a scale run). */
  scaleMs: number;
  scaleStepMs: number;
  cpus: number;
  settleMs: number;
}

function parseArgs(argv: string[]): Options {
  const a = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) throw new Error(`unexpected argument ${arg}; options start with --`);
    const [k, inline] = arg.slice(2).split(/=(.*)/s, 2);
    a.set(k, inline ?? (argv[i + 1] !== undefined && !argv[i + 1].startsWith('--') ? argv[++i] : 'true'));
  }
  const known = new Set([
    'quick',
    'targets',
    'series',
    'wide',
    'protocol',
    'shards',
    'samples-per-request',
    'partitions',
    'start-rate',
    'max-rate',
    'step',
    'search-budget',
    'latency-limit',
    'step-retries',
    'rate',
    'half',
    'query-runs',
    'replay-down',
    'soak',
    'churn',
    'profile',
    'profile-duration',
    'data-dir',
    'keep',
    'json',
    'help',
    'strata-args',
    'reshard',
    'scale',
    'scale-step',
    'cpus',
    'settle',
  ]);
  for (const k of a.keys()) if (!known.has(k)) throw new Error(`unknown option --${k}; known: ${[...known].map((x) => '--' + x).join(' ')}`);
  if (a.has('help')) {
    console.log(
      readFileSync(new URL(import.meta.url), 'utf8')
        .split('\n')
        .slice(0, 13)
        .join('\n'),
    );
    process.exit(0);
  }
  const quick = a.get('quick') === 'true';
  const num = (k: string, d: number) => (a.has(k) ? Number(a.get(k)) : d);
  const dur = (k: string, d: string) => parseDuration(a.get(k) ?? d);
  const soakMs = a.has('soak') ? parseDuration(a.get('soak') === 'true' ? '30m' : a.get('soak')!) : 0;
  const profile = a.get('profile') === 'true';
  const defaultTargets = soakMs > 0 || profile ? 'strata' : 'strata,prometheus,victoria';
  const targets = (a.get('targets') ?? defaultTargets).split(',').map((t) => t.trim()) as TargetKey[];
  for (const t of targets) if (!['strata', 'prometheus', 'victoria'].includes(t)) throw new Error(`unknown target ${t}`);
  const scaleMs = a.has('scale') ? parseDuration(a.get('scale') === 'true' ? '6h' : a.get('scale')!) : 0;
  const protocol = a.get('protocol') ?? 'v1';
  if (protocol !== 'v1' && protocol !== 'v2') throw new Error('--protocol is v1 or v2');
  return {
    quick,
    targets,
    series: num('series', quick ? 20_000 : 100_000),
    wide: num('wide', 1),
    protocol,
    // The scale run sends as the report that asked for it did: 8 senders.
    shards: num('shards', scaleMs > 0 ? 8 : 64),
    reshard: a.get('reshard') !== 'false',
    samplesPerRequest: num('samples-per-request', 2000),
    partitions: num('partitions', 1),
    search: {
      startRate: num('start-rate', quick ? 20_000 : 100_000),
      maxRate: num('max-rate', 3_000_000),
      stepMs: dur('step', quick ? '5s' : '20s'),
      maxSamplesPerStep: quick ? 2_000_000 : 6_000_000,
      budgetMs: dur('search-budget', quick ? '35s' : '240s'),
      latencyLimitMs: num('latency-limit', 2000),
      retries: num('step-retries', 1),
    },
    rate: a.has('rate') ? Number(a.get('rate')) : undefined,
    halfMs: dur('half', quick ? '12s' : '45s'),
    queryRuns: num('query-runs', quick ? 5 : 10),
    replayDownMs: dur('replay-down', quick ? '15s' : '90s'),
    soakMs,
    churn: parseChurn(a.get('churn') ?? '5%/10m'),
    profile,
    profileMs: dur('profile-duration', quick ? '20s' : '60s'),
    maxSamplesPerWindow: quick ? 1_000_000 : 3_000_000,
    dataDir: a.get('data-dir'),
    keep: a.get('keep') === 'true',
    json: a.get('json'),
    strataArgs: (a.get('strata-args') ?? '').split(' ').filter(Boolean),
    scaleMs,
    scaleStepMs: dur('scale-step', '15m'),
    // 14 CPUs: one instance's node_cpu_seconds_total is 112 series.
    cpus: num('cpus', 14),
    settleMs: dur('settle', '60s'),
  };
}

/** With --rate (no search), a phase at ½ max this long first creates the series and warms the code. */
const WARM_UP_MS = 15_000;

/**
 * The search would have created every series and warmed the JIT before the measured phase; without
 * it the phase would measure series creation and cold code instead of the steady state.
 */
async function warmUp(target: BenchTarget, gen: LoadGenerator, acked: { total: number }, rate: number): Promise<void> {
  const warm = await measuredPhase(target, gen, acked, rate, WARM_UP_MS, 60_000);
  log(`warm-up (not counted): ${formatPhase(warm.result)}`);
}

const log = (l: string) => console.log(l);
const live = new Set<BenchTarget>();
let runDir = '';
let keepDir = false;

function cleanupNow(): void {
  for (const t of live) t.killNow();
  live.clear();
  if (runDir && !keepDir) rmSync(runDir, { recursive: true, force: true });
}

async function startTarget(key: TargetKey, dir: string, o: Options): Promise<BenchTarget> {
  mkdirSync(dir, { recursive: true });
  if (key === 'strata') return StrataTarget.start({ dataDir: dir, partitions: o.partitions, log, extraArgs: o.strataArgs });
  if (key === 'prometheus') return PrometheusTarget.start(dir, log);
  return VictoriaMetricsTarget.start(dir, log);
}

function newGenerator(t: BenchTarget, o: Options, churn: boolean): LoadGenerator {
  return new LoadGenerator({
    url: t.pushUrl,
    headers: t.headers,
    // Prometheus 2.42 and VictoriaMetrics 1.79 only receive remote write 1.0.
    protocol: t.key === 'strata' ? o.protocol : 'v1',
    series: o.series,
    wide: o.wide,
    shards: o.shards,
    samplesPerRequest: o.samplesPerRequest,
    churnShare: churn ? o.churn.share : undefined,
    churnEveryMs: churn ? o.churn.everyMs : undefined,
  });
}

async function benchTarget(key: TargetKey, o: Options): Promise<TargetReport> {
  const report: TargetReport = { name: key, key, protocol: key === 'strata' ? o.protocol : 'v1', loadStart: loadAverage() };
  log(`\n== ${key}: starting (load ${report.loadStart})`);
  let target: BenchTarget | undefined;
  let gen: LoadGenerator | undefined;
  try {
    target = await startTarget(key, join(runDir, key), o);
    live.add(target);
    report.name = target.name;
    await sleep(3000);
    const rssIdle = sum(target.memoryProcesses().map((p) => rssBytes(p.pid) ?? 0));
    gen = newGenerator(target, o, o.soakMs > 0);
    const acked = { total: 0 };
    log(
      `${target.name}: ${gen.series} series, remote write ${report.protocol}, up to ${o.shards} shards (one full request per shard-second${o.reshard ? "; at ½ max the count Prometheus' resharding settles at" : ''}) × ${o.samplesPerRequest} samples/request; push ${target.pushUrl}`,
    );

    let maxRate: number;
    if (o.rate !== undefined) {
      maxRate = o.rate;
      log(`max rate given: ${maxRate}/s (no search)`);
      await warmUp(target, gen, acked, maxRate / 2);
    } else {
      log(`searching the max rate from ${o.search.startRate}/s (steps ≤ ${o.search.stepMs / 1000}s, budget ${o.search.budgetMs / 1000}s):`);
      report.search = await searchMaxRate(target, gen, acked, o.search, log);
      maxRate = report.search.maxRate;
      log(`max sustained: ${Math.round(maxRate)}/s`);
    }
    const half = Math.max(1000, maxRate / 2);

    if (o.soakMs > 0) {
      log(`soak: ${o.soakMs / 60_000} min at ${Math.round(half)}/s with churn ${o.churn.share * 100}% of targets every ${o.churn.everyMs / 1000}s`);
      const soak = await soakPhase(target, gen, acked, half, o.soakMs, o.maxSamplesPerWindow, log);
      log(`soak done: ${formatPhase(soak.result)}`);
      log(
        `soak trend (minutes ${soak.minutes.length >= 5 ? 3 : 1}..${soak.minutes.length}): RSS ${soak.rssSlopeMBPerMin.toFixed(2)} MiB/min, p99 ${soak.p99SlopeMsPerMin.toFixed(2)} ms/min ` +
          `(RSS ${(soak.minutes.at(-1)!.rssMemoryProcesses / 2 ** 20).toFixed(0)} MiB at the end; load ${loadAverage()})`,
      );
      report.loadEnd = loadAverage();
      return report;
    }

    log(`steady at ½ max: ${Math.round(half)}/s for ${o.halfMs / 1000}s`);
    report.steady = await steadyPhase(target, gen, acked, half, o.halfMs, rssIdle, o.maxSamplesPerWindow, o.reshard, log);
    log(
      `  ${formatPhase(report.steady.result)} | cpu ${report.steady.cpuSeconds.toFixed(1)}s | settled ${(report.steady.settledMs / 1000).toFixed(1)}s before | load ${report.steady.load}`,
    );
    if (report.steady.breakdown) log(`  ${report.steady.breakdown}`);

    log(`queries (${o.queryRuns} runs each, evaluated at the last sample time):`);
    report.queries = await queryPhase(target, report.steady.result.lastTs, 5 * 60_000, o.queryRuns);
    for (const q of report.queries.perQuery)
      log(`  ${q.query}: p50 ${q.p50.toFixed(1)}ms p99 ${q.p99.toFixed(1)}ms (${q.results} series${q.errors ? `, ${q.errors} errors: ${q.firstError}` : ''})`);

    report.samplesWritten = acked.total;
    report.disk = await target.disk();
    for (const d of report.disk)
      log(
        `  disk: ${d.what}: ${d.bytes === undefined ? 'not measured' : `${d.bytes} B = ${(d.bytes / acked.total).toFixed(2)} B/sample`}${d.note ? ` (${d.note})` : ''}`,
      );

    if (target instanceof StrataTarget && o.replayDownMs > 0) {
      report.replay = await replayPhase(target, gen, acked, half, o.replayDownMs, o.maxSamplesPerWindow, log);
      const r = report.replay;
      log(
        `  replay: ${r.replayedSamples} samples in ${(r.replayMs / 1000).toFixed(1)}s = ${Math.round(r.replayRate)}/s vs live ${Math.round(r.liveRatePerIngester)}/s per ingester → ${r.ratio.toFixed(1)}×`,
      );
    }
  } catch (err) {
    report.error = (err as Error).stack ?? String(err);
    log(`${key} failed: ${report.error}`);
  } finally {
    report.loadEnd = loadAverage();
    await gen?.close().catch(() => undefined);
    if (target) {
      await target.stop().catch(() => target!.killNow());
      target.killNow();
      live.delete(target);
    }
  }
  return report;
}

async function profileStrata(o: Options): Promise<void> {
  const profDir = join(runDir, 'profiles');
  mkdirSync(profDir, { recursive: true });
  // Node 20 refuses --cpu-prof in NODE_OPTIONS: a preloaded module runs the profiler instead. The heap is
  // sized here as the memory budget would size it: a process re-executing itself for that loses its profiler.
  const saved = process.env.NODE_OPTIONS;
  const preload = `--import=${new URL('./profiler-preload.mjs', import.meta.url).pathname}`;
  process.env.NODE_OPTIONS = [saved, `--max-old-space-size=${heapSizeMiB(memoryBudget(0))}`, preload].filter(Boolean).join(' ');
  process.env.STRATA_BENCH_PROFILE_DIR = profDir;
  let target: StrataTarget;
  try {
    target = await StrataTarget.start({ dataDir: join(runDir, 'strata'), partitions: o.partitions, log, extraArgs: o.strataArgs });
  } finally {
    if (saved === undefined) delete process.env.NODE_OPTIONS;
    else process.env.NODE_OPTIONS = saved;
    delete process.env.STRATA_BENCH_PROFILE_DIR;
  }
  live.add(target);
  const names = new Map<number, string>();
  for (const p of target.processes()) names.set(p.pid, p.name);
  const gen = newGenerator(target, o, false);
  const acked = { total: 0 };
  const ing = target.cluster.process('ingester-zone-a-0');
  try {
    // An idle snapshot first: the loaded one minus it is what the series cost.
    process.kill(ing.pid!, 'SIGUSR2');
    const idleHeap = await waitForStableFile(profDir, (f) => f === `Heap.${ing.pid}.1.heapsnapshot`, 120_000);
    let rate = o.rate;
    if (rate !== undefined) await warmUp(target, gen, acked, rate);
    else {
      const s = await searchMaxRate(target, gen, acked, { ...o.search, budgetMs: Math.min(o.search.budgetMs, 60_000) }, log);
      rate = Math.max(5000, s.maxRate * 0.7);
    }
    log(`profiling under ${Math.round(rate)}/s for ${o.profileMs / 1000}s`);
    // The old-generation view (see profiler-preload.mjs) covers the steady phase only.
    for (const [pid, name] of names) if (!name.startsWith('kafka')) process.kill(pid, 'SIGURG');
    const fromUs = Number(process.hrtime.bigint() / 1000n);
    const steady = await steadyPhase(target, gen, acked, rate, o.profileMs, 0, o.maxSamplesPerWindow, false, log);
    const toUs = Number(process.hrtime.bigint() / 1000n);
    if (steady.breakdown) log(`  ${steady.breakdown}`);
    log(
      `  ${formatPhase(steady.result)} | cpu ${steady.cpuSeconds.toFixed(1)}s (${Object.entries(steady.cpuByProcess)
        .map(([k, v]) => `${k} ${v.toFixed(1)}s`)
        .join(', ')}) | load ${steady.load}`,
    );
    const series = await target.activeSeries('a');
    log(`heap snapshot of ${ing.name} (pid ${ing.pid}, ${series} series, RSS ${((rssBytes(ing.pid!) ?? 0) / 2 ** 20).toFixed(0)} MiB)`);
    process.kill(ing.pid!, 'SIGUSR2');
    const heapFile = await waitForStableFile(profDir, (f) => f === `Heap.${ing.pid}.2.heapsnapshot`, 300_000);
    await target.stop();
    live.delete(target);
    await sleep(1000);
    for (const f of readdirSync(profDir)
      .filter((x) => x.endsWith('.cpuprofile'))
      .sort()) {
      const pid = Number(f.split('.')[1]);
      const name = names.get(pid);
      if (!name) continue;
      // Only the steady phase counts: startup (module loading, JIT) and the search are left out.
      const summary = summariseProfile(JSON.parse(readFileSync(join(profDir, f), 'utf8')) as CpuProfile, name === 'querier' ? 5 : 15, { fromUs, toUs });
      log('\n' + formatSummary(`${name} (${f})`, summary));
    }
    for (const f of readdirSync(profDir)
      .filter((x) => x.startsWith('Alloc.'))
      .sort()) {
      const pid = Number(f.split('.')[1]);
      const name = names.get(pid);
      if (!name) continue;
      const gcFile = join(profDir, `GC.${pid}.json`);
      const gc = existsSync(gcFile) ? (JSON.parse(readFileSync(gcFile, 'utf8')) as GcCounts) : undefined;
      const allocations = summariseAllocations(
        (JSON.parse(readFileSync(join(profDir, f), 'utf8')) as { head: Parameters<typeof summariseAllocations>[0] }).head,
        8,
      );
      log('\n' + formatAllocations(name, allocations, (toUs - fromUs) / 1e6, gc));
    }
    if (heapFile) {
      try {
        const loaded = summariseHeapFile(join(profDir, heapFile));
        log('\n' + `${ing.name} ` + formatHeap(loaded, series, 10));
        if (idleHeap) log('\n' + `${ing.name} ` + formatHeapGrowth(summariseHeapFile(join(profDir, idleHeap)), loaded, series));
      } catch (err) {
        log(`heap snapshot not summarised: ${(err as Error).message}`);
      }
    } else log('no heap snapshot was written');
    log(`\nprofiles kept in ${profDir}`);
    keepDir = true;
  } finally {
    await gen.close();
    target.killNow();
    live.delete(target);
  }
}

async function waitForStableFile(dir: string, match: (f: string) => boolean, timeoutMs: number): Promise<string | undefined> {
  const deadline = Date.now() + timeoutMs;
  let last = -1;
  let stableSince = 0;
  while (Date.now() < deadline) {
    const f = readdirSync(dir).find(match);
    if (f) {
      const size = statSync(join(dir, f)).size;
      if (size === last && size > 0) {
        if (Date.now() - stableSince > 3000) return f;
      } else {
        last = size;
        stableSince = Date.now();
      }
    }
    await sleep(500);
  }
  return undefined;
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  runDir = o.dataDir ?? mkdtempSync(join(tmpdir(), 'strata-bench-'));
  mkdirSync(runDir, { recursive: true });
  keepDir = o.keep;
  const onSignal = (sig: string) => {
    console.error(`\nbench: ${sig}; killing every process it started`);
    cleanupNow();
    process.exit(130);
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('exit', () => cleanupNow());

  const began = performance.now();
  const command = `npm run bench --${process.argv
    .slice(2)
    .map((x) => ' ' + x)
    .join('')}`;
  log(`strata bench: ${command}`);
  log(`machine: ${machineDescription()}; load average ${loadAverage()} (1/5/15 min) — a shared machine makes every figure noisy`);
  log(`data: ${runDir}`);

  if (o.profile) {
    await profileStrata(o);
    return;
  }
  if (o.scaleMs > 0) {
    const scale = {
      targets: o.targets,
      series: o.series,
      cpus: o.cpus,
      spanMs: o.scaleMs,
      stepMs: o.scaleStepMs,
      shards: o.shards,
      samplesPerRequest: o.samplesPerRequest,
      settleMs: o.settleMs,
      queryRuns: o.queryRuns,
      runDir,
      keep: o.keep,
    };
    const json = await scaleBench(scale, live, log, command);
    keepDir = true;
    log(`\nfull results: ${json} (logs beside it)`);
    return;
  }
  const reports: TargetReport[] = [];
  for (const key of o.targets) reports.push(await benchTarget(key, o));
  if (o.soakMs > 0) return;

  log(`\n== results (${((performance.now() - began) / 60_000).toFixed(1)} min; ${o.quick ? 'quick' : 'full'} run; ${o.series * o.wide} series)\n`);
  log(renderTable(reports));
  log('');
  log(renderNotes(reports));
  const jsonPath = o.json ?? join(runDir, 'bench-result.json');
  writeFileSync(jsonPath, JSON.stringify({ command, machine: machineDescription(), options: o, reports }, null, 2));
  if (!o.json) keepDir = true;
  log(`\nfull results: ${jsonPath}`);
  if (reports.some((r) => r.error)) log(`a target failed: its data and logs are kept under ${runDir}`);
  else if (!o.keep && !o.json) {
    // Keep only the JSON: the data directories are large.
    for (const key of o.targets) rmSync(join(runDir, key), { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    console.error(`bench failed: ${err.stack ?? err.message}`);
    cleanupNow();
    process.exit(1);
  },
);
