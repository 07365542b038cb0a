// The systems under test, each started fresh on loopback and killed by pid:
// Strata's full pipeline (LocalCluster: Kafka, distributor, both zones'
// ingesters, querier), Prometheus 2.42's remote-write receiver, and
// VictoriaMetrics single-node. Never touches a process it did not start.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LocalCluster, freePorts } from '@strata/local-cluster';
import { dirBytes, type Proc } from './proc-stats.ts';
import { sleep } from './sender.ts';

export interface DiskFigure {
  what: string;
  bytes: number | undefined;
  note?: string;
}

export interface BenchTarget {
  readonly name: string;
  readonly key: 'strata' | 'prometheus' | 'victoria';
  readonly pushUrl: string;
  /** Base URL that serves /api/v1/query and /api/v1/query_range. */
  readonly queryBase: string;
  readonly headers: Record<string, string>;
  /** Every process of the system (CPU is summed over these). */
  processes(): Proc[];
  /** The processes that hold one copy of the series (RSS per series): Strata's zone-a ingesters. */
  memoryProcesses(): Proc[];
  /** Waits until everything acknowledged is ingested (Strata: both zones consumed it); returns how far behind it still is. */
  waitIngested(expectedSamples: number, timeoutMs: number): Promise<{ caughtUp: boolean; behind: number; waitedMs: number }>;
  /** Flushes what can be flushed and measures bytes on disk. */
  disk(): Promise<DiskFigure[]>;
  stop(): Promise<void>;
  /** Kills every process now, synchronously (Ctrl-C, failures). */
  killNow(): void;
}

const TENANT = 'bench';

