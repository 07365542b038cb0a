// Recording and alerting rules with Prometheus' semantics (rules/recording.go,
// rules/alerting.go): a recording rule renames and relabels its query's
// vector; an alerting rule keeps alerts pending for `for`, firing, kept firing
// for `keep_firing_for`, resolved (and kept 15 minutes to be sent as resolved).
// No I/O here: the group passes query results in and takes series out.

import { labelsFromRecord, labelsKey, labelsToRecord, type Labels } from '@strata/model';
import type { Sample } from '@strata/promql';
import { RulerError } from './errors.ts';
import type { RuleDesc } from './rule-format.ts';
import { expandTemplate } from './template.ts';

/** A sample to write back: labels (with __name__) and value at the evaluation's timestamp. */
export interface OutputSample {
  labels: Labels;
  value: number;
  stale?: boolean;
}

export type RuleHealth = 'unknown' | 'ok' | 'err';
export type AlertState = 'inactive' | 'pending' | 'firing';

export interface Alert {
  labels: Labels;
  annotations: Record<string, string>;
  state: AlertState;
  value: number;
  /** ms */
  activeAt: number;
  firedAt: number;
  resolvedAt: number;
  lastSentAt: number;
  keepFiringSince: number;
  validUntil: number;
}

/** What an alert looks like to Alertmanager (v2 API), times in ms. */
export interface NotifiedAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: number;
  endsAt: number;
  generatorURL: string;
}

/** Alerts that stopped firing stay this long, so they are sent as resolved (Prometheus' resolvedRetention). */
const RESOLVED_RETENTION_MS = 15 * 60_000;

export interface TemplateContext {
  externalLabels: Record<string, string>;
  externalURL: string;
}

abstract class RuleBase {
  health: RuleHealth = 'unknown';
  lastError = '';
  /** ms; 0: never evaluated. */
  lastEvaluation = 0;
  /** seconds */
  evaluationTime = 0;
  readonly desc: RuleDesc;

  constructor(desc: RuleDesc) {
    this.desc = desc;
  }
  get name(): string {
    return this.desc.record ?? this.desc.alert!;
  }
  get expr(): string {
    return this.desc.expr;
  }
  get labels(): Record<string, string> {
    return this.desc.labels ?? {};
  }
  setHealth(err: unknown, ts: number, seconds: number): void {
    this.health = err === undefined ? 'ok' : 'err';
    this.lastError = err === undefined ? '' : (err as Error).message;
    this.lastEvaluation = ts;
    this.evaluationTime = seconds;
  }
}

export class RecordingRule extends RuleBase {
  readonly type = 'recording';

  /** The query's vector renamed to the record name with the rule's labels; throws on a limit or label clash. */
  eval(vector: Sample[], limit: number): OutputSample[] {
    const seen = new Set<string>();
    const out: OutputSample[] = [];
    for (const s of vector) {
      const rec = labelsToRecord(s.metric);
      rec.__name__ = this.desc.record!;
      for (const [k, v] of Object.entries(this.labels)) {
        if (v === '') delete rec[k];
        else rec[k] = v;
      }
      const labels = labelsFromRecord(rec);
      const key = labelsKey(labels);
      if (seen.has(key))
        throw new RulerError('rule-duplicate-labelset', 'unprocessable', 'vector contains metrics with the same labelset after applying rule labels');
      seen.add(key);
      out.push({ labels, value: s.f });
    }
    if (limit > 0 && out.length > limit) throw new RulerError('rule-limit', 'unprocessable', `exceeded limit of ${limit} with ${out.length} series`);
    return out;
  }
}

export class AlertingRule extends RuleBase {
  readonly type = 'alerting';
  /** By alert label set. */
  active = new Map<string, Alert>();
  /** Whether `for` state was restored (or needs no restoring); ALERTS are written only once it is. */
  restored = false;

  private readonly tmpl: TemplateContext;

  constructor(desc: RuleDesc, tmpl: TemplateContext) {
    super(desc);
    this.tmpl = tmpl;
  }

  get holdDuration(): number {
    return this.desc.for ?? 0;
  }
  get keepFiringFor(): number {
    return this.desc.keepFiringFor ?? 0;
  }
  get annotations(): Record<string, string> {
    return this.desc.annotations ?? {};
  }

  /** The rule's state: the worst of its alerts. */
  state(): AlertState {
    let s: AlertState = 'inactive';
    for (const a of this.active.values()) {
      if (a.state === 'firing') return 'firing';
      if (a.state === 'pending') s = 'pending';
    }
    return s;
  }

