// The ruler: loads every tenant's rule groups from the bucket (at start, every
// -ruler.poll-interval, and at once after a config API change), and evaluates
// each group it owns at its interval on Prometheus' schedule (a per-group
// offset within the interval; late ticks are counted as missed, never queued).

import { createHash } from 'node:crypto';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Logger } from '@strata/service';
import { EvaluatedGroup, type AlertSender, type GroupContext, type RulePusher, type RuleQuerier } from './group.ts';
import { groupToYaml } from './rule-format.ts';
import type { RuleStore } from './rule-store.ts';
import type { Rule } from './rules.ts';

export interface RulerOptions {
  store: RuleStore;
  querier: RuleQuerier;
  pusher: RulePusher;
  sender?: AlertSender;
  logger: Logger;
  registry: Registry;
  evaluationIntervalMs: number;
  pollIntervalMs: number;
  resendDelayMs: number;
  forOutageToleranceMs: number;
  forGracePeriodMs: number;
  externalURL: string;
  externalLabels?: Record<string, string>;
  /** Whether this ruler evaluates the group (the ruler ring); default: every group. */
  owns?: (tenant: string, namespace: string, group: string) => boolean;
}

interface Scheduled {
  group: EvaluatedGroup;
  yaml: string;
  nextEval: number;
  timer?: NodeJS.Timeout;
  running?: Promise<void>;
  stopped: boolean;
}

export class Ruler {
  private readonly scheduled = new Map<string, Scheduled>();
  private pollTimer?: NodeJS.Timeout;
  private stopped = false;
  private syncing: Promise<void> = Promise.resolve();
  private queuedSync?: { tenant?: string; done: Promise<void> };
  private readonly ctx: GroupContext;
  private readonly failures: Counter;
  private readonly missed: Counter;
  private readonly evaluations: Counter;
  private readonly duration: Histogram;
  private readonly lag: Histogram;

  private readonly opts: RulerOptions;

  constructor(opts: RulerOptions) {
    this.opts = opts;
    this.failures = new Counter({
      name: 'strata_ruler_evaluation_failures_total',
      help: 'Rule evaluations that failed (query, limit or write-back errors), by tenant.',
      labelNames: ['tenant'],
      registers: [opts.registry],
    });
    this.missed = new Counter({
      name: 'strata_ruler_missed_iterations_total',
      help: 'Group evaluations skipped because the previous one ran past the interval, by tenant.',
      labelNames: ['tenant'],
      registers: [opts.registry],
    });
    this.evaluations = new Counter({
      name: 'strata_ruler_group_evaluations_total',
      help: 'Rule group evaluations, by tenant.',
      labelNames: ['tenant'],
      registers: [opts.registry],
    });
    this.duration = new Histogram({
      name: 'strata_ruler_group_evaluation_duration_seconds',
      help: 'Duration of one rule group evaluation.',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [opts.registry],
    });
    this.lag = new Histogram({
      name: 'strata_ruler_group_evaluation_lag_seconds',
      help: "Time between a group evaluation's scheduled time and its start (timer and event-loop delay; missed iterations are counted apart).",
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [opts.registry],
    });
    const scheduled = this.scheduled;
    new Gauge({
      name: 'strata_ruler_rule_groups',
      help: 'Rule groups this ruler evaluates.',
      registers: [opts.registry],
      collect() {
        this.set(scheduled.size);
      },
    });
    this.ctx = {
      querier: opts.querier,
      pusher: opts.pusher,
      sender: opts.sender,
      resendDelayMs: opts.resendDelayMs,
      forOutageToleranceMs: opts.forOutageToleranceMs,
      forGracePeriodMs: opts.forGracePeriodMs,
      externalURL: opts.externalURL,
      template: { externalLabels: opts.externalLabels ?? {}, externalURL: opts.externalURL },
      onRuleFailure: (g, rule, err) => this.ruleFailed(g, rule, err),
    };
  }