function killPid(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

export async function waitHttp(
  url: string,
  ok: (status: number, body: string) => boolean,
  timeoutMs: number,
  alive: () => boolean,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (!alive()) throw new Error(`${what} exited while starting`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      const body = await res.text();
      if (ok(res.status, body)) return;
      last = `${res.status} ${body.slice(0, 200)}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await sleep(200);
  }
  throw new Error(`${what} not ready after ${timeoutMs}ms (last: ${last})`);
}

/** Sums a counter (all label sets) from a Prometheus text exposition. */
export function sumMetric(text: string, name: string): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== '{' && rest[0] !== ' ') continue;
    const v = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(v)) total += v;
  }
  return total;
}

/** Cumulative bucket counts of a histogram (all label sets summed), by upper bound. */
export async function histogramOf(url: string, name: string): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  try {
    const res = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5000) });
    for (const line of (await res.text()).split('\n')) {
      if (!line.startsWith(`${name}_bucket{`)) continue;
      const le = /le="([^"]+)"/.exec(line)?.[1];
      if (le === undefined) continue;
      const bound = le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le);
      out.set(bound, (out.get(bound) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
    }
  } catch {
    // empty
  }
  return out;
}

/** A quantile (upper bucket bound, seconds) of what a histogram counted between two snapshots. */
export function histogramQuantile(before: Map<number, number>, after: Map<number, number>, q: number): number {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const total = (after.get(Number.POSITIVE_INFINITY) ?? 0) - (before.get(Number.POSITIVE_INFINITY) ?? 0);
  if (total <= 0) return NaN;
  for (const b of bounds) if ((after.get(b) ?? 0) - (before.get(b) ?? 0) >= q * total) return b;
  return Number.POSITIVE_INFINITY;
}

export async function metricOf(url: string, name: string): Promise<number | undefined> {
  try {
    const res = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5000) });
    if (res.status !== 200) return undefined;
    return sumMetric(await res.text(), name);
  } catch {
    return undefined;
  }
}

// ---- Strata ----

/** Per-tenant limits the bench lifts: it measures the pipeline, not its guard rails. */
const BENCH_LIMITS: [string, string][] = [
  ['distributor.ingestion-rate-limit', '1000000000'],
  ['distributor.ingestion-burst-size', '1000000000'],
  ['ingester.max-global-series-per-user', '100000000'],
];

function limitArgs(app: 'distributor' | 'ingester', log: (l: string) => void): string[] {
  const args = BENCH_LIMITS.map(([f, v]) => `-${f}=${v}`);
  log(`strata: ${app} limits lifted for the bench: ${args.join(' ')}`);
  return args;
}

/** The last error line of each app log under <dataDir>/logs, for a failed start. */
function logTail(dataDir: string): string {
  const dir = join(dataDir, 'logs');
  const lines: string[] = [];
  try {
    for (const f of readdirSync(dir)) {
      const errLine = readFileSync(join(dir, f), 'utf8')
        .split('\n')
        .filter((l) => /"level":(50|60)/.test(l))
        .at(-1);
      if (errLine) lines.push(`\n    ${f}: ${errLine.slice(0, 400)}`);
    }
  } catch {
    // no logs
  }
  return lines.join('');
}

export interface StrataOptions {
  dataDir: string;
  partitions: number;
  log: (line: string) => void;
  /** Flags added to the distributor, the ingesters and the querier. */
  extraArgs?: string[];
}

export class StrataTarget implements BenchTarget {
  readonly name = 'Strata';
  readonly key = 'strata';
  readonly headers = { 'X-Scope-OrgID': TENANT };
  readonly cluster: LocalCluster;
  private readonly bucketDir: string;

  private constructor(cluster: LocalCluster, bucketDir: string) {
    this.cluster = cluster;
    this.bucketDir = bucketDir;
  }

  /**
   * LocalCluster gives each ingester its own -blocks-storage.tsdb.dir and one filesystem
   * bucket in <dataDir>/bucket. A start that fails (e.g. an ingester losing a race with
   * Kafka's group coordinator) is retried in a fresh directory, and said so.
   */
  static async start(o: StrataOptions): Promise<StrataTarget> {
    const more = o.extraArgs ?? [];
    if (more.length > 0) o.log(`strata: extra flags ${more.join(' ')}`);
    const extraArgs = { distributor: [...limitArgs('distributor', o.log), ...more], ingester: [...limitArgs('ingester', o.log), ...more], querier: more };
    let lastErr: unknown;
    for (let attempt = 1; attempt <= 3; attempt++) {
      const dataDir = attempt === 1 ? o.dataDir : join(o.dataDir, `retry-${attempt}`);
      try {
        const cluster = await LocalCluster.start({
          dataDir,
          partitions: o.partitions,
          zones: ['a', 'b'],
          kafkaBrokers: 1,
          distributors: 1,
          extraArgs,
          log: (l) => o.log(`strata: ${l}`),
        });
        return new StrataTarget(cluster, join(dataDir, 'bucket'));
      } catch (err) {
        lastErr = err;
        o.log(`strata: cluster start ${attempt} failed: ${(err as Error).message}${logTail(dataDir)}`);
      }
    }
    throw lastErr;
  }

  get pushUrl(): string {
    return `${this.cluster.distributorUrl}/api/v1/push`;
  }

  /** Where disk() leaves the blocks: the bucket (both zones' copies). */
  get blocksDir(): string {
    return this.bucketDir;
  }

  get queryBase(): string {
    return `${this.cluster.querierUrl}/prometheus`;
  }

  processes(): Proc[] {
    const out: Proc[] = this.cluster.kafka.pids.map((pid, i) => ({ name: `kafka-${i}`, pid }));
    for (const p of this.cluster.processes.values()) if (p.pid !== undefined && p.running) out.push({ name: p.name, pid: p.pid });
    return out;
  }

  memoryProcesses(): Proc[] {
    return this.cluster
      .ingesters('a')
      .filter((p) => p.pid !== undefined)
      .map((p) => ({ name: p.name, pid: p.pid! }));
  }

  /** Samples appended per zone (sum over the zone's ingesters). */
  async appendedByZone(): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const zone of ['a', 'b']) {
      let total = 0;
      for (const ing of this.cluster.ingesters(zone)) total += (await metricOf(ing.url, 'strata_ingester_samples_appended_total')) ?? 0;
      out.set(zone, total);
    }
    return out;
  }

  async activeSeries(zone = 'a'): Promise<number> {
    let n = 0;
    for (const ing of this.cluster.ingesters(zone)) n += (await metricOf(ing.url, 'strata_ingester_active_series')) ?? 0;
    return n;
  }

  async waitIngested(expected: number, timeoutMs: number): Promise<{ caughtUp: boolean; behind: number; waitedMs: number }> {
    const began = Date.now();
    let behind = expected;
    for (;;) {
      const zones = await this.appendedByZone();
      behind = Math.max(0, ...[...zones.values()].map((v) => expected - v));
      if (behind <= 0) return { caughtUp: true, behind: 0, waitedMs: Date.now() - began };
      if (Date.now() - began > timeoutMs) return { caughtUp: false, behind, waitedMs: Date.now() - began };
      await sleep(250);
    }
  }

  async disk(): Promise<DiskFigure[]> {
    const kafka = dirBytes(this.cluster.kafka.dataDir, (p) => /\/ingest-\d+\/[^/]+\.log$/.test(p));
    const out: DiskFigure[] = [{ what: 'Kafka log segments (topic ingest, RF 1)', bytes: kafka }];
    let flushed = 0;
    let failed = '';
    for (const ing of this.cluster.ingesters()) {
      try {
        const res = await fetch(`${ing.url}/ingester/flush`, { method: 'POST', signal: AbortSignal.timeout(120_000) });
        if (res.status < 300) flushed++;
        else failed = `${ing.name}: POST /ingester/flush answered ${res.status}`;
      } catch (err) {
        failed = `${ing.name}: ${(err as Error).message}`;
      }
    }
    if (flushed === 0) {
      out.push({ what: 'blocks in the bucket', bytes: undefined, note: failed || 'no ingester flushed' });
      return out;
    }
    // Flushing answers before the upload may have finished: wait for the bucket to stop growing.
    let last = -1;
    let stableSince = Date.now();
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      const now = dirBytes(this.bucketDir);
      if (now !== last) {
        last = now;
        stableSince = Date.now();
      } else if (now > 0 && Date.now() - stableSince >= 3000) break;
      await sleep(500);
    }
    out.push({ what: 'blocks in the bucket after POST /ingester/flush', bytes: last, note: failed || undefined });
    return out;
  }

  async stop(): Promise<void> {
    await this.cluster.stop();
  }

  killNow(): void {
    for (const p of this.cluster.processes.values()) p.killNow();
    for (const pid of this.cluster.kafka.pids) killPid(pid);
  }
}

// ---- external binaries (Prometheus, VictoriaMetrics) ----

abstract class BinaryTarget implements BenchTarget {
  abstract readonly name: string;
  abstract readonly key: 'prometheus' | 'victoria';
  readonly headers: Record<string, string> = {};
  protected child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();

  protected readonly port: number;
  protected readonly dir: string;

  constructor(port: number, dir: string) {
    this.port = port;
    this.dir = dir;
  }

  get pushUrl(): string {
    return `http://127.0.0.1:${this.port}/api/v1/write`;
  }

  get queryBase(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  protected alive(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  protected spawnLogged(bin: string, args: string[], logFile: string): void {
    const fd = openSync(logFile, 'a');
    const child = spawn(bin, args, { stdio: ['ignore', fd, fd] });
    closeSync(fd);
    this.child = child;
    this.exited = new Promise((r) => {
      child.once('exit', () => r());
      // A binary that cannot start: waiting for it then fails with its name instead of crashing the bench.
      child.once('error', () => r());
    });
  }

  processes(): Proc[] {
    return this.child?.pid !== undefined && this.alive() ? [{ name: this.key, pid: this.child.pid }] : [];
  }

  memoryProcesses(): Proc[] {
    return this.processes();
  }

  async waitIngested(): Promise<{ caughtUp: boolean; behind: number; waitedMs: number }> {
    return { caughtUp: true, behind: 0, waitedMs: 0 };
  }

  abstract disk(): Promise<DiskFigure[]>;

  async stop(): Promise<void> {
    const pid = this.child?.pid;
    if (pid === undefined || !this.alive()) return;
    process.kill(pid, 'SIGTERM');
    const timer = setTimeout(() => killPid(pid), 20_000);
    await this.exited;
    clearTimeout(timer);
  }

  killNow(): void {
    if (this.alive()) killPid(this.child?.pid);
  }
}

export class PrometheusTarget extends BinaryTarget {
  readonly name: string;
  readonly key = 'prometheus';

  constructor(port: number, dir: string, name: string) {
    super(port, dir);
    this.name = name;
  }

  /**
   * `nativeHistograms`: --enable-feature=native-histograms (2.42 drops them without it).
   * `binary`: another build than Debian's 2.42 (the bootstrap's Prometheus 3), named `name`.
   */
  static async start(
    dir: string,
    log: (l: string) => void,
    opts: { nativeHistograms?: boolean; binary?: { path: string; name: string } } = {},
  ): Promise<PrometheusTarget> {
    const [port] = await freePorts(1);
    mkdirSync(join(dir, 'data'), { recursive: true });
    const config = join(dir, 'prometheus.yml');
    writeFileSync(config, 'global:\n  scrape_interval: 15s\n');
    if (opts.binary && !existsSync(opts.binary.path))
      throw new Error(`${opts.binary.path} is missing: run \`node scripts/bootstrap.mjs test\` (it builds ${opts.binary.name})`);
    const bin = opts.binary?.path ?? debianBinary('/usr/bin/prometheus', 'prometheus', log);
    const t = new PrometheusTarget(port, dir, opts.binary?.name ?? 'Prometheus 2.42');
    t.spawnLogged(
      bin,
      [
        `--config.file=${config}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--web.enable-remote-write-receiver',
        '--web.enable-admin-api',
        '--log.level=warn',
        ...(opts.nativeHistograms === true ? ['--enable-feature=native-histograms'] : []),
      ],
      join(dir, 'prometheus.log'),
    );
    try {
      await waitHttp(
        `${t.queryBase}/-/ready`,
        (s) => s === 200,
        60_000,
        () => t.alive(),
        'prometheus',
      );
    } catch (err) {
      t.killNow();
      throw err;
    }
    log(`prometheus: pid ${t.child?.pid} on 127.0.0.1:${port}`);
    return t;
  }

  /** Where disk() leaves the blocks: the admin snapshot holds the head written as a block. */
  get blocksDir(): string {
    return join(this.dir, 'data', 'snapshots');
  }

  async disk(): Promise<DiskFigure[]> {
    const data = join(this.dir, 'data');
    const wal = dirBytes(join(data, 'wal')) + dirBytes(join(data, 'chunks_head'));
    const out: DiskFigure[] = [{ what: 'WAL + m-mapped head chunks', bytes: wal }];
    try {
      const res = await fetch(`${this.queryBase}/api/v1/admin/tsdb/snapshot`, { method: 'POST', signal: AbortSignal.timeout(300_000) });
      const body = (await res.json()) as { data?: { name?: string } };
      const name = body.data?.name;
      if (!name) throw new Error(`snapshot answered ${res.status}`);
      out.unshift({ what: 'head written as a block (admin snapshot)', bytes: dirBytes(join(data, 'snapshots', name)) });
    } catch (err) {
      out.unshift({ what: 'head written as a block (admin snapshot)', bytes: undefined, note: (err as Error).message });
    }
    return out;
  }
}

export class VictoriaMetricsTarget extends BinaryTarget {
  readonly name = 'VictoriaMetrics 1.79';
  readonly key = 'victoria';

  static async start(dir: string, log: (l: string) => void): Promise<VictoriaMetricsTarget> {
    const bin = debianBinary('/usr/bin/victoria-metrics', 'victoria-metrics', log);
    const [port] = await freePorts(1);
    mkdirSync(join(dir, 'data'), { recursive: true });
    const t = new VictoriaMetricsTarget(port, dir);
    t.spawnLogged(
      bin,
      [
        `-storageDataPath=${join(dir, 'data')}`,
        `-httpListenAddr=127.0.0.1:${port}`,
        // Fresh samples are queryable at once and every query is computed, as in Prometheus and Strata.
        '-search.latencyOffset=0s',
        '-search.disableCache',
        '-loggerLevel=WARN',
      ],
      join(dir, 'victoria-metrics.log'),
    );
    try {
      await waitHttp(
        `${t.queryBase}/health`,
        (s, b) => s === 200 && b.trim() === 'OK',
        60_000,
        () => t.alive(),
        'victoria-metrics',
      );
    } catch (err) {
      t.killNow();
      throw err;
    }
    log(`victoria-metrics: pid ${t.child?.pid} on 127.0.0.1:${port}`);
    return t;
  }

  async disk(): Promise<DiskFigure[]> {
    try {
      await fetch(`${this.queryBase}/internal/force_flush`, { signal: AbortSignal.timeout(60_000) });
    } catch {
      // measured as it is
    }
    await sleep(3000);
    return [{ what: 'data + indexdb after /internal/force_flush', bytes: dirBytes(join(this.dir, 'data'), (p) => !p.includes('/snapshots/')) }];
  }
}

/**
 * `bin`, installing Debian's `pkg` first when it is missing (the bench runs as root). A package
 * that starts a system service (prometheus does) has it stopped: the bench runs its own.
 */
function debianBinary(bin: string, pkg: string, log: (l: string) => void): string {
  if (existsSync(bin)) return bin;
  log(`${pkg}: not installed; apt-get install -y ${pkg}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  let r = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', pkg], { stdio: 'inherit', env });
  if (r.status !== 0) {
    spawnSync('apt-get', ['update'], { stdio: 'inherit', env });
    r = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', pkg], { stdio: 'inherit', env });
  }
  if (r.status !== 0 || !existsSync(bin)) throw new Error(`installing ${pkg} failed (apt-get install -y ${pkg})`);
  if (spawnSync('systemctl', ['stop', pkg], { stdio: 'ignore' }).status !== 0) spawnSync('service', [pkg, 'stop'], { stdio: 'ignore' });
  return bin;
}
