// What a query cost, in the shape of Prometheus' util/stats (the `stats` parameter of
// /api/v1/query and /query_range), plus what it fetched from storage (Mimir's query stats).
// Counting never changes what a query answers; the per-step sample pass runs only when asked.

import type { Expr, SubqueryExpr, VectorSelector } from './ast.ts';
import { walk } from './ast.ts';
import type { PreparedSeries } from './prepared-series.ts';
import type { FetchedStats, QuerySamples, QueryStats, QueryTimings } from './stats-types.ts';

/** One selector's place in the query: its window and the subqueries above it (outermost first). */
interface SelectorPlace {
  node: VectorSelector;
  rangeMs: number;
  subqueries: SubqueryExpr[];
}

function selectorPlaces(expr: Expr): SelectorPlace[] {
  const out: SelectorPlace[] = [];
  walk(expr, (node, path) => {
    if (node.kind !== 'vectorSelector') return;
    const parent = path[path.length - 1];
    // info()'s label selector is not data.
    if (parent?.kind === 'call' && parent.func.name === 'info' && parent.args[1] === node) return;
    const rangeMs = parent?.kind === 'matrixSelector' ? parent.rangeMs : 0;
    out.push({ node, rangeMs, subqueries: path.filter((n): n is SubqueryExpr => n.kind === 'subquery') });
  });
  return out;
}

/** Index of the first element of sorted `ts` greater than `t`. */
function upperBound(ts: Float64Array, t: number): number {
  let lo = 0;
  let hi = ts.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ts[mid] <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Live (non-stale) samples of `s` in (from, to]. */
function liveIn(s: PreparedSeries, from: number, to: number): number {
  let n = upperBound(s.live.t, to) - upperBound(s.live.t, from);
  if (s.liveH) n += upperBound(s.liveH.t, to) - upperBound(s.liveH.t, from);
  return n;
}

/** Whether the newest sample of `s` in (from, to] exists and is not a staleness marker (Prometheus' vectorSelectorSingle). */
function hasPoint(s: PreparedSeries, from: number, to: number): boolean {
  const i = upperBound(s.t, to) - 1;
  if (i < 0 || s.t[i] <= from) return false;
  return s.stale === null || s.stale[i] === 0;
}

/** The times a selector under `subqueries` is evaluated at for one outer step (Prometheus 3's left-open subquery ranges). */
function evalTimes(outer: number, subqueries: SubqueryExpr[], defaultStepMs: number): number[] {
  let times = [outer];
  for (const sq of subqueries) {
    const step = sq.stepMs > 0 ? sq.stepMs : defaultStepMs;
    const next: number[] = [];
    for (const t of times) {
      const end = (sq.atMs ?? t) - sq.offsetMs;
      const start = end - sq.rangeMs;
      for (let u = Math.floor(start / step) * step + step; u <= end; u += step) next.push(u);
    }
    times = next;
  }
  return times;
}

export interface SampleCountInput {
  expr: Expr;
  data: Map<unknown, PreparedSeries[]>;
  start: number;
  end: number;
  /** 1 for an instant query. */
  interval: number;
  lookbackMs: number;
  defaultSubqueryStepMs: number;
  perStep: boolean;
  peakSamples: number;
}

/**
 * Prometheus' sample statistics, counted from the fetched data at every step the query is
 * evaluated at: an instant selector counts the series with a sample in its lookback window, a
 * range selector the samples in its window (read: only those past the previous step's window);
 * a subquery's selectors count at each of its inner steps within the outer step. A native
 * histogram counts as one sample (Prometheus weighs it by its size).
 */
export function countQueryableSamples(q: SampleCountInput): QuerySamples {
  const steps = Math.floor((q.end - q.start) / q.interval) + 1;
  const total = new Array<number>(steps).fill(0);
  const read = new Array<number>(steps).fill(0);
  let seriesTouched = 0;
  for (const place of selectorPlaces(q.expr)) {
    const series = q.data.get(place.node) ?? [];
    seriesTouched += series.length;
    const { offsetMs, atMs } = place.node;
    for (let i = 0; i < steps; i++) {
      const outer = q.start + i * q.interval;
      const times = evalTimes(outer, place.subqueries, q.defaultSubqueryStepMs);
      for (let k = 0; k < times.length; k++) {
        const to = (atMs ?? times[k]) - offsetMs;
        if (place.rangeMs === 0) {
          let n = 0;
          for (const s of series) if (hasPoint(s, to - q.lookbackMs, to)) n++;
          total[i] += n;
          read[i] += n;
          continue;
        }
        const from = to - place.rangeMs;
        // Overlapping windows of consecutive steps read their common samples once.
        const prevTo = k > 0 ? (atMs ?? times[k - 1]) - offsetMs : i > 0 && place.subqueries.length === 0 ? (atMs ?? outer - q.interval) - offsetMs : -Infinity;
        const readFrom = Math.max(from, prevTo);
        for (const s of series) {
          total[i] += liveIn(s, from, to);
          if (readFrom < to) read[i] += liveIn(s, readFrom, to);
        }
      }
    }
  }
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const at = (xs: number[]): [number, number][] | undefined => (q.perStep ? xs.map((v, i) => [(q.start + i * q.interval) / 1000, v]) : undefined);
  // Prometheus' field order.
  return {
    totalQueryableSamplesPerStep: at(total),
    totalQueryableSamples: sum(total),
    samplesReadPerStep: at(read),
    samplesRead: sum(read),
    seriesTouched,
    peakSamples: q.peakSamples,
  };
}

/** Stats of shards answered one after the other, as one query's. */
export function mergeShardStats(parts: QueryStats[], timings: QueryTimings): QueryStats {
  const fetched: FetchedStats = { fetchedSeriesCount: 0, fetchedChunksCount: 0, fetchedChunkBytes: 0, fetchedSamplesCount: 0, shardedQueries: parts.length };
  let samples: QuerySamples | undefined;
  for (const p of parts) {
    fetched.fetchedSeriesCount += p.fetched.fetchedSeriesCount;
    fetched.fetchedChunksCount += p.fetched.fetchedChunksCount;
    fetched.fetchedChunkBytes += p.fetched.fetchedChunkBytes;
    fetched.fetchedSamplesCount += p.fetched.fetchedSamplesCount;
    if (!p.samples) continue;
    if (!samples) {
      samples = { ...p.samples };
      continue;
    }
    samples.totalQueryableSamples += p.samples.totalQueryableSamples;
    samples.samplesRead += p.samples.samplesRead;
    samples.seriesTouched += p.samples.seriesTouched;
    samples.peakSamples = Math.max(samples.peakSamples, p.samples.peakSamples);
    samples.totalQueryableSamplesPerStep = addSteps(samples.totalQueryableSamplesPerStep, p.samples.totalQueryableSamplesPerStep);
    samples.samplesReadPerStep = addSteps(samples.samplesReadPerStep, p.samples.samplesReadPerStep);
  }
  return samples ? { timings, samples, fetched } : { timings, fetched };
}

function addSteps(a: [number, number][] | undefined, b: [number, number][] | undefined): [number, number][] | undefined {
  if (!a || !b) return a ?? b;
  return a.map(([t, v], i) => [t, v + (b[i]?.[1] ?? 0)]);
}
