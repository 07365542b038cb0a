// The ruler under load: a single Strata process (-target=all, its own Kafka),
// 1,000 series of input, N rule groups (default 1,000) × 10 recording rules at
// a 15s interval uploaded through the config API; once every group is
// scheduled, it runs for --duration (default 120s) and prints, from the
// ruler's own metrics over that window: evaluations done and missed, the
// evaluation lag (scheduled → started) p50/p99, the group evaluation duration
// p50/p99 and mean, and the process' CPU per group evaluation (utime+stime of
// the Strata process, which also ingests the rules' output; Kafka's JVM apart).
//
//   npm run bench:ruler -- [--groups 1000] [--rules 10] [--duration 120] [--keep]

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { AppProcess, freePorts } from '@strata/local-cluster';
import { compressBody, encodeWriteRequest, type SeriesInput } from '@strata/remote-write';
import { cpuSeconds } from './proc-stats.ts';

const args = process.argv.slice(2);
const opt = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const GROUPS = opt('groups', 1000);
const RULES = opt('rules', 10);
const DURATION_S = opt('duration', 120);
const KEEP = args.includes('--keep');
const INTERVAL = 15_000;
const JOBS = 50;
const INSTANCES = 10;

/** Ten rule shapes over one job's series (counters and gauges), cycled when --rules is above 10. */
const RULE_EXPRS = [
  (j: string) => `sum(rate(bench_requests_total{job="${j}"}[5m]))`,
  (j: string) => `sum by (instance) (rate(bench_requests_total{job="${j}"}[5m]))`,
  (j: string) => `max(bench_gauge{job="${j}"})`,
  (j: string) => `avg(bench_gauge{job="${j}"})`,
  (j: string) => `count(bench_gauge{job="${j}"} > 0.5)`,
  (j: string) => `sum(increase(bench_requests_total{job="${j}"}[10m]))`,
  (j: string) => `quantile(0.9, bench_gauge{job="${j}"})`,
  (j: string) => `topk(3, rate(bench_requests_total{job="${j}"}[5m]))`,
  (j: string) => `avg_over_time(bench_gauge{job="${j}",instance="i-0"}[5m])`,
  (j: string) => `sum(rate(bench_requests_total{job="${j}"}[5m])) / count(bench_gauge{job="${j}"})`,
];

function groupYaml(g: number): string {
  const job = `job-${g % JOBS}`;
  const rules = Array.from({ length: RULES }, (_, r) => `  - record: bench:g${g}:r${r}\n    expr: '${RULE_EXPRS[r % RULE_EXPRS.length](job)}'\n`);
  return `name: g${g}\ninterval: ${INTERVAL / 1000}s\nrules:\n${rules.join('')}`;
}

/** Input: JOBS × INSTANCES counters and gauges, one sample every 15s over the last 15 minutes. */
function input(now: number): SeriesInput[] {
  const t0 = now - 15 * 60_000;
  const series: SeriesInput[] = [];
  for (let j = 0; j < JOBS; j++) {
    for (let i = 0; i < INSTANCES; i++) {
      for (const counter of [true, false]) {
        let v = 0;
        series.push({
          labels: [
            { name: '__name__', value: counter ? 'bench_requests_total' : 'bench_gauge' },
            { name: 'instance', value: `i-${i}` },
            { name: 'job', value: `job-${j}` },
          ],
          samples: Array.from({ length: 61 }, (_, k) => {
            v = counter ? v + ((j * 7 + i * 3 + k * 13) % 10) : ((j * 31 + i * 11 + k * 17) % 100) / 100;
            return { value: v, timestamp: t0 + k * INTERVAL };
          }),
        });
      }
    }
  }
  return series;
}

interface Hist {
  buckets: Map<number, number>;
  sum: number;
  count: number;
}

async function metrics(url: string): Promise<string> {
  const res = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(30_000) });
  if (!res.ok) throw new Error(`${url}/metrics: ${res.status}`);
  return res.text();
}

function counter(text: string, name: string): number {
  let total = 0;
  for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))) total += Number(m[1]);
  return total;
}

function histogram(text: string, name: string): Hist {
  const buckets = new Map<number, number>();
  for (const m of text.matchAll(new RegExp(`^${name}_bucket\\{(?:[^}]*,)?le="([^"]+)"[^}]*\\} (\\S+)$`, 'gm'))) {
    const le = m[1] === '+Inf' ? Infinity : Number(m[1]);
    buckets.set(le, (buckets.get(le) ?? 0) + Number(m[2]));
  }
  return { buckets, sum: counter(text, `${name}_sum`), count: counter(text, `${name}_count`) };
}

function delta(a: Hist, b: Hist): Hist {
  const buckets = new Map<number, number>();
  for (const [le, n] of b.buckets) buckets.set(le, n - (a.buckets.get(le) ?? 0));
  return { buckets, sum: b.sum - a.sum, count: b.count - a.count };
}

/** The quantile by linear interpolation within the bucket, as histogram_quantile does. */
function quantile(h: Hist, q: number): number {
  const les = [...h.buckets.keys()].sort((x, y) => x - y);
  const rank = q * h.count;
  let prevLe = 0;
  let prevN = 0;
  for (const le of les) {
    const n = h.buckets.get(le)!;
    if (n >= rank) {
      if (le === Infinity) return prevLe;
      return prevLe + ((le - prevLe) * (rank - prevN)) / Math.max(1, n - prevN);
    }
    prevLe = le;
    prevN = n;
  }
  return NaN;
}