  /**
   * One evaluation at `ts` (ms) over the query's vector; returns the ALERTS and
   * ALERTS_FOR_STATE samples. Throws when the alerts exceed `limit` (all of them are then dropped).
   */
  eval(vector: Sample[], ts: number, limit: number): OutputSample[] {
    const found = new Map<string, { labels: Labels; annotations: Record<string, string>; value: number }>();
    for (const s of vector) {
      const metric = labelsToRecord(s.metric);
      const data = { labels: metric, externalLabels: this.tmpl.externalLabels, externalURL: this.tmpl.externalURL, value: s.f };
      const rec = { ...metric };
      delete rec.__name__;
      for (const [k, v] of Object.entries(this.labels)) {
        const expanded = expandTemplate(this.name, v, data);
        if (expanded === '') delete rec[k];
        else rec[k] = expanded;
      }
      rec.alertname = this.name;
      const annotations: Record<string, string> = {};
      for (const [k, v] of Object.entries(this.annotations)) annotations[k] = expandTemplate(this.name, v, data);
      const labels = labelsFromRecord(rec);
      const key = labelsKey(labels);
      if (found.has(key))
        throw new RulerError('rule-duplicate-labelset', 'unprocessable', 'vector contains metrics with the same labelset after applying alert labels');
      found.set(key, { labels, annotations, value: s.f });
    }
    for (const [key, f] of found) {
      const a = this.active.get(key);
      if (a && a.state !== 'inactive') {
        a.value = f.value;
        a.annotations = f.annotations;
        continue;
      }
      this.active.set(key, { ...f, state: 'pending', activeAt: ts, firedAt: 0, resolvedAt: 0, lastSentAt: 0, keepFiringSince: 0, validUntil: 0 });
    }
    const out: OutputSample[] = [];
    let activeOrPending = 0;
    for (const [key, a] of this.active) {
      if (!found.has(key)) {
        let keepFiring = false;
        if (a.state === 'firing' && this.keepFiringFor > 0) {
          if (a.keepFiringSince === 0) a.keepFiringSince = ts;
          if (ts - a.keepFiringSince < this.keepFiringFor) keepFiring = true;
        }
        // A firing alert stays (inactive) for a while so it is sent as resolved.
        if (a.state === 'pending' || (a.resolvedAt !== 0 && ts - a.resolvedAt > RESOLVED_RETENTION_MS)) this.active.delete(key);
        if (a.state !== 'inactive' && !keepFiring) {
          a.state = 'inactive';
          a.resolvedAt = ts;
        }
        if (!keepFiring) continue;
      } else {
        a.keepFiringSince = 0;
      }
      activeOrPending++;
      if (a.state === 'pending' && ts - a.activeAt >= this.holdDuration) {
        a.state = 'firing';
        a.firedAt = ts;
      }
      if (this.restored) {
        out.push({ labels: withName(a.labels, 'ALERTS', a.state), value: 1 });
        out.push({ labels: withName(a.labels, 'ALERTS_FOR_STATE'), value: Math.floor(a.activeAt / 1000) });
      }
    }
    if (limit > 0 && activeOrPending > limit) {
      this.active.clear();
      throw new RulerError('rule-limit', 'unprocessable', `exceeded limit of ${limit} with ${activeOrPending} alerts`);
    }
    return out;
  }

  /** Alerts due to be sent at `ts` (Prometheus' needsSending / sendAlerts), marked as sent. */
  alertsToSend(ts: number, resendDelayMs: number, intervalMs: number, generatorURL: string): NotifiedAlert[] {
    const out: NotifiedAlert[] = [];
    for (const a of this.active.values()) {
      if (a.state === 'pending') continue;
      const due = a.resolvedAt > a.lastSentAt || a.lastSentAt + resendDelayMs < ts;
      if (!due) continue;
      a.lastSentAt = ts;
      a.validUntil = ts + 4 * Math.max(resendDelayMs, intervalMs);
      out.push({
        labels: labelsToRecord(a.labels),
        annotations: a.annotations,
        startsAt: a.firedAt,
        endsAt: a.resolvedAt !== 0 ? a.resolvedAt : a.validUntil,
        generatorURL,
      });
    }
    return out;
  }

  /** Pending and firing alerts (the /api/v1/alerts view). */
  activeAlerts(): Alert[] {
    return [...this.active.values()].filter((a) => a.state !== 'inactive');
  }

  /**
   * Restores `for` state from the last ALERTS_FOR_STATE sample of each active
   * alert (Prometheus' RestoreForState): `last` maps an alert's
   * ALERTS_FOR_STATE label key to its newest sample (t ms, v = activeAt in s).
   */
  restore(ts: number, forGracePeriodMs: number, last: (forStateLabels: Labels) => { t: number; v: number } | undefined): void {
    if (this.holdDuration < forGracePeriodMs) {
      this.restored = true;
      return;
    }
    for (const a of this.active.values()) {
      const sample = last(withName(a.labels, 'ALERTS_FOR_STATE'));
      if (!sample || Number.isNaN(sample.v)) continue;
      const downAt = Math.floor(sample.t / 1000) * 1000;
      let restoredActiveAt = Math.trunc(sample.v) * 1000;
      const remaining = this.holdDuration - (downAt - restoredActiveAt);
      if (remaining <= 0) {
        // It was firing already: keep the old activeAt.
      } else if (remaining < forGracePeriodMs) {
        restoredActiveAt = ts + forGracePeriodMs - this.holdDuration;
      } else {
        restoredActiveAt += ts - downAt;
      }
      a.activeAt = restoredActiveAt;
    }
    this.restored = true;
  }

  /** Takes over a previous version's alerts (a reloaded group keeps its state, as Prometheus' CopyState). */
  copyState(from: AlertingRule): void {
    this.active = from.active;
    this.restored = from.restored;
  }
}

export type Rule = RecordingRule | AlertingRule;

function withName(labels: Labels, name: string, alertstate?: string): Labels {
  const rec = labelsToRecord(labels);
  rec.__name__ = name;
  if (alertstate !== undefined) rec.alertstate = alertstate;
  return labelsFromRecord(rec);
}
