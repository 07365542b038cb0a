// One tenant's rule group evaluated once: its rules in order, each over the
// query path at the group's timestamp minus query_offset; their output (and
// stale markers for series that went away) written back like any push. A rule
// reading an earlier rule's output in the same group reads with strong
// consistency after that output was written, so it sees it.

import { labelsKey, type Labels } from '@strata/model';
import { parseExpr, walk, type QueryResult, type Sample } from '@strata/promql';
import type { SeriesInput } from '@strata/remote-write';
import { RulerError } from './errors.ts';
import type { RuleGroupDesc } from './rule-format.ts';
import { AlertingRule, RecordingRule, type NotifiedAlert, type OutputSample, type Rule, type TemplateContext } from './rules.ts';

export interface RuleQueryParams {
  tenant: string;
  expr: string;
  /** ms */
  time: number;
  /** Read every write acknowledged before this call (the querier's StrongReads). */
  strong: boolean;
}

/** The query path as rules see it: an instant query for a tenant. */
export interface RuleQuerier {
  query(p: RuleQueryParams): Promise<QueryResult>;
}

/** Where rule output goes: the distributor (tenant limits apply), in-process or over remote write. */
export interface RulePusher {
  push(tenant: string, series: SeriesInput[]): Promise<void>;
}

/** Where alerts go (Alertmanager); must not block the evaluation. */
export interface AlertSender {
  send(tenant: string, alerts: NotifiedAlert[]): void;
}

export interface GroupContext {
  querier: RuleQuerier;
  pusher: RulePusher;
  sender?: AlertSender;
  resendDelayMs: number;
  forOutageToleranceMs: number;
  forGracePeriodMs: number;
  externalURL: string;
  template: TemplateContext;
  onRuleFailure(group: EvaluatedGroup, rule: Rule, err: unknown): void;
}

export class EvaluatedGroup {
  readonly rules: Rule[];
  /** Per rule: whether it reads the output of an earlier rule of this group. */
  private readonly readsEarlier: boolean[];
  /** Per rule: the series its last successful evaluation wrote (for stale markers). */
  private readonly previous: Map<string, Labels>[];
  lastEvaluation = 0;
  /** seconds */
  evaluationTime = 0;
  private evaluated = false;

  readonly tenant: string;
  readonly namespace: string;
  readonly desc: RuleGroupDesc;
  readonly intervalMs: number;
  private readonly ctx: GroupContext;

  constructor(tenant: string, namespace: string, desc: RuleGroupDesc, intervalMs: number, ctx: GroupContext) {
    this.tenant = tenant;
    this.namespace = namespace;
    this.desc = desc;
    this.intervalMs = intervalMs;
    this.ctx = ctx;
    this.rules = desc.rules.map((r) => (r.record !== undefined ? new RecordingRule(r) : new AlertingRule(r, ctx.template)));
    this.readsEarlier = this.rules.map((_r, i) => readsOutputOf(this.rules[i].expr, this.rules.slice(0, i)));
    this.previous = this.rules.map(() => new Map<string, Labels>());
  }

  get name(): string {
    return this.desc.name;
  }
  get limit(): number {
    return this.desc.limit ?? 0;
  }
  get queryOffsetMs(): number {
    return this.desc.queryOffset ?? 0;
  }

  /** Keeps a previous version's alert state and written series (a reload must not reset `for`). */
  copyStateFrom(old: EvaluatedGroup): void {
    for (const [i, r] of this.rules.entries()) {
      const j = old.rules.findIndex((o) => o.type === r.type && o.name === r.name);
      if (j < 0) continue;
      const o = old.rules[j];
      if (r instanceof AlertingRule && o instanceof AlertingRule) r.copyState(o);
      this.previous[i] = old.previous[j];
    }
    this.evaluated = old.evaluated;
  }

  /** One evaluation at `ts` (ms). Rule failures are recorded on the rule and reported, never thrown. */
  async evaluate(ts: number): Promise<void> {
    const started = performance.now();
    const at = ts - this.queryOffsetMs;
    let pending: SeriesInput[] = [];
    const flush = async () => {
      if (pending.length === 0) return;
      const batch = pending;
      pending = [];
      await this.ctx.pusher.push(this.tenant, batch);
    };
    for (const [i, rule] of this.rules.entries()) {
      const ruleStart = performance.now();
      try {
        if (this.readsEarlier[i]) await flush();
        const result = await this.ctx.querier.query({ tenant: this.tenant, expr: rule.expr, time: at, strong: this.readsEarlier[i] });
        const vector = toVector(result, at);
        const out: OutputSample[] = rule instanceof RecordingRule ? rule.eval(vector, this.limit) : rule.eval(vector, ts, this.limit);
        pending.push(...this.withStaleMarkers(i, out, at));
        if (rule instanceof AlertingRule && this.ctx.sender) {
          const alerts = rule.alertsToSend(ts, this.ctx.resendDelayMs, this.intervalMs, this.generatorURL(rule.expr));
          if (alerts.length > 0) this.ctx.sender.send(this.tenant, alerts);
        }
        rule.setHealth(undefined, ts, (performance.now() - ruleStart) / 1000);
      } catch (err) {
        rule.setHealth(err, ts, (performance.now() - ruleStart) / 1000);
        this.ctx.onRuleFailure(this, rule, err);
      }
    }
    try {
      await flush();
    } catch (err) {
      this.ctx.onRuleFailure(this, this.rules[this.rules.length - 1], err);
    }
    if (!this.evaluated) {
      this.evaluated = true;
      await this.restoreForState(ts);
    }
    this.lastEvaluation = ts;
    this.evaluationTime = (performance.now() - started) / 1000;
  }

