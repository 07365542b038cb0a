// The query-frontend results cache for range queries: a query is aligned to
// its step, split at interval boundaries (24h by default), and each split is
// answered from cached extents plus engine runs for what is missing. Extents
// are stored per tenant, and never hold points newer than the max freshness
// (10m by default): recent data may still change.

import { createHash } from 'node:crypto';
import type { Labels } from '@strata/model';
import { compareLabels, labelsKey } from '@strata/model';
import type { DurationExpr, Expr, HPoint, QueryResult, RangeQueryParams } from '@strata/promql';
import { formatValue, parseExpr, walk } from '@strata/promql';
import { Counter, type Registry } from 'prom-client';

/** Where extents live (Redis in production, a Map in tests). */
export interface CacheBackend {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlMs: number): Promise<void>;
}

export interface ResultsCacheOptions {
  backend: CacheBackend;
  /** Splits end at multiples of this (ms). */
  splitIntervalMs: number;
  /** Points newer than now minus this are never cached (ms). */
  maxFreshnessMs: number;
  /** How long an extent set lives in the cache (ms). */
  ttlMs: number;
  registry?: Registry;
  now?: () => number;
  /** At most this many splits run against the engine at once: fixed, or the tenant's max_query_parallelism. */
  concurrency?: number | ((tenant: string) => number);
}

type Exec = (p: RangeQueryParams) => Promise<QueryResult>;

/** One cached run: the points of [start, end] on the step grid, per series. */
interface Extent {
  start: number;
  end: number;
  series: { metric: Labels; points: [number, string][] }[];
}

type SeriesPoints = Map<string, { metric: Labels; points: { t: number; f: number }[]; histograms: HPoint[] }>;

const KEY_VERSION = 'v1';

export class ResultsCache {
  private readonly requests: Counter<'result'>;
  private readonly now: () => number;

  private readonly opts: ResultsCacheOptions;

  constructor(opts: ResultsCacheOptions) {
    this.opts = opts;
    this.now = opts.now ?? Date.now;
    this.requests = new Counter({
      name: 'strata_querier_results_cache_requests_total',
      help: 'Range query splits by how the results cache answered them: hit, partial, miss, or uncacheable queries.',
      labelNames: ['result'],
      registers: opts.registry ? [opts.registry] : [],
    });
  }

  /**
   * Answers a range query from cached extents and engine runs. Queries whose
   * steps depend on the query's own range (@, start(), end(), range(),
   * negative offsets) run unsplit and uncached.
   */
  async rangeQuery(p: RangeQueryParams, exec: Exec): Promise<QueryResult> {
    if (!isSplittable(p.query)) {
      this.requests.inc({ result: 'uncacheable' });
      return exec(p);
    }
    const step = p.step;
    const start = Math.floor(p.start / step) * step;
    const end = Math.floor(p.end / step) * step;
    const splits = splitByInterval(start, end, step, this.opts.splitIntervalMs);
    const results = new Array<QueryResult>(splits.length);
    let next = 0;
    const worker = async () => {
      while (next < splits.length) {
        const i = next++;
        results[i] = await this.split({ ...p, start: splits[i][0], end: splits[i][1] }, exec);
      }
    };
    const c = this.opts.concurrency;
    const parallelism = Math.max(1, typeof c === 'function' ? c(p.tenant) : (c ?? 4));
    await Promise.all(Array.from({ length: Math.min(parallelism, splits.length) }, worker));
    return mergeResults(results);
  }

