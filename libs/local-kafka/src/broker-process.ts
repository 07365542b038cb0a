// One Kafka node as an OS process: spawn (detached, output to its log file), signal, wait for exit.
// Processes are only ever addressed by their own pid, never by name or process group. A node never
// outlives its owner: it gets SIGKILL when the owning process dies (PR_SET_PDEATHSIG via setpriv),
// and a node left over by an owner that could not arrange that (its pid file) is killed before a new start.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { classpath } from './jvm-args.ts';

const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p));

export interface BrokerProcessSpec {
  nodeId: number;
  libsDir: string;
  propsFile: string;
  logFile: string;
  jvmArgs: string[];
  /** Told of every exit, wanted or not (the owner decides whether it was a failure). */
  onExit?: (info: ExitInfo) => void;
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class BrokerProcess {
  private child: ChildProcess | undefined;
  private exit: Promise<ExitInfo> | undefined;
  private exitInfo: ExitInfo | undefined;
  private waiters = 0;

  private readonly spec: BrokerProcessSpec;

  constructor(spec: BrokerProcessSpec) {
    this.spec = spec;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined && this.exitInfo === undefined;
  }

  /** Why the last run ended, or undefined while running / never started. */
  get exited(): ExitInfo | undefined {
    return this.exitInfo;
  }

  private get pidFile(): string {
    return join(dirname(this.spec.propsFile), 'broker.pid');
  }

  start(): number {
    if (this.running) throw new Error(`kafka node ${this.spec.nodeId} is already running (pid ${this.pid})`);
    killStale(this.pidFile, this.spec.propsFile);
    const fd = openSync(this.spec.logFile, 'a');
    let child: ChildProcess;
    try {
      const java = ['java', ...this.spec.jvmArgs, '-cp', classpath(this.spec.libsDir), 'kafka.Kafka', this.spec.propsFile];
      // Detached, so a Ctrl-C in the terminal reaches the owner, which stops the broker cleanly.
      const [cmd, ...args] = SETPRIV ? [SETPRIV, '--pdeathsig', 'KILL', ...java] : java;
      child = spawn(cmd, args, { detached: true, stdio: ['ignore', fd, fd] });
    } finally {
      closeSync(fd);
    }
    this.exitInfo = undefined;
    this.exit = new Promise((resolve) => {
      // 'error' without 'exit' means the process never started (e.g. no java on PATH).
      child.once('error', () => {
        this.exitInfo ??= { code: -1, signal: null };
        resolve(this.exitInfo);
      });
      child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        rmSync(this.pidFile, { force: true });
        resolve(this.exitInfo);
        this.spec.onExit?.(this.exitInfo);
      });
    });
    // The broker must not keep the node process alive by itself; owners stop it explicitly.
    child.unref();
    if (child.pid === undefined) {
      this.exitInfo = { code: -1, signal: null };
      throw new Error(`cannot start java for kafka node ${this.spec.nodeId}; is Java 17+ on PATH?`);
    }
    this.child = child;
    writeFileSync(this.pidFile, `${child.pid}\n`);
    return child.pid;
  }

  /** Sends `signal`; if the process is still alive after `killAfterMs`, SIGKILLs it. Resolves once it exited. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', killAfterMs = 20_000): Promise<void> {
    if (!this.running) return;
    this.signal(signal);
    if (signal !== 'SIGKILL' && !(await this.waitForExit(killAfterMs))) this.signal('SIGKILL');
    await this.waitForExit();
  }

  signal(signal: NodeJS.Signals): void {
    const pid = this.child?.pid;
    if (this.running && pid !== undefined) sendSignal(pid, signal);
  }

  /** True once the process exited (immediately if it is not running); false if `timeoutMs` passed first. */
  async waitForExit(timeoutMs?: number): Promise<boolean> {
    const child = this.child;
    if (!this.running || this.exit === undefined || child === undefined) return true;
    // The child is unref'd; while someone waits for it, it must keep the event loop alive.
    if (this.waiters++ === 0) child.ref();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => {
      if (timeoutMs !== undefined) timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const exited = this.exit.then(() => true);
    try {
      return await Promise.race([exited, timedOut]);
    } finally {
      clearTimeout(timer);
      if (--this.waiters === 0) child.unref();
    }
  }

  /** Synchronous SIGKILL for process-exit hooks, where nothing async runs any more. */
  killNow(): void {
    this.signal('SIGKILL');
  }
}

/** Kills the node a dead owner left running on these files: its pid file names it, its command line names the same config. */
function killStale(pidFile: string, propsFile: string): void {
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  rmSync(pidFile, { force: true });
  if (!Number.isInteger(pid) || pid <= 0) return;
  let cmdline: string;
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return; // gone already
  }
  if (!cmdline.split('\0').includes(propsFile)) return; // the pid was reused by something else
  sendSignal(pid, 'SIGKILL');
  // Its exit releases the data directory's lock; a new broker started before that fails.
  const deadline = Date.now() + 10_000;
  while (existsSync(`/proc/${pid}`) && !isZombie(pid) && Date.now() < deadline) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
}

function isZombie(pid: number): boolean {
  try {
    return / Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

function sendSignal(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}
