// `npm run drill -- <scenario|all> [flags]`: failure drills against a local Strata cluster on
// loopback, each ending in a zero-loss verdict written to chaos/reports/. Exits non-zero if any
// acknowledged sample was lost (or could not be read back). Every process it starts, it stops.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { SCENARIOS, scenarioByName, type Scenario } from './scenarios/index.ts';
import { DrillCluster } from './support/drill-cluster.ts';
import { DEFAULT_REPORTS_DIR, summaryRow, writeReport, type DrillReport } from './support/report.ts';
import { DEFAULT_DRILL_OPTIONS, runDrill, type DrillOptions } from './support/run-drill.ts';

const USAGE = `usage: npm run drill -- <scenario|all> [flags]

scenarios:
${SCENARIOS.map((s) => `  ${s.name.padEnd(24)} ${s.description}`).join('\n')}
  all                      every scenario in turn, a fresh cluster each

flags (defaults in brackets):
  --fault-seconds N        how long the fault lasts [${DEFAULT_DRILL_OPTIONS.faultSeconds}]
  --warmup-seconds N       load before the fault [${DEFAULT_DRILL_OPTIONS.warmupSeconds}]
  --after-seconds N        load after catch-up, before the drain [${DEFAULT_DRILL_OPTIONS.afterSeconds}]
  --series N               series written [${DEFAULT_DRILL_OPTIONS.series}]
  --interval-ms N          one sample per series every N ms [${DEFAULT_DRILL_OPTIONS.intervalMs}]
  --settle-seconds N       probes read samples acked at least this long ago [${DEFAULT_DRILL_OPTIONS.settleSeconds}]
  --block-period D         ingesters cut and ship blocks this often, or "default" for the product's [${DEFAULT_DRILL_OPTIONS.blockPeriod}]
  --shared-cluster         run the scenarios on one cluster instead of one each
  --data-dir DIR           where clusters keep Kafka data and logs [a new dir under ${tmpdir()}]
  --keep-data              keep the data dir (always kept when a drill does not pass)
  --reports-dir DIR        [chaos/reports]
  --no-report              print the result, write no report`;

function parseCli(): { scenarios: Scenario[]; opts: DrillOptions; shared: boolean; keepData: boolean; reportsDir: string | undefined } {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      'fault-seconds': { type: 'string' },
      'warmup-seconds': { type: 'string' },
      'after-seconds': { type: 'string' },
      series: { type: 'string' },
      'interval-ms': { type: 'string' },
      'settle-seconds': { type: 'string' },
      'block-period': { type: 'string' },
      'shared-cluster': { type: 'boolean', default: false },
      'data-dir': { type: 'string' },
      'keep-data': { type: 'boolean', default: false },
      'reports-dir': { type: 'string' },
      'no-report': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help || positionals.length !== 1) {
    console.log(USAGE);
    process.exit(values.help ? 0 : 2);
  }
  const name = positionals[0];
  const scenario = scenarioByName(name);
  if (name !== 'all' && scenario === undefined) {
    console.error(`unknown scenario "${name}"\n\n${USAGE}`);
    process.exit(2);
  }
  const num = (flag: string, fallback: number, min: number): number => {
    const raw = values[flag as keyof typeof values];
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min) {
      console.error(`--${flag} must be a number >= ${min}, got "${String(raw)}"`);
      process.exit(2);
    }
    return n;
  };
  const opts: DrillOptions = {
    ...DEFAULT_DRILL_OPTIONS,
    faultSeconds: num('fault-seconds', DEFAULT_DRILL_OPTIONS.faultSeconds, 0),
    warmupSeconds: num('warmup-seconds', DEFAULT_DRILL_OPTIONS.warmupSeconds, 1),
    afterSeconds: num('after-seconds', DEFAULT_DRILL_OPTIONS.afterSeconds, 0),
    series: num('series', DEFAULT_DRILL_OPTIONS.series, 1),
    intervalMs: num('interval-ms', DEFAULT_DRILL_OPTIONS.intervalMs, 10),
    settleSeconds: num('settle-seconds', DEFAULT_DRILL_OPTIONS.settleSeconds, 0),
    blockPeriod: values['block-period'] === 'default' ? undefined : (values['block-period'] ?? DEFAULT_DRILL_OPTIONS.blockPeriod),
    dataDir: values['data-dir'] ? resolve(values['data-dir']) : mkdtempSync(resolve(tmpdir(), 'strata-drill-')),
    log: (line) => console.log(`${new Date().toISOString()} ${line}`),
  };
  opts.groups = Math.min(opts.groups, opts.series);
  return {
    scenarios: scenario ? [scenario] : [...SCENARIOS],
    opts,
    shared: values['shared-cluster'] ?? false,
    keepData: values['keep-data'] ?? false,
    reportsDir: values['no-report'] ? undefined : values['reports-dir'] ? resolve(values['reports-dir']) : DEFAULT_REPORTS_DIR,
  };
}

