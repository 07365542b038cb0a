// A real Debian redis-server on a free loopback port for tests and local
// clusters: no persistence, started and killed by pid, restartable at the
// same address (an empty Redis, as after a crash without persistence).

import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { freePorts } from './free-ports.ts';

export class LocalRedis {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private readonly onExit = (): void => this.killNow();

  readonly port: number;
  private readonly dir: string;

  private constructor(port: number, dir: string) {
    this.port = port;
    this.dir = dir;
  }

  /** Starts redis-server on a free loopback port, logging to <dir>/redis.log; resolves once it answers PING. */
  static async start(dir: string): Promise<LocalRedis> {
    mkdirSync(dir, { recursive: true });
    const [port] = await freePorts(1);
    const r = new LocalRedis(port, dir);
    await r.restart();
    return r;
  }

  get endpoint(): string {
    return `127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** (Re)starts the server at the same port, empty. */
  async restart(timeoutMs = 15_000): Promise<void> {
    if (this.running) throw new Error(`redis-server is already running (pid ${this.pid})`);
    const fd = openSync(join(this.dir, 'redis.log'), 'a');
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir];
    let child: ChildProcess;
    try {
      child = spawn('redis-server', args, { stdio: ['ignore', fd, fd] });
    } finally {
      closeSync(fd);
    }
    this.child = child;
    process.on('exit', this.onExit);
    this.exited = new Promise((resolve) => {
      const gone = (): void => {
        process.off('exit', this.onExit);
        resolve();
      };
      child.once('exit', gone);
      child.once('error', gone);
    });
    const deadline = Date.now() + timeoutMs;
    while (!(await this.ping())) {
      if (!this.running) throw new Error(`redis-server exited at start; is it installed (apt-get install redis-server)? see ${this.dir}/redis.log`);
      if (Date.now() > deadline) throw new Error(`redis-server on ${this.endpoint} did not answer PING within ${timeoutMs}ms; see ${this.dir}/redis.log`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Sends the signal to this server's pid and waits until it is gone. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const pid = this.child?.pid;
    if (!this.running || pid === undefined) return;
    process.kill(pid, signal);
    await this.exited;
  }

  killNow(): void {
    const pid = this.child?.pid;
    if (this.running && pid !== undefined) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }

  /** True if the server answers PING within a second. */
  ping(): Promise<boolean> {
    return new Promise((resolve) => {
      const socket = connect({ host: '127.0.0.1', port: this.port });
      const done = (ok: boolean): void => {
        socket.destroy();
        resolve(ok);
      };
      socket.setTimeout(1000, () => done(false));
      socket.once('error', () => done(false));
      socket.once('connect', () => socket.write('PING\r\n'));
      socket.once('data', (d) => done(d.toString().startsWith('+PONG')));
    });
  }
}
