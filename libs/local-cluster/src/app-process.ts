// One Strata app as a child process: started with fixed flags and ports so a
// restart comes back at the same address, killed by pid, logs to a file.

import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export interface AppProcessOptions {
  /** e.g. distributor, querier, ingester-zone-a-0. */
  name: string;
  /** The one binary's -target: all (the single process), distributor, ingester, querier, compactor, or a comma list. */
  target: string;
  args: string[];
  httpPort: number;
  logFile: string;
}

export class AppProcess {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();

  readonly opts: AppProcessOptions;

  constructor(opts: AppProcessOptions) {
    this.opts = opts;
  }

  get name(): string {
    return this.opts.name;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** How the last run ended: the exit code, or the signal that ended it; undefined while running or never started. */
  get exit(): { code: number | null; signal: NodeJS.Signals | null } | undefined {
    const c = this.child;
    return c && !this.running ? { code: c.exitCode, signal: c.signalCode } : undefined;
  }

  /** Resolves once the process has exited (at once if it is not running). */
  async waitExit(): Promise<void> {
    await this.exited;
  }

  get url(): string {
    return `http://127.0.0.1:${this.opts.httpPort}`;
  }

  start(): void {
    if (this.running) throw new Error(`${this.name} is already running (pid ${this.pid})`);
    const fd = openSync(this.opts.logFile, 'a');
    const main = `${REPO_ROOT}apps/strata/src/main.ts`;
    const child = spawn(process.execPath, [main, `-target=${this.opts.target}`, ...this.opts.args], {
      cwd: REPO_ROOT,
      stdio: ['ignore', fd, fd],
      // The allocator setting the image and npm start use (see the Dockerfile).
      env: { ...process.env, STRATA_LOG_LEVEL: process.env.STRATA_LOG_LEVEL ?? 'info', MALLOC_MMAP_THRESHOLD_: process.env.MALLOC_MMAP_THRESHOLD_ ?? '131072' },
    });
    closeSync(fd);
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
  }

  /** Sends the signal by pid and waits until the process is gone. */
  async kill(signal: NodeJS.Signals = 'SIGKILL', timeoutMs = 15_000): Promise<void> {
    const child = this.child;
    if (!child || !this.running || child.pid === undefined) return;
    process.kill(child.pid, signal);
    const timer = setTimeout(() => this.running && child.pid && process.kill(child.pid, 'SIGKILL'), timeoutMs);
    await this.exited;
    clearTimeout(timer);
  }

  /** Kills without waiting (for process-exit cleanup). */
  killNow(): void {
    if (this.running && this.child?.pid) {
      try {
        process.kill(this.child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }

  /** Polls GET /ready until 200; fails early if the process dies. */
  async waitReady(timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = 'no answer yet';
    while (Date.now() < deadline) {
      if (!this.running) throw new Error(`${this.name} exited while waiting for /ready; see ${this.opts.logFile}`);
      try {
        const res = await fetch(`${this.url}/ready`, { signal: AbortSignal.timeout(2000) });
        if (res.status === 200) return;
        last = `${res.status} ${(await res.text()).trim()}`;
      } catch (err) {
        last = (err as Error).message;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`${this.name} not ready after ${timeoutMs}ms (last: ${last}); see ${this.opts.logFile}`);
  }

  /** GET /ready once: true only on 200. */
  async isReady(): Promise<boolean> {
    try {
      return (await fetch(`${this.url}/ready`, { signal: AbortSignal.timeout(2000) })).status === 200;
    } catch {
      return false;
    }
  }
}
