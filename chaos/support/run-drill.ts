// Runs one scenario end to end: cluster (own or shared), steady load with a ledger, probes,
// warm-up, fault, heal, catch-up, drain, exact read-back through the querier and through each
// zone alone, and the report. Never reports a number it did not measure.

import { mkdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { NotApplicableError, type FaultContext, type Scenario } from '../scenarios/scenario.ts';
import { DRILL_TENANT, DrillSeries } from './drill-series.ts';
import { DrillCluster, TOPOLOGY } from './drill-cluster.ts';
import { bucketCensus } from './bucket-census.ts';
import { Ledger } from './ledger.ts';
import { LoadGenerator } from './load.ts';
import { Prober } from './prober.ts';
import { lostOf, readBack, type Comparison } from './read-back.ts';
import { gitCommit, type DrillOutcome, type DrillReport } from './report.ts';
import { seconds, sleep } from './time.ts';

export interface DrillOptions {
  faultSeconds: number;
  warmupSeconds: number;
  /** Load keeps running this long after catch-up, before the drain. */
  afterSeconds: number;
  series: number;
  intervalMs: number;
  groups: number;
  shards: number;
  maxSamplesPerSend: number;
  batchSendDeadlineMs: number;
  settleSeconds: number;
  probeIntervalMs: number;
  probeWindowSeconds: number;
  catchUpTimeoutSeconds: number;
  verifyTimeoutSeconds: number;
  /** Ingesters' block period for the drill (see DrillClusterOptions.blockPeriod); undefined: the product default. */
  blockPeriod: string | undefined;
  /** Each scenario's cluster lives in <dataDir>/<scenario>. */
  dataDir: string;
  log: (line: string) => void;
}

export const DEFAULT_DRILL_OPTIONS: Omit<DrillOptions, 'dataDir' | 'log'> = {
  faultSeconds: 60,
  warmupSeconds: 20,
  afterSeconds: 10,
  series: 1000,
  intervalMs: 500,
  groups: 20,
  shards: 4,
  maxSamplesPerSend: 500,
  batchSendDeadlineMs: 1000,
  settleSeconds: 5,
  probeIntervalMs: 250,
  probeWindowSeconds: 60,
  catchUpTimeoutSeconds: 300,
  verifyTimeoutSeconds: 90,
  blockPeriod: '30s',
};

export interface RunHooks {
  /** Called with a cluster this run started, so a Ctrl-C handler can stop it. */
  onCluster?(cluster: DrillCluster | undefined): void;
}

export async function runDrill(scenario: Scenario, opts: DrillOptions, shared?: DrillCluster, hooks: RunHooks = {}): Promise<DrillReport> {
  const began = Date.now();
  const events: { at_seconds: number; what: string }[] = [];
  const event = (what: string): void => {
    events.push({ at_seconds: seconds(Date.now() - began), what });
    opts.log(`[${scenario.name}] ${what}`);
  };
  const base = {
    scenario: scenario.name,
    description: scenario.description,
    started_at: new Date(began).toISOString(),
    commit: gitCommit(),
    // The box is shared: its load explains slow catch-ups better than the product does.
    host: { cpus: cpus().length, load_average_at_start: loadavg().map((l) => Math.round(l * 100) / 100) },
    topology: {
      ...TOPOLOGY,
      redis: (shared?.redisServers() ?? []).map((r) => `${r.role} on ${r.server.endpoint}`),
      block_period: opts.blockPeriod ?? 'product default',
    },
  };
  const finish = (r: DrillOutcome & Record<string, unknown>): DrillReport => ({
    ...base,
    ...r,
    finished_at: new Date().toISOString(),
    duration_seconds: seconds(Date.now() - began),
    load_average_at_end: loadavg().map((l) => Math.round(l * 100) / 100),
    events,
  });
  const notApplicable = (reason: string): DrillReport =>
    finish({
      status: 'not_applicable',
      findings: [reason],
      acked_samples: null,
      lost_samples: null,
      query_availability: null,
      catch_up_seconds: null,
      fault_seconds: null,
      longest_push_stall_ms: null,
    });

  const reason = scenario.notApplicable?.();
  if (reason !== undefined) {
    event(`not applicable: ${reason}`);
    if (scenario.standalone) {
      const dataDir = join(opts.dataDir, scenario.name);
      mkdirSync(dataDir, { recursive: true });
      await scenario.standalone({ dataDir, event });
    }
    return notApplicable(reason);
  }

  let cluster = shared;
  let load: LoadGenerator | undefined;
  let prober: Prober | undefined;
  try {
    if (cluster === undefined) {
      event('starting the cluster (3 Kafka brokers, 2 distributors, 2 zones x 2 ingesters, querier)');
      cluster = await DrillCluster.start({ dataDir: join(opts.dataDir, scenario.name), log: opts.log, blockPeriod: opts.blockPeriod });
      hooks.onCluster?.(cluster);
      event('cluster ready');
      base.topology.redis = cluster.redisServers().map((r) => `${r.role} on ${r.server.endpoint}`);
    }
    const c = cluster;
    const series = new DrillSeries(`${scenario.name}-${began.toString(36)}`, opts.series, opts.groups);
    const ledger = new Ledger(opts.series);
    load = new LoadGenerator({
      series,
      ledger,
      tenant: DRILL_TENANT,
      distributors: () => c.distributorUrls(),
      intervalMs: opts.intervalMs,
      shards: opts.shards,
      maxSamplesPerSend: opts.maxSamplesPerSend,
      batchSendDeadlineMs: opts.batchSendDeadlineMs,
      minBackoffMs: 30,
      maxBackoffMs: 5000,
      pushTimeoutMs: 30_000,
    });
    prober = new Prober({
      querierUrl: () => c.querierUrl,
      tenant: DRILL_TENANT,
      series,
      ledger,
      settleMs: opts.settleSeconds * 1000,
      windowMs: opts.probeWindowSeconds * 1000,
      sampleIntervalMs: opts.intervalMs,
      intervalMs: opts.probeIntervalMs,
      timeoutMs: 15_000,
    });
    load.start();
    prober.start('warmup');
    event(
      `load started: ${opts.series} series every ${opts.intervalMs}ms (${Math.round((opts.series * 1000) / opts.intervalMs)} samples/s) over ${c.distributorUrls().length} distributors`,
    );
    await sleep(opts.warmupSeconds * 1000);
    const warm = prober.stats('warmup');
    if (ledger.acked === 0)
      throw new Error(`no sample was acknowledged during the ${opts.warmupSeconds}s warm-up: ${JSON.stringify(load.stats().push_errors)}`);
    event(`warm-up done: ${ledger.acked} samples acked, probes ${warm.ok}/${warm.total} ok`);

    // Fault.
    const p = prober;
    let healAt: number | undefined;
    const faultAt = Date.now();
    p.setPhase('fault');
    const markHeal = (): void => {
      if (healAt !== undefined) return;
      healAt = Date.now();
      p.setPhase('catch-up');
      event('healing');
    };
    const ctx: FaultContext = { cluster: c, faultSeconds: opts.faultSeconds, event, markHeal, sleep };
    event(`fault: ${scenario.description}`);
    try {
      await scenario.run(ctx);
    } catch (err) {
      if (err instanceof NotApplicableError) {
        event(`not applicable: ${err.message}`);
        return notApplicable(err.message);
      }
      throw err;
    }
    markHeal();
    const healedAt = healAt!;
    const faultSeconds = seconds(healedAt - faultAt);

    // Catch-up: every process ready and everything acked before the heal readable.
    const catchUp = await waitCaughtUp(c, series, ledger, healedAt, opts, (detail) => event(`catching up: ${detail}`));
    event(catchUp.seconds === null ? `not caught up after ${opts.catchUpTimeoutSeconds}s: ${catchUp.detail}` : `caught up ${catchUp.seconds}s after the heal`);
    p.setPhase('after');
    await sleep(opts.afterSeconds * 1000);

    event('stopping load and draining the senders');
    await load.drain(60_000);
    await p.stop();
    const loadStats = load.stats();
    event(`load stopped: ${loadStats.acked_samples} acked, ${loadStats.unacked_samples} never acked, ${loadStats.rejected_samples} rejected`);

    // Exact read-back of every acked sample: through the querier, then each zone alone.
    const viaQuerier = await verify(c.querierUrl, series, ledger, opts);
    event(`read-back via querier: ${describe(viaQuerier)}`);
    const byZone: Record<string, VerifyResult> = {};
    for (const [zone, q] of c.zoneQueriers) {
      byZone[zone] = await verify(q.url, series, ledger, opts);
      event(`read-back via zone ${zone} only: ${describe(byZone[zone])}`);
    }

    const bucketDir = c.bucketDir();
    const bucket = bucketDir === undefined ? null : bucketCensus(bucketDir);
    if (bucket !== null) {
      event(
        `bucket: ${bucket.complete_blocks} complete blocks, ${bucket.blocks_without_meta.length} without meta.json, ${bucket.stray_temp_entries.length} stray temp entries`,
      );
    }
    const metrics = await c.metrics([
      'strata_querier_results_cache_requests_total',
      'strata_ingester_samples_rejected_total',
      'strata_ingester_blocks_',
      'strata_ingester_block_upload_failures_total',
      'strata_ingester_kafka_committed_offset',
    ]);

    const findings: string[] = [];
    const lost = viaQuerier.comparison ? lostOf(viaQuerier.comparison) : null;
    if (lost === null) findings.push(`could not read back acked samples: ${viaQuerier.error}`);
    else if (lost > 0) findings.push(`${lost} acknowledged samples lost or wrong (first: ${JSON.stringify(viaQuerier.comparison!.examples[0])})`);
    for (const [zone, r] of Object.entries(byZone)) {
      if (!r.comparison) findings.push(`zone ${zone} alone could not be read back: ${r.error}`);
      else if (lostOf(r.comparison) > 0) findings.push(`zone ${zone} alone is missing ${lostOf(r.comparison)} acknowledged samples`);
    }
    const failed = findings.length > 0;
    for (const [name, r] of [['the querier', viaQuerier], ...Object.entries(byZone).map(([z, r]): [string, VerifyResult] => [`zone ${z} alone`, r])] as [
      string,
      VerifyResult,
    ][]) {
      if (r.comparison && r.comparison.duplicate_points > 0) findings.push(`${name} answered ${r.comparison.duplicate_points} points twice`);
    }
    const faultProbes = p.stats('fault');
    if (catchUp.seconds === null) findings.push(`not caught up within ${opts.catchUpTimeoutSeconds}s (${catchUp.detail})`);
    if (scenario.availabilityTarget !== undefined && faultProbes.availability !== null && faultProbes.availability < scenario.availabilityTarget) {
      findings.push(`query availability ${faultProbes.availability} < ${scenario.availabilityTarget} during the fault`);
    }
    if (loadStats.rejected_samples > 0) findings.push(`${loadStats.rejected_samples} samples rejected with a non-retriable status`);

    return finish({
      status: failed ? 'fail' : findings.length > 0 ? 'degraded' : 'pass',
      findings,
      acked_samples: ledger.acked,
      lost_samples: lost,
      query_availability: faultProbes.availability,
      catch_up_seconds: catchUp.seconds,
      fault_seconds: faultSeconds,
      longest_push_stall_ms: loadStats.longest_push_stall_ms,
      availability_target: scenario.availabilityTarget ?? null,
      load: {
        series: opts.series,
        interval_ms: opts.intervalMs,
        shards: opts.shards,
        max_samples_per_send: opts.maxSamplesPerSend,
        ...loadStats,
      },
      probes: {
        settle_seconds: opts.settleSeconds,
        window_seconds: opts.probeWindowSeconds,
        interval_ms: opts.probeIntervalMs,
        warmup: p.stats('warmup'),
        fault: faultProbes,
        catch_up: p.stats('catch-up'),
        after: p.stats('after'),
      },
      catch_up_detail: catchUp.detail,
      bucket,
      metrics,
      verification: { querier: viaQuerier, ...Object.fromEntries(Object.entries(byZone).map(([z, r]) => [`zone_${z}_only`, r])) },
    });
  } catch (err) {
    const e = err as Error;
    event(`drill error: ${e.stack ?? e.message}`);
    return finish({
      status: 'error',
      findings: [`drill error: ${e.message}`],
      acked_samples: null,
      lost_samples: null,
      query_availability: null,
      catch_up_seconds: null,
      fault_seconds: null,
      longest_push_stall_ms: load?.stats().longest_push_stall_ms ?? null,
      load: load?.stats(),
    });
  } finally {
    await load?.drain(0).catch(() => undefined);
    await prober?.stop().catch(() => undefined);
    if (shared === undefined && cluster !== undefined) {
      await cluster.stop();
      hooks.onCluster?.(undefined);
    }
  }
}

/**
 * Catch-up is over when every process answers /ready and every sample acked before the heal reads
 * back exactly through the querier and through each zone alone (so a restarted zone counts only
 * once it holds everything again, not while the other zone covers for it).
 */
async function waitCaughtUp(
  cluster: DrillCluster,
  series: DrillSeries,
  ledger: Ledger,
  healAt: number,
  opts: DrillOptions,
  progress: (detail: string) => void,
): Promise<{ seconds: number | null; detail: string }> {
  const deadline = healAt + opts.catchUpTimeoutSeconds * 1000;
  const readers: [string, () => string][] = [
    ['querier', () => cluster.querierUrl],
    ...[...cluster.zoneQueriers].map(([zone, q]): [string, () => string] => [`zone ${zone} alone`, () => q.url]),
  ];
  let detail = '';
  let reported = '';
  for (;;) {
    // Say what catch-up waits for whenever that changes (numbers aside), so the report explains its length.
    const kind = detail.replace(/\d+/g, 'N');
    if (detail !== '' && kind !== reported) {
      reported = kind;
      progress(detail);
    }
    const notReady = await cluster.notReady();
    if (notReady.length > 0) detail = `not ready: ${notReady.join(', ')}`;
    else {
      let complete = true;
      let checked = 0;
      for (const [name, url] of readers) {
        const r = await readBack({ querierUrl: url(), tenant: DRILL_TENANT, series, ledger, ackedBy: healAt, timeoutMs: 30_000 });
        if (!r.ok || lostOf(r.comparison) > 0) {
          complete = false;
          detail = r.ok
            ? `via ${name}: ${lostOf(r.comparison)} of ${r.comparison.checked} samples acked before the heal not readable yet`
            : `via ${name}: ${r.reason}`;
          break;
        }
        checked = r.comparison.checked;
      }
      if (complete) {
        return {
          seconds: seconds(Date.now() - healAt),
          detail: `${checked} samples acked before the heal read back exactly via the querier and each zone alone`,
        };
      }
    }
    if (Date.now() > deadline) return { seconds: null, detail };
    await sleep(500);
  }
}

interface VerifyResult {
  comparison?: Comparison;
  error?: string;
  attempts: number;
  seconds: number;
}

/** Reads everything back, retrying while ingestion finishes, up to verifyTimeoutSeconds. */
async function verify(url: string, series: DrillSeries, ledger: Ledger, opts: DrillOptions): Promise<VerifyResult> {
  const began = Date.now();
  const deadline = began + opts.verifyTimeoutSeconds * 1000;
  let last: VerifyResult = { attempts: 0, seconds: 0 };
  for (let attempt = 1; ; attempt++) {
    const r = await readBack({ querierUrl: url, tenant: DRILL_TENANT, series, ledger });
    last = r.ok
      ? { comparison: r.comparison, attempts: attempt, seconds: seconds(Date.now() - began) }
      : { error: r.reason, attempts: attempt, seconds: seconds(Date.now() - began) };
    if ((r.ok && lostOf(r.comparison) === 0) || Date.now() > deadline) return last;
    await sleep(1000);
  }
}

function describe(r: VerifyResult): string {
  if (!r.comparison) return `failed after ${r.attempts} attempts: ${r.error}`;
  const c = r.comparison;
  return `${c.checked} acked samples checked, ${c.missing} missing, ${c.mismatched} wrong, ${c.duplicate_points} duplicated, ${c.unacked_present} unacked present (${r.attempts} attempts)`;
}
