// Strata as `npm start` runs it: one process, -target=all, multi-tenancy off, its own Kafka broker
// under -data-dir, the memory budget and limits at their defaults. Only the ports and the data
// directory are chosen here; it must never pass a flag that lifts a limit.

import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePorts } from '@strata/local-cluster';
import { childPids, dirBytes, pidAlive, type Proc } from './proc-stats.ts';
import { sleep } from './sender.ts';
import { metricOf, waitHttp, type BenchTarget, type DiskFigure } from './targets.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
/** What `npm start` sets unless the operator did (package.json). */
const MMAP_THRESHOLD = '131072';
const STOP_KILL_AFTER_MS = 60_000;

export class StrataSingleProcess implements BenchTarget {
  readonly name = 'Strata (npm start)';
  readonly key = 'strata';
  readonly headers: Record<string, string> = {};
  readonly logFile: string;
  readonly dataDir: string;
  private readonly child: ChildProcess;
  private readonly port: number;
  private kafkaPid: number | undefined;
  private exit: string | undefined;

  private constructor(child: ChildProcess, port: number, dataDir: string, logFile: string) {
    this.child = child;
    this.port = port;
    this.dataDir = dataDir;
    this.logFile = logFile;
    child.once('exit', (code, signal) => (this.exit = `exit code ${code}, signal ${signal}`));
  }

  static async start(dir: string, log: (l: string) => void): Promise<StrataSingleProcess> {
    const [http, grpc] = await freePorts(2);
    const dataDir = join(dir, 'data');
    const logFile = join(dir, 'strata.log');
    const args = [
      'apps/strata/src/main.ts',
      '-target=all',
      '-auth.multitenancy-enabled=false',
      `-data-dir=${dataDir}`,
      `-server.http-listen-port=${http}`,
      `-server.grpc-listen-port=${grpc}`,
    ];
    const env = { ...process.env, MALLOC_MMAP_THRESHOLD_: process.env.MALLOC_MMAP_THRESHOLD_ ?? MMAP_THRESHOLD };
    const fd = openSync(logFile, 'a');
    const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    const t = new StrataSingleProcess(child, http, dataDir, logFile);
    try {
      await waitHttp(
        `${t.url}/ready`,
        (s) => s === 200,
        300_000,
        () => t.exit === undefined,
        'strata',
      );
    } catch (err) {
      t.killNow();
      throw new Error(
        `${(err as Error).message}; last log lines:\n${t
          .logLines(() => true)
          .slice(-10)
          .join('\n')}`,
        { cause: err },
      );
    }
    log(
      `strata: pid ${child.pid} (Kafka broker pid ${t.kafkaProcess()?.pid ?? '?'}) on 127.0.0.1:${http}: node ${args.join(' ')} (MALLOC_MMAP_THRESHOLD_=${env.MALLOC_MMAP_THRESHOLD_})`,
    );
    return t;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get pushUrl(): string {
    return `${this.url}/api/v1/push`;
  }

  get queryBase(): string {
    return `${this.url}/prometheus`;
  }

  /** How the process ended, once it has. */
  get exited(): string | undefined {
    return this.exit;
  }

  processes(): Proc[] {
    const kafka = this.kafkaProcess();
    return [...this.memoryProcesses(), ...(kafka ? [kafka] : [])];
  }

  /** The Strata process only: its Kafka broker is measured on its own. */
  memoryProcesses(): Proc[] {
    return this.child.pid !== undefined && this.exit === undefined ? [{ name: 'strata', pid: this.child.pid }] : [];
  }

  /** The broker the process runs now (it restarts one that died). */
  kafkaProcess(): Proc | undefined {
    if (this.exit === undefined && this.child.pid !== undefined) {
      const pid = childPids(this.child.pid).find((p) => readCmdline(p).includes('java'));
      if (pid !== undefined) this.kafkaPid = pid;
    }
    return this.kafkaPid !== undefined && isOurKafka(this.kafkaPid, this.dataDir) ? { name: 'kafka', pid: this.kafkaPid } : undefined;
  }

  /** Samples the ingester consumed from Kafka (appended or rejected). */
  async consumedSamples(): Promise<number | undefined> {
    return metricOf(this.url, 'strata_ingester_samples_consumed_total');
  }

  async waitIngested(expected: number, timeoutMs: number): Promise<{ caughtUp: boolean; behind: number; waitedMs: number }> {
    const began = Date.now();
    for (;;) {
      const behind = Math.max(0, expected - ((await this.consumedSamples()) ?? 0));
      if (behind === 0) return { caughtUp: true, behind, waitedMs: Date.now() - began };
      if (Date.now() - began > timeoutMs || this.exit !== undefined) return { caughtUp: false, behind, waitedMs: Date.now() - began };
      await sleep(1000);
    }
  }

  async disk(): Promise<DiskFigure[]> {
    return [{ what: 'data directory (Kafka log, TSDB, bucket)', bytes: dirBytes(this.dataDir) }];
  }

  /** Log lines passing `keep` (pino JSON: level 40 warn, 50 error, 60 fatal). */
  logLines(keep: (line: string) => boolean): string[] {
    try {
      return readFileSync(this.logFile, 'utf8')
        .split('\n')
        .filter((l) => l !== '' && keep(l));
    } catch {
      return [];
    }
  }

  async stop(): Promise<void> {
    const pid = this.child.pid;
    if (pid !== undefined && this.exit === undefined) {
      process.kill(pid, 'SIGTERM');
      for (const until = Date.now() + STOP_KILL_AFTER_MS; this.exit === undefined && Date.now() < until;) await sleep(200);
    }
    this.killNow();
  }

  /** SIGKILL to the process and its Kafka broker (which outlives a killed parent). */
  killNow(): void {
    const kafka = this.kafkaProcess()?.pid;
    for (const pid of [this.exit === undefined ? this.child.pid : undefined, kafka]) {
      if (pid === undefined || !pidAlive(pid)) continue;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}

/** A pid that is still the broker of this data directory (not a reused pid). */
function isOurKafka(pid: number, dataDir: string): boolean {
  const cmd = readCmdline(pid);
  return pidAlive(pid) && cmd.includes('java') && cmd.includes(dataDir);
}

function readCmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}