  /** One split: cached extents for what they cover, the engine for the gaps. */
  private async split(p: RangeQueryParams, exec: Exec): Promise<QueryResult> {
    const key = this.key(p);
    const extents = await this.load(key);
    const gaps = missingRanges(extents, p.start, p.end, p.step);
    if (gaps.length === 0) this.requests.inc({ result: 'hit' });
    else this.requests.inc({ result: gaps.length === 1 && gaps[0][0] === p.start && gaps[0][1] === p.end ? 'miss' : 'partial' });

    const fresh: { start: number; end: number; result: QueryResult }[] = [];
    for (const [start, end] of gaps) fresh.push({ start, end, result: await exec({ ...p, start, end }) });

    const series: SeriesPoints = new Map();
    for (const e of extents) {
      for (const s of e.series) for (const [t, v] of s.points) if (t >= p.start && t <= p.end) add(series, s.metric, t, Number(parseValue(v)));
    }
    const warnings = new Set<string>();
    const infos = new Set<string>();
    for (const f of fresh) {
      f.result.warnings.forEach((w) => warnings.add(w));
      f.result.infos.forEach((i) => infos.add(i));
      if (f.result.resultType !== 'matrix') continue;
      for (const s of f.result.result) {
        for (const pt of s.floats) add(series, s.metric, pt.t, pt.f);
        for (const pt of s.histograms ?? []) addHistogram(series, s.metric, pt);
      }
    }

    // Store what is old enough, and only float answers without annotations (those would be lost).
    const cacheableEnd = Math.floor((this.now() - this.opts.maxFreshnessMs) / p.step) * p.step;
    const storable = fresh
      .filter((f) => f.result.warnings.length === 0 && f.result.infos.length === 0 && f.result.resultType === 'matrix')
      .filter((f) => f.result.resultType === 'matrix' && f.result.result.every((s) => !s.histograms?.length))
      .map((f) => toExtent(f.start, Math.min(f.end, cacheableEnd), f.result))
      .filter((e): e is Extent => e !== undefined);
    if (storable.length > 0) {
      const merged = mergeExtents([...extents, ...storable], p.step);
      await this.opts.backend.set(key, JSON.stringify(merged), this.opts.ttlMs).catch(() => undefined);
    }

    return { resultType: 'matrix', result: toMatrix(series), warnings: [...warnings], infos: [...infos] };
  }

  private key(p: RangeQueryParams): string {
    const query = createHash('sha256').update(p.query).digest('hex').slice(0, 32);
    const interval = Math.floor(p.start / this.opts.splitIntervalMs);
    return `strata:qrc:${KEY_VERSION}:${p.tenant}:${query}:${p.step}:${interval}`;
  }

  private async load(key: string): Promise<Extent[]> {
    try {
      const raw = await this.opts.backend.get(key);
      return raw ? (JSON.parse(raw) as Extent[]) : [];
    } catch {
      // A cache that is down or holds garbage is a miss, never a failed query.
      return [];
    }
  }
}

/** Whether every step of the query can be evaluated on its own, so splits give the same answer. */
export function isSplittable(query: string): boolean {
  let expr: Expr;
  try {
    expr = parseExpr(query, { enableExperimentalFunctions: true, enableDurationExpressions: true });
  } catch {
    return false; // The engine reports the parse error.
  }
  let ok = true;
  walk(expr, (node) => {
    if ((node.kind === 'vectorSelector' || node.kind === 'subquery') && (node.atMs !== undefined || node.atStartOrEnd || node.offsetMs < 0)) ok = false;
    // range() differs between splits; an offset expression may turn out negative.
    if ((node.kind === 'vectorSelector' || node.kind === 'subquery') && node.offsetExpr) ok = false;
    if (node.kind === 'matrixSelector' && node.rangeExpr && usesRange(node.rangeExpr)) ok = false;
    if (node.kind === 'subquery' && [node.rangeExpr, node.stepExpr].some((d) => d && usesRange(d))) ok = false;
    if (node.kind === 'call' && ['start', 'end', 'range'].includes(node.func.name)) ok = false;
  });
  return ok;
}

function usesRange(d: DurationExpr): boolean {
  switch (d.kind) {
    case 'range':
      return true;
    case 'neg':
      return usesRange(d.expr);
    case 'binary':
    case 'min_of':
    case 'max_of':
      return usesRange(d.lhs) || usesRange(d.rhs);
    default:
      return false;
  }
}

/** [start, end] pairs on the step grid, each within one interval. */
export function splitByInterval(start: number, end: number, step: number, interval: number): [number, number][] {
  const out: [number, number][] = [];
  for (let t = start; t <= end;) {
    const boundary = (Math.floor(t / interval) + 1) * interval;
    const last = Math.min(end, t + Math.floor((boundary - 1 - t) / step) * step);
    out.push([t, last]);
    t = last + step;
  }
  return out;
}