  /** Stale markers for every series this group wrote last (the group was removed). */
  async markStale(ts: number): Promise<void> {
    const series: SeriesInput[] = [];
    for (const prev of this.previous) for (const labels of prev.values()) series.push({ labels, samples: [{ value: NaN, timestamp: ts, stale: true }] });
    if (series.length > 0) await this.ctx.pusher.push(this.tenant, series);
  }

  private withStaleMarkers(i: number, out: OutputSample[], at: number): SeriesInput[] {
    const current = new Map<string, Labels>();
    const series: SeriesInput[] = out.map((o) => {
      current.set(labelsKey(o.labels), o.labels);
      return { labels: o.labels, samples: [{ value: o.value, timestamp: at }] };
    });
    for (const [key, labels] of this.previous[i]) {
      if (!current.has(key)) series.push({ labels, samples: [{ value: NaN, timestamp: at, stale: true }] });
    }
    this.previous[i] = current;
    return series;
  }

  /** After the first evaluation: active alerts take their `for` state from ALERTS_FOR_STATE (Prometheus' RestoreForState). */
  private async restoreForState(ts: number): Promise<void> {
    for (const rule of this.rules) {
      if (!(rule instanceof AlertingRule)) continue;
      if (rule.active.size === 0 || rule.holdDuration < this.ctx.forGracePeriodMs) {
        rule.restored = true;
        continue;
      }
      const rangeS = Math.max(1, Math.floor(this.ctx.forOutageToleranceMs / 1000));
      const selector = `ALERTS_FOR_STATE{alertname=${JSON.stringify(rule.name)}}[${rangeS}s]`;
      const last = new Map<string, { t: number; v: number }>();
      try {
        const res = await this.ctx.querier.query({ tenant: this.tenant, expr: selector, time: ts, strong: false });
        if (res.resultType === 'matrix') {
          for (const s of res.result) {
            const p = s.floats[s.floats.length - 1];
            if (p) last.set(labelsKey(s.metric), { t: p.t, v: p.f });
          }
        }
      } catch (err) {
        this.ctx.onRuleFailure(
          this,
          rule,
          new RulerError('restore-for-state', 'unavailable', `restoring the "for" state of ${rule.name}: ${(err as Error).message}`),
        );
      }
      rule.restore(ts, this.ctx.forGracePeriodMs, (labels) => last.get(labelsKey(labels)));
    }
  }

  private generatorURL(expr: string): string {
    const base = this.ctx.externalURL.replace(/\/$/, '');
    return `${base}/graph?g0.expr=${encodeURIComponent(expr)}&g0.tab=1`;
  }
}

/** An instant query's value as a vector; a scalar is one sample without labels (Prometheus' EngineQueryFunc). */
function toVector(r: QueryResult, at: number): Sample[] {
  switch (r.resultType) {
    case 'vector':
      return r.result.filter((s) => s.h === undefined);
    case 'scalar':
      return [{ metric: [], t: at, f: r.result.f }];
    default:
      throw new RulerError('rule-result-type', 'bad-input', `rule result is not a vector or scalar: ${r.resultType}`);
  }
}

/** Whether `expr` may select series an earlier rule writes (its record name, or ALERTS for an alerting rule). */
function readsOutputOf(expr: string, earlier: Rule[]): boolean {
  if (earlier.length === 0) return false;
  const written = new Set<string>();
  for (const r of earlier) {
    if (r instanceof RecordingRule) written.add(r.desc.record!);
    else written.add('ALERTS').add('ALERTS_FOR_STATE');
  }
  let reads = false;
  walk(parseExpr(expr, { enableExperimentalFunctions: true, enableDurationExpressions: true }), (node) => {
    if (node.kind !== 'vectorSelector') return;
    const nameMatchers = node.matchers.filter((m) => m.name === '__name__');
    const eq = nameMatchers.find((m) => m.type === '=');
    if (eq ? written.has(eq.value) : true) reads = true;
  });
  return reads;
}
