// A storage emulator as a child process on loopback (fake-gcs-server, Azurite) for tests
// and local drills: a free port, readiness by polling, and a stop that kills its pid.

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';

export interface EmulatorProcess {
  port: number;
  stop(): Promise<void>;
}

/** A port that was free a moment ago on `host`. */
async function freePort(host: string): Promise<number> {
  const server = createServer();
  server.listen(0, host);
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/**
 * Spawns `command` with the args `argsFor(port)` builds, then polls `ready(port)` until it is
 * true (a free port taken by someone else in between fails the start with the emulator's output).
 */
export async function startEmulator(opts: {
  name: string;
  command: string;
  argsFor: (port: number) => string[];
  host: string;
  ready: (port: number) => Promise<boolean>;
  timeoutMs?: number;
}): Promise<EmulatorProcess> {
  const port = await freePort(opts.host);
  const child: ChildProcess = spawn(opts.command, opts.argsFor(port), { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (b: Buffer): void => {
    output = (output + b.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited: string | undefined;
  child.on('exit', (code, signal) => (exited = `exited (${signal ?? code})`));
  child.on('error', (err) => (exited = `failed to start: ${err.message}`));
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  for (;;) {
    if (exited !== undefined) throw new Error(`${opts.name} ${exited}: ${output.trim()}`);
    if (await opts.ready(port).catch(() => false)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${opts.name} not ready on ${opts.host}:${port} after ${opts.timeoutMs ?? 30_000} ms: ${output.trim()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    port,
    stop: async () => {
      if (exited !== undefined || child.pid === undefined) return;
      const gone = once(child, 'exit');
      process.kill(child.pid, 'SIGTERM');
      const timer = setTimeout(() => child.pid !== undefined && exited === undefined && process.kill(child.pid, 'SIGKILL'), 5_000);
      await gone;
      clearTimeout(timer);
    },
  };
}
