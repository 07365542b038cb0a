// A YAML file validated with zod and re-read on a period, so an operator can
// change it without a restart (the runtime overrides, the auth tokens). A file
// that fails to read, parse or validate never replaces the last good value: the
// failure is logged once per distinct problem and shown by a gauge.

import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Gauge, type Registry } from 'prom-client';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import type { Logger } from './logger.ts';

export interface ReloadingYamlFileOptions<T> {
  path: string;
  /** Validates the parsed YAML; an empty file is validated as `{}`. */
  schema: z.ZodType<T>;
  /** 0: read once at start. */
  reloadPeriodMs: number;
  logger: Logger;
  registry: Registry;
  /** Names the gauges: `<metricPrefix>_last_reload_successful`, `<metricPrefix>_last_reload_successful_timestamp_seconds`. */
  metricPrefix: string;
  /** What the file is, in log lines ("runtime config"). */
  what: string;
  /** Called with every newly applied value (not for an unchanged file). */
  onApplied?: (value: T) => void;
}

export class ReloadingYamlFile<T> {
  private current: T | undefined;
  private lastDigest: string | undefined;
  private lastProblem: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly ok: Gauge;
  private readonly okAt: Gauge;

  private readonly opts: ReloadingYamlFileOptions<T>;

  constructor(opts: ReloadingYamlFileOptions<T>) {
    this.opts = opts;
    this.ok = new Gauge({
      name: `${opts.metricPrefix}_last_reload_successful`,
      help: `Whether the last reload of the ${opts.what} file (${opts.path}) succeeded (1) or kept the previous value (0).`,
      registers: [opts.registry],
    });
    this.okAt = new Gauge({
      name: `${opts.metricPrefix}_last_reload_successful_timestamp_seconds`,
      help: `When the ${opts.what} file was last read successfully.`,
      registers: [opts.registry],
    });
  }

  /** The last good value; start() must have resolved. */
  get value(): T {
    if (this.current === undefined) throw new Error(`the ${this.opts.what} file ${this.opts.path} was not loaded yet`);
    return this.current;
  }

  /** Loads the file once (an invalid file fails start, as in Mimir), then reloads on the period. */
  async start(): Promise<void> {
    const problem = await this.reload();
    if (problem !== undefined) throw new Error(`${this.opts.what} file ${this.opts.path}: ${problem}`);
    this.opts.logger.info({ file: this.opts.path, reloadPeriodMs: this.opts.reloadPeriodMs }, `${this.opts.what} loaded`);
    if (this.opts.reloadPeriodMs > 0) {
      this.timer = setInterval(() => void this.reload(), this.opts.reloadPeriodMs);
      this.timer.unref();
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Reads the file now; returns why it was not applied, or undefined when it was (or is unchanged). */
  async reload(): Promise<string | undefined> {
    let text: string;
    try {
      text = await readFile(this.opts.path, 'utf8');
    } catch (err) {
      this.lastDigest = undefined;
      return this.failed(`cannot read the file: ${(err as Error).message}`);
    }
    const digest = createHash('sha256').update(text).digest('hex');
    if (digest === this.lastDigest) {
      // Unchanged since the last attempt: a bad file stays reported, a good one stays applied.
      return this.lastProblem;
    }
    this.lastDigest = digest;
    let parsed: unknown;
    try {
      parsed = parseYaml(text) ?? {};
    } catch (err) {
      return this.failed(`not valid YAML: ${oneLine((err as Error).message)}`);
    }
    const result = this.opts.schema.safeParse(parsed);
    if (!result.success) {
      const issue = result.error.issues[0];
      const where = issue.path.length > 0 ? issue.path.join('.') + ': ' : '';
      return this.failed(`invalid: ${where}${oneLine(issue.message)}`);
    }
    const first = this.current === undefined;
    this.current = result.data;
    this.lastProblem = undefined;
    this.ok.set(1);
    this.okAt.set(Date.now() / 1000);
    if (!first) this.opts.logger.info({ file: this.opts.path }, `${this.opts.what} reloaded`);
    this.opts.onApplied?.(result.data);
    return undefined;
  }

  private failed(problem: string): string {
    this.ok.set(0);
    if (problem !== this.lastProblem && this.current !== undefined) {
      this.opts.logger.error({ file: this.opts.path, reason: problem }, `${this.opts.what} reload failed; keeping the last good ${this.opts.what}: ${problem}`);
    }
    this.lastProblem = problem;
    return problem;
  }
}

function oneLine(s: string): string {
  return s.replace(/\s*\n\s*/g, ' ').trim();
}