  async start(): Promise<void> {
    await this.sync();
    this.pollTimer = setInterval(
      () => void this.sync().catch((err: unknown) => this.opts.logger.warn({ err: (err as Error).message }, 'loading rule groups failed')),
      this.opts.pollIntervalMs,
    );
    this.pollTimer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.pollTimer);
    await this.syncing.catch(() => undefined);
    const running: Promise<void>[] = [];
    for (const s of this.scheduled.values()) {
      s.stopped = true;
      clearTimeout(s.timer);
      if (s.running) running.push(s.running);
    }
    await Promise.allSettled(running);
    this.scheduled.clear();
  }

  /** Re-reads the rule groups (of one tenant, or all) and starts, replaces or stops groups to match. */
  sync(tenant?: string): Promise<void> {
    // A sync still waiting for the one before it covers this one too (1,000 uploads in a row
    // load the groups a few times, not 1,000 times).
    const queued = this.queuedSync;
    if (queued && (queued.tenant === undefined || queued.tenant === tenant)) return queued.done;
    const entry: { tenant?: string; done: Promise<void> } = { tenant, done: Promise.resolve() };
    entry.done = this.syncing
      .catch(() => undefined)
      .then(() => {
        if (this.queuedSync === entry) this.queuedSync = undefined;
        return this.load(tenant);
      });
    this.queuedSync = entry;
    this.syncing = entry.done;
    return entry.done;
  }

  /** Every group this ruler evaluates, of every tenant (the status page). */
  allGroups(): EvaluatedGroup[] {
    return [...this.scheduled.values()].map((s) => s.group);
  }

  /** The tenant's groups this ruler evaluates, by namespace then name. */
  groups(tenant: string): { namespace: string; group: EvaluatedGroup }[] {
    return [...this.scheduled.values()]
      .filter((s) => s.group.tenant === tenant)
      .map((s) => ({ namespace: s.group.namespace, group: s.group }))
      .sort((a, b) => (a.namespace === b.namespace ? cmp(a.group.name, b.group.name) : cmp(a.namespace, b.namespace)));
  }

  private async load(onlyTenant?: string): Promise<void> {
    if (this.stopped) return;
    const tenants = onlyTenant !== undefined ? [onlyTenant] : await this.opts.store.tenants();
    const wanted = new Map<string, { tenant: string; namespace: string; yaml: string; group: EvaluatedGroup['desc'] }>();
    for (const tenant of tenants) {
      for (const g of await this.opts.store.list(tenant)) {
        if (this.opts.owns && !this.opts.owns(tenant, g.namespace, g.group.name)) continue;
        wanted.set(groupKey(tenant, g.namespace, g.group.name), { tenant, namespace: g.namespace, yaml: groupToYaml(g.group), group: g.group });
      }
    }
    for (const [key, s] of this.scheduled) {
      if (onlyTenant !== undefined && s.group.tenant !== onlyTenant) continue;
      if (wanted.has(key)) continue;
      this.unschedule(key, s, true);
    }
    if (this.stopped) return;
    for (const [key, w] of wanted) {
      const old = this.scheduled.get(key);
      if (old && old.yaml === w.yaml) continue;
      const interval = w.group.interval ?? this.opts.evaluationIntervalMs;
      const group = new EvaluatedGroup(w.tenant, w.namespace, w.group, interval, this.ctx);
      let nextEval: number;
      if (old) {
        group.copyStateFrom(old.group);
        this.unschedule(key, old, false);
        nextEval = firstEvaluation(key, interval, Date.now());
      } else {
        nextEval = firstEvaluation(key, interval, Date.now());
      }
      const s: Scheduled = { group, yaml: w.yaml, nextEval, stopped: false };
      this.scheduled.set(key, s);
      this.schedule(s);
    }
  }

  private unschedule(key: string, s: Scheduled, markStale: boolean): void {
    s.stopped = true;
    clearTimeout(s.timer);
    this.scheduled.delete(key);
    if (!markStale) return;
    // A removed group's series go stale at once, as in Prometheus, after its last evaluation.
    const done = (s.running ?? Promise.resolve()).then(() => s.group.markStale(Date.now()));
    done.catch((err: unknown) =>
      this.opts.logger.warn(
        { tenant: s.group.tenant, group: s.group.name, err: (err as Error).message },
        'writing stale markers of a removed rule group failed',
      ),
    );
  }

  private schedule(s: Scheduled): void {
    if (s.stopped) return;
    s.timer = setTimeout(
      () => {
        s.running = this.tick(s).finally(() => {
          s.running = undefined;
          this.schedule(s);
        });
      },
      Math.max(0, s.nextEval - Date.now()),
    );
  }

  private async tick(s: Scheduled): Promise<void> {
    const interval = s.group.intervalMs;
    const now = Date.now();
    const missed = Math.floor((now - s.nextEval) / interval);
    this.lag.observe(Math.max(0, now - s.nextEval - Math.max(0, missed) * interval) / 1000);
    if (missed > 0) this.missed.inc({ tenant: s.group.tenant }, missed);
    const ts = s.nextEval + Math.max(0, missed) * interval;
    s.nextEval = ts + interval;
    const end = this.duration.startTimer();
    try {
      await s.group.evaluate(ts);
    } finally {
      end();
      this.evaluations.inc({ tenant: s.group.tenant });
    }
  }

  private ruleFailed(g: EvaluatedGroup, rule: Rule, err: unknown): void {
    this.failures.inc({ tenant: g.tenant });
    this.opts.logger.warn({ tenant: g.tenant, namespace: g.namespace, group: g.name, rule: rule.name, err: (err as Error).message }, 'rule evaluation failed');
  }
}

function groupKey(tenant: string, namespace: string, group: string): string {
  return `${tenant}\u0000${namespace}\u0000${group}`;
}

/** The group's first evaluation: the next tick of its interval, shifted by a per-group offset so groups spread out. */
function firstEvaluation(key: string, interval: number, now: number): number {
  const offset = Number(createHash('sha256').update(key).digest().readBigUInt64BE(0) % BigInt(interval));
  const adj = now - offset;
  const base = adj - (adj % interval);
  return base + offset + interval;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
