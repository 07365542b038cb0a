// Probe queries through the querier while the drill runs: each asks for one group's samples
// that were acknowledged at least `settleMs` ago and must come back exactly. Probes alternate
// between an instant range-vector query (raw samples) and a query_range on the sample grid (the
// path Grafana and the results cache take). The share answered exactly, per phase, is the
// drill's query availability.

import type { DrillSeries } from './drill-series.ts';
import { instantQuery, rangeQuery, type QueryOutcome } from './http-client.ts';
import type { Ledger } from './ledger.ts';
import { compare, lostOf } from './read-back.ts';
import { sleep } from './time.ts';

export interface ProberOptions {
  querierUrl: () => string;
  tenant: string;
  series: DrillSeries;
  ledger: Ledger;
  settleMs: number;
  /** Length of the window each probe reads. */
  windowMs: number;
  /** The load's sample interval: query_range probes step on exactly that grid. */
  sampleIntervalMs: number;
  intervalMs: number;
  timeoutMs: number;
}

export interface ProbeStats {
  total: number;
  ok: number;
  availability: number | null;
  failures: Record<string, number>;
  failure_examples: string[];
  p50_latency_ms: number | null;
  p99_latency_ms: number | null;
  max_latency_ms: number;
  /** Latency by probe kind: instant range-vector queries vs query_range (the results cache's path). */
  latency_by_kind: Record<string, { probes: number; p50_ms: number | null; p99_ms: number | null }>;
}

interface PhaseStats {
  total: number;
  ok: number;
  failures: Record<string, number>;
  examples: string[];
  latencies: number[];
  byKind: Map<string, number[]>;
}

export class Prober {
  private phase = 'warmup';
  private running = false;
  private loop: Promise<void> | undefined;
  private nextGroup = 0;
  private probes = 0;
  private readonly phases = new Map<string, PhaseStats>();

  private readonly opts: ProberOptions;

  constructor(opts: ProberOptions) {
    this.opts = opts;
  }

  start(phase: string): void {
    this.phase = phase;
    this.running = true;
    this.loop = this.run();
  }

  /** Probes started from now on count for `phase`. */
  setPhase(phase: string): void {
    this.phase = phase;
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  stats(phase: string): ProbeStats {
    const p = this.phases.get(phase) ?? newPhase();
    const sorted = [...p.latencies].sort((a, b) => a - b);
    const pct = (q: number): number | null => percentile(sorted, q);
    const byKind: ProbeStats['latency_by_kind'] = {};
    for (const [kind, l] of p.byKind) {
      const k = [...l].sort((a, b) => a - b);
      byKind[kind] = { probes: k.length, p50_ms: percentile(k, 0.5), p99_ms: percentile(k, 0.99) };
    }
    return {
      total: p.total,
      ok: p.ok,
      availability: p.total === 0 ? null : Math.round((p.ok / p.total) * 10_000) / 10_000,
      failures: { ...p.failures },
      failure_examples: [...p.examples],
      p50_latency_ms: pct(0.5),
      p99_latency_ms: pct(0.99),
      max_latency_ms: sorted.length === 0 ? 0 : sorted[sorted.length - 1],
      latency_by_kind: byKind,
    };
  }

  private async run(): Promise<void> {
    while (this.running) {
      const began = Date.now();
      await this.probeOnce();
      await sleep(Math.max(0, this.opts.intervalMs - (Date.now() - began)));
    }
  }

  private async probeOnce(): Promise<void> {
    const { series, ledger, settleMs, windowMs } = this.opts;
    const group = this.nextGroup;
    this.nextGroup = (this.nextGroup + 1) % series.groups;
    const members = series.seriesOfGroup(group);
    const settledAt = Date.now() - settleMs;
    let cutoff = Infinity;
    for (const i of members) cutoff = Math.min(cutoff, ledger.settledUpTo(i, settledAt) ?? -Infinity);
    if (!Number.isFinite(cutoff)) return; // nothing settled yet for this group: not a probe
    const from = cutoff - windowMs;
    const phase = this.phase;
    const kind = this.probes++ % 2 === 0 ? 'instant' : 'range';
    const began = Date.now();
    let res: QueryOutcome;
    if (kind === 'instant') {
      res = await instantQuery(this.opts.querierUrl(), this.opts.tenant, `${series.selector(group)}[${windowMs}ms]`, cutoff / 1000, this.opts.timeoutMs);
    } else {
      // Steps land on sample timestamps (cutoff is one), so each step's value is the sample at that time.
      const step = this.opts.sampleIntervalMs;
      const first = cutoff - Math.floor(windowMs / step) * step + step;
      const range = { startSeconds: first / 1000, endSeconds: cutoff / 1000, stepSeconds: step / 1000 };
      res = await rangeQuery(this.opts.querierUrl(), this.opts.tenant, series.selector(group), range, this.opts.timeoutMs);
    }
    const latency = Date.now() - began;
    let failure: string | undefined;
    if (!res.ok) failure = res.reason;
    else if (res.resultType !== 'matrix') failure = `resultType ${res.resultType}`;
    else {
      const c = compare(res.result, series, ledger, members, from, cutoff);
      if (c.checked === 0) return;
      if (lostOf(c) > 0 || c.unacked_present > 0 || c.duplicate_points > 0) {
        failure = `inexact answer: ${c.missing} missing, ${c.mismatched} wrong, ${c.unacked_present} unexpected, ${c.duplicate_points} duplicated of ${c.checked}`;
      }
    }
    this.record(phase, kind, failure, latency, group, cutoff);
  }

  private record(phase: string, kind: string, failure: string | undefined, latency: number, group: number, cutoff: number): void {
    let p = this.phases.get(phase);
    if (!p) this.phases.set(phase, (p = newPhase()));
    p.total++;
    p.latencies.push(latency);
    let kindLatencies = p.byKind.get(kind);
    if (!kindLatencies) p.byKind.set(kind, (kindLatencies = []));
    kindLatencies.push(latency);
    if (failure === undefined) {
      p.ok++;
      return;
    }
    const key = `${kind} ${failure.replace(/:.*$/s, '').slice(0, 60)}`;
    p.failures[key] = (p.failures[key] ?? 0) + 1;
    if (p.examples.length < 5) p.examples.push(`${new Date().toISOString()} ${kind} probe, group ${group} up to ${cutoff}: ${failure.slice(0, 300)}`);
  }
}

function newPhase(): PhaseStats {
  return { total: 0, ok: 0, failures: {}, examples: [], latencies: [], byKind: new Map() };
}

function percentile(sorted: readonly number[], q: number): number | null {
  return sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}