/** The parts of [start, end] on the step grid that no extent covers. */
export function missingRanges(extents: { start: number; end: number }[], start: number, end: number, step: number): [number, number][] {
  const sorted = extents.filter((e) => e.end >= start && e.start <= end).sort((a, b) => a.start - b.start);
  const out: [number, number][] = [];
  let t = start;
  for (const e of sorted) {
    if (e.start > t) out.push([t, Math.min(end, e.start - step)]);
    t = Math.max(t, e.end + step);
    if (t > end) break;
  }
  if (t <= end) out.push([t, end]);
  return out.filter(([a, b]) => a <= b);
}

function toExtent(start: number, end: number, r: QueryResult): Extent | undefined {
  if (end < start || r.resultType !== 'matrix') return undefined;
  return {
    start,
    end,
    series: r.result
      .map((s) => ({ metric: s.metric, points: s.floats.filter((p) => p.t <= end).map((p): [number, string] => [p.t, formatValue(p.f)]) }))
      .filter((s) => s.points.length > 0),
  };
}

/** Joins overlapping or adjacent extents so the stored set stays small. */
function mergeExtents(extents: Extent[], step: number): Extent[] {
  const sorted = extents.slice().sort((a, b) => a.start - b.start);
  const out: Extent[] = [];
  for (const e of sorted) {
    const last = out[out.length - 1];
    if (!last || e.start > last.end + step) {
      out.push(e);
      continue;
    }
    const byKey = new Map<string, { metric: Labels; points: Map<number, string> }>();
    for (const x of [last, e]) {
      for (const s of x.series) {
        const k = labelsKey(s.metric);
        let entry = byKey.get(k);
        if (!entry) byKey.set(k, (entry = { metric: s.metric, points: new Map() }));
        for (const [t, v] of s.points) entry.points.set(t, v);
      }
    }
    out[out.length - 1] = {
      start: last.start,
      end: Math.max(last.end, e.end),
      series: [...byKey.values()].map((s) => ({ metric: s.metric, points: [...s.points].sort((a, b) => a[0] - b[0]) })),
    };
  }
  return out;
}

function entry(series: SeriesPoints, metric: Labels) {
  const k = labelsKey(metric);
  let s = series.get(k);
  if (!s) series.set(k, (s = { metric, points: [], histograms: [] }));
  return s;
}

function add(series: SeriesPoints, metric: Labels, t: number, f: number): void {
  entry(series, metric).points.push({ t, f });
}

function addHistogram(series: SeriesPoints, metric: Labels, p: HPoint): void {
  entry(series, metric).histograms.push(p);
}

/** The series in label order, points in time order. */
function toMatrix(series: SeriesPoints) {
  return [...series.values()]
    .sort((a, b) => compareLabels(a.metric, b.metric))
    .map((s) => {
      const floats = s.points.sort((a, b) => a.t - b.t);
      if (s.histograms.length === 0) return { metric: s.metric, floats };
      return { metric: s.metric, floats, histograms: s.histograms.sort((a, b) => a.t - b.t) };
    });
}

function parseValue(v: string): number {
  if (v === '+Inf') return Infinity;
  if (v === '-Inf') return -Infinity;
  return Number(v); // "NaN" parses to NaN.
}

/** Concatenates the splits' series (in time order), sorted by labels as a range query's result is. */
function mergeResults(results: QueryResult[]): QueryResult {
  if (results.length === 1) return results[0];
  const series: SeriesPoints = new Map();
  const warnings = new Set<string>();
  const infos = new Set<string>();
  for (const r of results) {
    r.warnings.forEach((w) => warnings.add(w));
    r.infos.forEach((i) => infos.add(i));
    if (r.resultType !== 'matrix') continue;
    for (const s of r.result) {
      for (const p of s.floats) add(series, s.metric, p.t, p.f);
      for (const p of s.histograms ?? []) addHistogram(series, s.metric, p);
    }
  }
  return { resultType: 'matrix', result: toMatrix(series), warnings: [...warnings], infos: [...infos] };
}