const dir = mkdtempSync(join(tmpdir(), 'strata-ruler-bench-'));
const [port] = await freePorts(1);
const strata = new AppProcess({
  name: 'strata',
  target: 'all',
  httpPort: port,
  logFile: join(dir, 'strata.log'),
  args: [
    '-auth.multitenancy-enabled=false',
    `-data-dir=${dir}/data`,
    `-server.http-listen-port=${port}`,
    '-ruler.poll-interval=10m',
    '-distributor.ingestion-rate-limit=100000000',
    '-distributor.ingestion-burst-size=100000000',
  ],
});
try {
  strata.start();
  await strata.waitReady(180_000);
  const url = strata.url;
  const series = input(Date.now());
  for (let i = 0; i < series.length; i += 200) {
    const res = await fetch(`${url}/api/v1/push`, {
      method: 'POST',
      body: compressBody(encodeWriteRequest({ timeseries: series.slice(i, i + 200) })),
      headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy', 'x-prometheus-remote-write-version': '0.1.0' },
    });
    if (!res.ok) throw new Error(`push: ${res.status} ${await res.text()}`);
  }
  console.log(`ruler-bench: ${series.length} input series × 61 samples pushed; uploading ${GROUPS} groups × ${RULES} rules at ${INTERVAL / 1000}s`);
  // The process' CPU with no rules (ingester, Kafka client, compactor loops): subtracted below.
  const idle0 = { cpu: cpuSeconds(strata.pid!)!, at: Date.now() };
  await new Promise((r) => setTimeout(r, INTERVAL));
  const idleRate = (cpuSeconds(strata.pid!)! - idle0.cpu) / ((Date.now() - idle0.at) / 1000);
  const uploadStart = Date.now();
  for (let g = 0; g < GROUPS; g++) {
    const res = await fetch(`${url}/prometheus/config/v1/rules/ns-${g % 10}`, {
      method: 'POST',
      headers: { 'content-type': 'application/yaml' },
      body: groupYaml(g),
    });
    if (res.status !== 202) throw new Error(`upload g${g}: ${res.status} ${await res.text()}`);
  }
  for (;;) {
    const n = counter(await metrics(url), 'strata_ruler_rule_groups');
    if (n === GROUPS) break;
    if (Date.now() - uploadStart > 300_000) throw new Error(`only ${n} of ${GROUPS} groups scheduled after 5 minutes`);
    await new Promise((r) => setTimeout(r, 1000));
  }
  console.log(
    `ruler-bench: ${GROUPS} groups uploaded and scheduled in ${((Date.now() - uploadStart) / 1000).toFixed(1)}s; one interval of warm-up, then ${DURATION_S}s measured`,
  );
  await new Promise((r) => setTimeout(r, INTERVAL));

  const pid = strata.pid!;
  const before = { text: await metrics(url), cpu: cpuSeconds(pid)!, at: Date.now() };
  await new Promise((r) => setTimeout(r, DURATION_S * 1000));
  const after = { text: await metrics(url), cpu: cpuSeconds(pid)!, at: Date.now() };

  const secs = (after.at - before.at) / 1000;
  const evals = counter(after.text, 'strata_ruler_group_evaluations_total') - counter(before.text, 'strata_ruler_group_evaluations_total');
  const missed = counter(after.text, 'strata_ruler_missed_iterations_total') - counter(before.text, 'strata_ruler_missed_iterations_total');
  const failures = counter(after.text, 'strata_ruler_evaluation_failures_total') - counter(before.text, 'strata_ruler_evaluation_failures_total');
  const lag = delta(histogram(before.text, 'strata_ruler_group_evaluation_lag_seconds'), histogram(after.text, 'strata_ruler_group_evaluation_lag_seconds'));
  const dur = delta(
    histogram(before.text, 'strata_ruler_group_evaluation_duration_seconds'),
    histogram(after.text, 'strata_ruler_group_evaluation_duration_seconds'),
  );
  const cpu = after.cpu - before.cpu;
  const ms = (s: number) => `${(s * 1000).toFixed(1)}ms`;
  const expected = (GROUPS * secs * 1000) / INTERVAL;
  console.log(
    `ruler-bench: ${GROUPS} groups × ${RULES} rules / ${INTERVAL / 1000}s over ${secs.toFixed(0)}s (load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')})`,
  );
  console.log(
    `  group evaluations   ${evals} (${(evals / secs).toFixed(1)}/s; ${expected.toFixed(0)} scheduled), missed iterations ${missed}, failed rules ${failures}`,
  );
  console.log(`  evaluation lag      p50 ${ms(quantile(lag, 0.5))}  p99 ${ms(quantile(lag, 0.99))}  mean ${ms(lag.sum / Math.max(1, lag.count))}`);
  console.log(`  group duration      p50 ${ms(quantile(dur, 0.5))}  p99 ${ms(quantile(dur, 0.99))}  mean ${ms(dur.sum / Math.max(1, dur.count))}`);
  console.log(
    `  process CPU         ${cpu.toFixed(1)}s in ${secs.toFixed(0)}s (${((100 * cpu) / secs).toFixed(0)}% of a core), ${ms(cpu / Math.max(1, evals))} per group evaluation (${ms(cpu / Math.max(1, evals * RULES))} per rule)`,
  );
  const net = cpu - idleRate * secs;
  console.log(
    `  minus idle          ${(idleRate * 100).toFixed(0)}% of a core without rules → ${net.toFixed(1)}s, ${ms(net / Math.max(1, evals))} per group evaluation`,
  );
  console.log(`ruler-bench: data in ${dir}${KEEP ? '' : ' (removed)'}`);
} finally {
  await strata.kill('SIGTERM');
  if (!KEEP) rmSync(dir, { recursive: true, force: true });
}
