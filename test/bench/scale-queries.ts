// The scale run's queries: range queries over the whole backfilled span at a 60 s step, one
// answering 1 series and one answering one instance's CPU series, timed N times (the first
// run not counted), and their answers compared between targets point by point.

import { performance } from 'node:perf_hooks';
import { percentile } from './latency.ts';
import type { ScalePlan } from './scale-data.ts';
import type { SeriesSet } from './series.ts';
import type { BenchTarget } from './targets.ts';

export interface ScaleQuery {
  label: string;
  query: string;
  expectSeries: number;
}

type Matrix = { metric: Record<string, string>; values: [number, string][] }[];

export interface QueryTiming extends ScaleQuery {
  /** Counted runs, ms, sorted. */
  runs: number[];
  firstRunMs: number;
  p50: number;
  max: number;
  series: number;
  points: number;
  errors: number;
  firstError?: string;
  answer?: Matrix;
}

const QUERY_STEP_S = 60;
const QUERY_TIMEOUT_MS = 300_000;

/**
 * One instance in the middle of the set. The range is twice the sample spacing: a left-open window
 * of one spacing would hold a single sample, and rate() needs two.
 */
export function scaleQueries(plan: ScalePlan, set: SeriesSet): ScaleQuery[] {
  const instance = set.instance(Math.floor(set.targets / 2));
  const range = `${(2 * plan.stepMs) / 60_000}m`;
  return [
    { label: '1 series', query: `max_over_time(node_load1{instance="${instance}"}[${range}])`, expectSeries: 1 },
    { label: `${8 * plan.cpus} series`, query: `rate(node_cpu_seconds_total{instance="${instance}"}[${range}])`, expectSeries: 8 * plan.cpus },
  ];
}

export async function timeQuery(target: BenchTarget, q: ScaleQuery, plan: ScalePlan, runs: number): Promise<QueryTiming> {
  const params = new URLSearchParams({
    query: q.query,
    start: String((plan.endTs - plan.spanMs) / 1000),
    end: String(plan.endTs / 1000),
    step: String(QUERY_STEP_S),
  });
  const out: QueryTiming = { ...q, runs: [], firstRunMs: NaN, p50: NaN, max: NaN, series: 0, points: 0, errors: 0 };
  for (let i = 0; i <= runs; i++) {
    const t0 = performance.now();
    try {
      const res = await fetch(`${target.queryBase}/api/v1/query_range`, {
        method: 'POST',
        body: params,
        headers: { ...target.headers, 'content-type': 'application/x-www-form-urlencoded' },
        signal: AbortSignal.timeout(QUERY_TIMEOUT_MS),
      });
      const body = (await res.json()) as { status: string; error?: string; data?: { result?: Matrix } };
      const ms = performance.now() - t0;
      if (res.status !== 200 || body.status !== 'success') {
        out.errors++;
        out.firstError ??= `${res.status} ${body.error ?? ''}`.slice(0, 300);
        continue;
      }
      out.answer = body.data?.result ?? [];
      // The first run warms caches (page cache, JIT, decoded chunks); it is not counted.
      if (i === 0) out.firstRunMs = ms;
      else out.runs.push(ms);
    } catch (err) {
      out.errors++;
      out.firstError ??= (err as Error).message;
    }
  }
  out.runs.sort((a, b) => a - b);
  out.p50 = percentile(out.runs, 50);
  out.max = out.runs.at(-1) ?? NaN;
  out.series = out.answer?.length ?? 0;
  out.points = (out.answer ?? []).reduce((n, s) => n + s.values.length, 0);
  return out;
}

/** Whether two answers hold the same series and points (values equal to 1e-9 relative); what differs first. */
export function compareAnswers(a: Matrix | undefined, b: Matrix | undefined): { equal: boolean; summary: string } {
  if (!a || !b) return { equal: false, summary: 'no answer to compare' };
  const key = (m: Record<string, string>) => JSON.stringify(Object.entries(m).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));
  const bySeries = new Map(b.map((s) => [key(s.metric), s.values]));
  let onlyA = 0;
  let points = 0;
  let differing = 0;
  let missing = 0;
  let first: string | undefined;
  for (const s of a) {
    const k = key(s.metric);
    const other = bySeries.get(k);
    bySeries.delete(k);
    if (!other) {
      onlyA++;
      first ??= `series ${k} only in the first`;
      continue;
    }
    const otherAt = new Map(other.map(([t, v]) => [t, v]));
    for (const [t, v] of s.values) {
      points++;
      const w = otherAt.get(t);
      otherAt.delete(t);
      if (w === undefined) {
        missing++;
        first ??= `${k} at ${t}: ${v} against no point`;
      } else if (!sameValue(v, w)) {
        differing++;
        first ??= `${k} at ${t}: ${v} against ${w}`;
      }
    }
    missing += otherAt.size;
    if (otherAt.size > 0) first ??= `${k}: ${otherAt.size} points only in the second (first at ${[...otherAt.keys()][0]})`;
  }
  const onlyB = bySeries.size;
  if (onlyB > 0) first ??= `series ${[...bySeries.keys()][0]} only in the second`;
  const equal = onlyA === 0 && onlyB === 0 && differing === 0 && missing === 0;
  const summary = equal
    ? `equal: ${a.length} series, ${points.toLocaleString('en-US')} points`
    : `${differing} of ${points} points differ, ${missing} points and ${onlyA + onlyB} series in one answer only; first: ${first}`;
  return { equal, summary };
}

function sameValue(a: string, b: string): boolean {
  if (a === b) return true;
  const x = Number(a);
  const y = Number(b);
  if (Number.isNaN(x) || Number.isNaN(y)) return false;
  return Math.abs(x - y) <= 1e-9 * Math.max(Math.abs(x), Math.abs(y));
}