const cli = parseCli();
let active: DrillCluster | undefined;
let interrupted = false;

async function stopAndExit(signal: string): Promise<void> {
  if (interrupted) {
    active?.killNow();
    process.exit(130);
  }
  interrupted = true;
  console.error(`\n${signal}: stopping every process this drill started (again to kill at once) ...`);
  const timer = setTimeout(() => {
    active?.killNow();
    process.exit(130);
  }, 60_000);
  await active?.stop().catch(() => active?.killNow());
  clearTimeout(timer);
  console.error(`stopped; data kept in ${cli.opts.dataDir}`);
  process.exit(130); // 'exit' hooks SIGKILL anything left (redis, kafka, apps)
}
process.on('SIGINT', () => void stopAndExit('SIGINT'));
process.on('SIGTERM', () => void stopAndExit('SIGTERM'));

async function main(): Promise<number> {
  const { scenarios, opts, shared, reportsDir } = cli;
  opts.log(`drill data in ${opts.dataDir}`);
  const reports: DrillReport[] = [];
  let sharedCluster: DrillCluster | undefined;
  try {
    if (shared && scenarios.some((s) => s.notApplicable?.() === undefined)) {
      opts.log('starting the shared cluster');
      sharedCluster = active = await DrillCluster.start({ dataDir: resolve(opts.dataDir, 'shared'), log: opts.log, blockPeriod: opts.blockPeriod });
    }
    for (const scenario of scenarios) {
      const report = await runDrill(scenario, opts, sharedCluster, { onCluster: (c) => (active = c ?? sharedCluster) });
      reports.push(report);
      if (reportsDir !== undefined) opts.log(`report: ${writeReport(report, reportsDir)}`);
      console.log(`\n${summaryRow(report)}\n`);
    }
  } finally {
    await sharedCluster?.stop();
    active = undefined;
  }
  const lost = reports.filter((r) => r.status === 'fail' || r.status === 'error');
  if (lost.length === 0 && !cli.keepData && reports.every((r) => r.status === 'pass' || r.status === 'not_applicable')) {
    rmSync(opts.dataDir, { recursive: true, force: true });
  } else {
    opts.log(`data and logs kept in ${opts.dataDir}`);
  }
  for (const r of reports) {
    console.log(
      `${r.scenario.padEnd(24)} ${r.status.padEnd(15)} acked ${r.acked_samples ?? '—'}  lost ${r.lost_samples ?? '—'}  availability ${r.query_availability ?? '—'}  catch-up ${r.catch_up_seconds ?? '—'}s  longest push stall ${r.longest_push_stall_ms ?? '—'}ms`,
    );
  }
  return lost.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  async (err: Error) => {
    console.error(err.stack ?? err.message);
    await active?.stop().catch(() => active?.killNow());
    process.exit(2);
  },
);
