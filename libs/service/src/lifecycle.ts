// Starts services in dependency order and stops them in reverse on SIGTERM/SIGINT,
// as dskit's service manager does. A service that fails to start, or fails
// while running, turns /ready false and brings the process down with exit 1:
// a process never answers ready while it cannot serve.

import type { Logger } from 'pino';
import type { Readiness } from './http.ts';

export interface Service {
  name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /**
   * Called once, after a successful start, with the function the service calls
   * if it fails while running (its consumer died, its child process exited for good).
   */
  watch?(failed: (err: Error) => void): void;
}

/** One service's state as dskit names them: New, Starting, Running, Stopping, Terminated, Failed. */
export type ServiceStateName = 'new' | 'starting' | 'running' | 'stopping' | 'terminated' | 'failed';

export interface ServiceState {
  name: string;
  state: ServiceStateName;
  /** Why it failed, when it did. */
  failure?: string;
  /** When it entered this state (ms since the epoch). */
  since: number;
}

type State = { phase: 'starting'; service: string } | { phase: 'running' } | { phase: 'stopping'; reason: string };

export class ServiceManager implements Readiness {
  private state: State = { phase: 'starting', service: '' };
  private readonly started: Service[] = [];
  private readonly failures = new Map<string, string>();
  /** Kept apart from `failures`: a failed stop says nothing about readiness (the process is stopping anyway). */
  private readonly stopFailures = new Map<string, string>();
  private readonly states = new Map<string, { state: ServiceStateName; since: number }>();
  private done: ((code: number) => void) | undefined;

  private readonly services: readonly Service[];
  private readonly logger: Logger;

  constructor(services: readonly Service[], logger: Logger) {
    this.services = services;
    this.logger = logger;
    for (const s of services) this.set(s, 'new');
  }

  /** Every service's state, in start order (the status page). */
  snapshot(): ServiceState[] {
    return this.services.map((s) => {
      const { state, since } = this.states.get(s.name)!;
      const failure = this.failures.get(s.name) ?? this.stopFailures.get(s.name);
      return { name: s.name, state, since, ...(failure !== undefined ? { failure } : {}) };
    });
  }

  private set(s: Service, state: ServiceStateName): void {
    if (this.states.get(s.name)?.state !== 'failed' || state === 'failed') this.states.set(s.name, { state, since: Date.now() });
  }

  notReadyReason(): string | undefined {
    const failed = [...this.failures].map(([name, msg]) => `${name} failed: ${msg}`).join('; ');
    if (failed !== '') return failed;
    if (this.state.phase === 'starting') return `starting ${this.state.service}`.trim();
    if (this.state.phase === 'stopping') return `stopping (${this.state.reason})`;
    return undefined;
  }

  /** Starts every service; resolves with the exit code once they were stopped (signal or failure). */
  run(): Promise<number> {
    const exited = new Promise<number>((resolve) => (this.done = resolve));
    process.on('SIGTERM', () => void this.stopAll('SIGTERM', 0));
    process.on('SIGINT', () => void this.stopAll('SIGINT', 0));
    void this.startAll();
    return exited;
  }

  private async startAll(): Promise<void> {
    for (const s of this.services) {
      if (this.state.phase === 'stopping') return;
      this.state = { phase: 'starting', service: s.name };
      this.set(s, 'starting');
      try {
        await s.start();
      } catch (err) {
        this.set(s, 'failed');
        this.logger.fatal({ err: (err as Error).message, service: s.name }, `${s.name} failed to start: ${(err as Error).message}`);
        this.failures.set(s.name, (err as Error).message);
        await this.stopAll(`${s.name} failed to start`, 1);
        return;
      }
      this.started.push(s);
      this.set(s, 'running');
      s.watch?.((err) => this.failed(s, err));
    }
    if (this.state.phase === 'starting') this.state = { phase: 'running' };
  }

  private failed(s: Service, err: Error): void {
    if (this.state.phase === 'stopping' || this.failures.has(s.name)) return;
    this.failures.set(s.name, err.message);
    this.set(s, 'failed');
    this.logger.fatal({ err: err.message, service: s.name }, `${s.name} failed: ${err.message}; stopping`);
    void this.stopAll(`${s.name} failed`, 1);
  }

  private async stopAll(reason: string, code: number): Promise<void> {
    if (this.state.phase === 'stopping') return;
    this.state = { phase: 'stopping', reason };
    this.logger.info({ reason }, 'stopping');
    for (const s of [...this.started].reverse()) {
      this.set(s, 'stopping');
      try {
        await s.stop();
        this.set(s, 'terminated');
      } catch (err) {
        this.set(s, 'failed');
        this.stopFailures.set(s.name, `stop failed: ${(err as Error).message}`);
        this.logger.error({ err: (err as Error).message, service: s.name }, 'service failed to stop cleanly');
      }
    }
    this.logger.info('stopped');
    this.done?.(code);
  }
}

/** Runs the services until a signal or a failure, then exits the process with the manager's code. */
export async function runServices(services: Service[], logger: Logger): Promise<void> {
  process.exit(await new ServiceManager(services, logger).run());
}
