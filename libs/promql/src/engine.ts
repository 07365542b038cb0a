// The PromQL engine: parses a query, fetches each selector's data once for the
// whole query range from the Querier, then hands it to the in-memory evaluator.
// All I/O of a query happens here, before evaluation starts.

import type { Matcher, Querier, SelectHints, Series } from '@strata/model';
import { compareLabels, estimatedSeriesBytes, queryBudgetMessage, seriesChunkBytes, seriesChunkCount, seriesFloatSamples } from '@strata/model';
import type { Call, DurationExpr, Expr, VectorSelector } from './ast.ts';
import { infoFetchMatchers } from './info.ts';
import { children, documentedType, exprType, walk } from './ast.ts';
import { isKnownAggregation } from './aggregations.ts';
import { PromQLBadDataError, PromQLExecutionError, PromQLTimeoutError } from './errors.ts';
import type { SharedState } from './evaluator.ts';
import { Evaluator } from './evaluator.ts';
import type { PreparedSeries } from './prepared-series.ts';
import { Annotations, prepareSeries, statsOnly } from './prepared-series.ts';
import { FUNCTIONS } from './functions.ts';
import { SHARD_COUNTS, evaluateSharded, isQueryBudgetError, isUnfoldable, shardableAggregation } from './sharded-aggregation.ts';
import { goPow, goQuote } from './go-compat.ts';
import type { ParseOptions } from './parser.ts';
import { parseExpr } from './parser.ts';
import type { QueryResult } from './values.ts';
import { countQueryableSamples, mergeShardStats } from './query-stats.ts';
import type { FetchedStats, QueryStats, StatsLevel } from './stats-types.ts';

export interface EngineOptions {
  querier: Querier;
  /** How far back an instant selector looks for the latest sample. */
  lookbackDeltaMs?: number;
  /** Most samples a query may hold in memory at once. */
  maxSamples?: number;
  /** Most series a query may fetch from storage, over all its selectors; 0 for no limit. */
  maxFetchedSeries?: number;
  /**
   * Most bytes a query is estimated to hold (-querier.max-estimated-memory-per-query): its fetched
   * series (estimatedSeriesBytes), then EVAL_SAMPLE_BYTES per point the evaluation holds; 0 for no limit.
   */
  maxEstimatedMemoryBytes?: number;
  /** Most chunk bytes (seriesChunkBytes) a query may fetch over all its selectors (-querier.max-fetched-chunk-bytes-per-query); 0 for no limit. */
  maxFetchedChunkBytes?: number;
  timeoutMs?: number;
  /**
   * Remove __name__ only when the query finishes (Prometheus'
   * --enable-feature=promql-delayed-name-removal; Prometheus' own promqltest
   * runs with it). Off by default, as in Prometheus.
   */
  delayedNameRemoval?: boolean;
  /** Accept experimental functions (Prometheus' --enable-feature=promql-experimental-functions). */
  enableExperimentalFunctions?: boolean;
  /** Accept duration expressions such as `[step()*2]` (Prometheus' --enable-feature=promql-duration-expr). */
  enableDurationExpressions?: boolean;
  /** Step of subqueries written without one (`[1h:]`); Prometheus uses its evaluation interval, 1m by default. */
  defaultSubqueryStepMs?: number;
  /** Fold aggregations of selectors and range functions without building their input series (default on; off only to compare). */
  fusedAggregations?: boolean;
  /** A tenant's own fetch limits (its runtime overrides), read per query; an undefined one: the engine's. */
  tenantLimits?: (tenant: string) => TenantFetchLimits;
}

/** The per-tenant limits on what one query fetches (Mimir's max_fetched_*_per_query); 0: no limit. */
export interface TenantFetchLimits {
  maxFetchedSeries?: number;
  maxFetchedChunks?: number;
  maxFetchedChunkBytes?: number;
}

/** One query to evaluate: its expression and the steps it is evaluated at (an instant query: one step). */
interface Evaluation {
  tenant: string;
  query: string;
  expr: Expr;
  start: number;
  end: number;
  interval: number;
  instant: boolean;
}

/** What every query may override for itself. */
interface QueryOverrides {
  signal?: AbortSignal;
  /** Read through this querier instead of the engine's (e.g. one that waits for read-after-write). */
  querier?: Querier;
  /** A shorter timeout than the engine's; the engine's still bounds it. */
  timeoutMs?: number;
  /** Statistics to put on the result (absent: none): timings and fetched figures, and sample counts (Prometheus' stats=true|all). */
  stats?: StatsLevel;
}

export interface InstantQueryParams extends QueryOverrides {
  tenant: string;
  query: string;
  /** Evaluation time in ms. */
  time: number;
}

export interface RangeQueryParams extends QueryOverrides {
  tenant: string;
  query: string;
  /** Inclusive bounds and step, all in ms. */
  start: number;
  end: number;
  step: number;
}

/** What one point held by the evaluation is estimated to take (an {t, f} object and its slot), for the memory limit. */
const EVAL_SAMPLE_BYTES = 48;

/** Prometheus' API limit on points per series of a range query. */
const MAX_POINTS_PER_SERIES = 11_000;

/** Prometheus' bound on a range query's steps (the API checks it before splitting a query for the results cache). */
export function checkRangeResolution(start: number, end: number, step: number): void {
  if (Math.floor((end - start) / step) > MAX_POINTS_PER_SERIES) {
    throw new PromQLBadDataError('exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)');
  }
}

export class Engine {
  private readonly querier: Querier;
  private readonly lookbackDeltaMs: number;
  private readonly maxSamples: number;
  private readonly maxFetchedSeries: number;
  private readonly maxBytes: number;
  private readonly maxChunkBytes: number;
  private readonly timeoutMs: number;
  private readonly delayedNameRemoval: boolean;
  private readonly parseOptions: ParseOptions;
  private readonly defaultSubqueryStepMs: number;
  private readonly fusedAggregations: boolean;
  private readonly opts: EngineOptions;

  constructor(opts: EngineOptions) {
    this.opts = opts;
    this.querier = opts.querier;
    this.lookbackDeltaMs = opts.lookbackDeltaMs ?? 300_000;
    this.maxSamples = opts.maxSamples ?? 50_000_000;
    this.maxFetchedSeries = opts.maxFetchedSeries ?? 0;
    this.maxBytes = opts.maxEstimatedMemoryBytes ?? 0;
    this.maxChunkBytes = opts.maxFetchedChunkBytes ?? 0;
    this.timeoutMs = opts.timeoutMs ?? 120_000;
    this.delayedNameRemoval = opts.delayedNameRemoval ?? false;
    this.parseOptions = {
      enableExperimentalFunctions: opts.enableExperimentalFunctions ?? false,
      enableDurationExpressions: opts.enableDurationExpressions ?? false,
    };
    this.defaultSubqueryStepMs = opts.defaultSubqueryStepMs ?? 60_000;
    this.fusedAggregations = opts.fusedAggregations ?? true;
  }

  /** Evaluates a query at one point in time (Prometheus' /api/v1/query). */
  async instantQuery(p: InstantQueryParams): Promise<QueryResult> {
    if (!Number.isFinite(p.time)) throw new PromQLBadDataError('invalid parameter "time": not a finite timestamp');
    const expr = parseExpr(p.query, this.parseOptions);
    const time = Math.round(p.time);
    return this.exec({ tenant: p.tenant, query: p.query, expr, start: time, end: time, interval: 1, instant: true }, p);
  }

  /** Evaluates a query at every step from start to end (Prometheus' /api/v1/query_range). */
  async rangeQuery(p: RangeQueryParams): Promise<QueryResult> {
    const { start, end, step } = p;
    if (!Number.isFinite(start) || !Number.isFinite(end) || !Number.isFinite(step)) {
      throw new PromQLBadDataError('invalid parameter: start, end and step must be finite numbers');
    }
    if (end < start) throw new PromQLBadDataError('end timestamp must not be before start time');
    if (step <= 0) {
      throw new PromQLBadDataError('zero or negative query resolution step widths are not accepted. Try a positive integer');
    }
    checkRangeResolution(start, end, step);
    const expr = parseExpr(p.query, this.parseOptions);
    const t = exprType(expr);
    if (t !== 'scalar' && t !== 'vector') {
      throw new PromQLBadDataError(`invalid expression type ${goQuote(documentedType(t))} for range query, must be Scalar or instant Vector`);
    }
    return this.exec({ tenant: p.tenant, query: p.query, expr, start: Math.round(start), end: Math.round(end), interval: Math.round(step), instant: false }, p);
  }

  /**
   * Evaluates the query; one over a query budget is answered shard by shard when it is an
   * aggregation whose shards fold exactly (sharded-aggregation.ts), else refused.
   */
  private async exec(q: Evaluation, overrides: QueryOverrides): Promise<QueryResult> {
    // One deadline for all the shards.
    const began = performance.now();
    const deadline = Date.now() + this.timeoutOf(overrides);
    const once = () => this.execOnce(q, { ...overrides, timeoutMs: Math.max(1, deadline - Date.now()) });
    const plan = shardableAggregation(q.expr);
    if (plan === undefined) return withExecTime(await once(), began);
    let refusal: unknown;
    try {
      return withExecTime(await once(), began);
    } catch (err) {
      if (!isQueryBudgetError(err)) throw err;
      refusal = err;
    }
    for (const count of SHARD_COUNTS) {
      const shards: QueryStats[] = [];
      const shard = async () => {
        const r = await once();
        if (r.stats) shards.push(r.stats);
        return r;
      };
      try {
        const r = await evaluateSharded(plan, count, shard);
        if (shards.length === 0) return r;
        const timings = shards.reduce((t, s) => sumTimings(t, s.timings), zeroTimings());
        return withExecTime({ ...r, stats: mergeShardStats(shards, timings) }, began);
      } catch (err) {
        if (isUnfoldable(err)) throw refusal;
        if (!isQueryBudgetError(err)) throw err;
        refusal = err;
      }
    }
    throw refusal;
  }

  /** The query's timeout: its own when shorter than the engine's. */
  private timeoutOf(overrides: QueryOverrides): number {
    return overrides.timeoutMs !== undefined ? Math.min(overrides.timeoutMs, this.timeoutMs) : this.timeoutMs;
  }

  private async execOnce(q: Evaluation, overrides: QueryOverrides): Promise<QueryResult> {
    const { tenant, query, expr, start, end, interval, instant } = q;
    const { signal } = overrides;
    const deadline = Date.now() + this.timeoutOf(overrides);
    const began = performance.now();
    rejectUnsupported(expr);
    resolveAtStartEnd(expr, start, end);
    resolveDurationExprs(expr, instant ? 0 : interval, end - start);

    const { data, bytes, fetched } = await this.fetch(overrides.querier ?? this.querier, tenant, expr, start, end, instant ? 0 : interval, signal, deadline);
    const prepared = performance.now();
    // What the memory limit leaves after the fetched series, in evaluated points.
    const memorySamples = this.maxBytes > 0 ? Math.floor((this.maxBytes - bytes) / EVAL_SAMPLE_BYTES) : Infinity;
    const memoryBinds = memorySamples < this.maxSamples;

    const annotations = new Annotations(query);
    if (!instant) {
      walk(expr, (node) => {
        if (node.kind === 'call' && /^sort(_by_label)?(_desc)?$/.test(node.func.name)) {
          annotations.warn(annotations.at('PromQL warning: sort is ineffective for range queries since results are always ordered by labels', node.pos.start));
        }
      });
    }
    const shared: SharedState = {
      query: { start, end, step: instant ? 0 : interval },
      defaultSubqueryStepMs: this.defaultSubqueryStepMs,
      lookbackMs: this.lookbackDeltaMs,
      maxSamples: Math.min(this.maxSamples, memorySamples),
      tooManySamples: () =>
        new PromQLExecutionError(memoryBinds ? queryBudgetMessage('memory', this.maxBytes) : queryBudgetMessage('samples', this.maxSamples)),
      currentSamples: 0,
      delayed: this.delayedNameRemoval,
      fused: this.fusedAggregations,
      data,
      annotations,
      checkCancel: () => {
        if (signal?.aborted) throw new PromQLTimeoutError('canceled', 'expression evaluation');
        if (Date.now() > deadline) throw new PromQLTimeoutError('timeout', 'expression evaluation');
      },
    };
    const level = overrides.stats;
    const peak = level === 'basic' || level === 'all' ? trackPeak(shared) : undefined;
    const ev = new Evaluator(start, end, interval, shared);
    const value = ev.eval(expr);
    const evaluated = performance.now();
    const stats = (sortedAt: number) =>
      this.queryStats(
        { expr, data, start, end, interval, level, peak, fetched },
        [began, prepared, evaluated, sortedAt].map((t) => t / 1000),
      );
    const extra = () => ({ warnings: [...annotations.warnings], infos: [...annotations.infos], ...(level && { stats: stats(performance.now()) }) });

    if (!Array.isArray(value)) return { resultType: 'string', result: { t: start, value: value.value }, ...extra() };
    const mat = this.delayedNameRemoval ? ev.cleanupMetricLabels(value, instant && exprType(expr) === 'vector') : value;

    const type = exprType(expr);
    if (instant && type === 'vector') {
      return {
        resultType: 'vector',
        result: mat.map((s) => {
          const h = s.histograms?.[0]?.h;
          return h && s.floats.length === 0 ? { metric: s.metric, t: start, f: 0, h } : { metric: s.metric, t: start, f: s.floats[0].f };
        }),
        ...extra(),
      };
    }
    if (instant && type === 'scalar') {
      return { resultType: 'scalar', result: { t: start, f: mat[0]?.floats[0]?.f ?? NaN }, ...extra() };
    }
    const sorted = mat.slice().sort((a, b) => compareLabels(a.metric, b.metric));
    return {
      resultType: 'matrix',
      result: sorted.map((s) =>
        s.histograms && s.histograms.length > 0 ? { metric: s.metric, floats: s.floats, histograms: s.histograms } : { metric: s.metric, floats: s.floats },
      ),
      ...extra(),
    };
  }

  /** A query's statistics from its phases' times (s: began, fetched, evaluated, sorted): timings, fetched figures, and its samples when asked for. */
  private queryStats(q: StatsInput, [began, prepared, evaluated, sorted]: number[]): QueryStats {
    const timings = zeroTimings();
    timings.queryPreparationTime = prepared - began;
    timings.innerEvalTime = evaluated - prepared;
    timings.resultSortTime = sorted - evaluated;
    timings.evalTotalTime = sorted - began;
    if (q.peak === undefined) return { timings, fetched: q.fetched };
    const { lookbackDeltaMs: lookbackMs, defaultSubqueryStepMs } = this;
    const samples = countQueryableSamples({ ...q, lookbackMs, defaultSubqueryStepMs, perStep: q.level === 'all', peakSamples: q.peak() });
    return { timings, samples, fetched: q.fetched };
  }

  /** The steps a node under `path` is evaluated at: enclosing subqueries widen them (Prometheus' subqueryTimes); an @ resets them. */
  private evalWindow(path: readonly Expr[], start: number, end: number): { evalStart: number; evalEnd: number } {
    let subqOffset = 0;
    let subqRange = 0;
    let subqAt: number | undefined;
    for (const n of path) {
      if (n.kind !== 'subquery') continue;
      if (n.atMs !== undefined) {
        subqOffset = n.offsetMs;
        subqRange = n.rangeMs;
        subqAt = n.atMs;
      } else {
        subqOffset += n.offsetMs;
        subqRange += n.rangeMs;
      }
    }
    return { evalStart: (subqAt ?? start) - subqOffset - subqRange, evalEnd: (subqAt ?? end) - subqOffset };
  }

  /** Selects every selector's series once, over the widest window any step needs. */
  private async fetch(
    querier: Querier,
    tenant: string,
    expr: Expr,
    start: number,
    end: number,
    step: number,
    signal: AbortSignal | undefined,
    deadline: number,
  ): Promise<{ data: Map<VectorSelector | Call, PreparedSeries[]>; bytes: number; fetched: FetchedStats }> {
    const selectors = this.selectors(expr, start, end, step);
    const results = await selectAll(querier, tenant, selectors, signal, deadline);
    const bytes = this.checkFetchBudget(results, this.opts.tenantLimits?.(tenant) ?? {});
    const fetched = fetchedStats(results, selectors);
    const data = new Map<VectorSelector | Call, PreparedSeries[]>();
    const stats = statsOnlySelectors(expr);
    selectors.forEach(({ key }, i) => {
      const prepared = results[i].map(prepareSeries);
      data.set(key, key.kind === 'vectorSelector' && stats.has(key) ? prepared.map(statsOnly) : prepared);
    });
    return { data, bytes, fetched };
  }

  /** What each selector (and each info() call) selects: its matchers and the window every step it is evaluated at needs. */
  private selectors(expr: Expr, start: number, end: number, step: number): FetchSelector[] {
    const selectors: FetchSelector[] = [];
    walk(expr, (node, path) => {
      if (node.kind === 'call' && node.func.name === 'info') {
        selectors.push(this.infoSelector(node, path, start, end, step));
        return;
      }
      if (node.kind !== 'vectorSelector') return;
      const parent = path[path.length - 1];
      // info()'s label selector is not data.
      if (parent?.kind === 'call' && parent.func.name === 'info' && parent.args[1] === node) return;
      const rangeMs = parent?.kind === 'matrixSelector' ? parent.rangeMs : 0;
      let { evalStart, evalEnd } = this.evalWindow(path, start, end);
      if (node.atMs !== undefined) evalStart = evalEnd = node.atMs;
      // The window already reaches a lookback before a range (anchored's sample before it); smoothed also looks ahead.
      const mint = evalStart - this.lookbackDeltaMs - rangeMs - node.offsetMs;
      const maxt = evalEnd - node.offsetMs + (node.smoothed ? this.lookbackDeltaMs : 0);
      const func = enclosingFunction(path);
      const hints: SelectHints = { start: mint, end: maxt, step: this.selectStep(path, step), range: rangeMs };
      if (func !== undefined) hints.func = func;
      selectors.push({ key: node, matchers: node.matchers, mint, maxt, hints });
    });
    return selectors;
  }

  /** info() fetches its info series over the window of its first selector, moved by that selector's @ and offset. */
  private infoSelector(node: Call, path: readonly Expr[], start: number, end: number, step: number): FetchSelector {
    const { evalStart, evalEnd } = this.evalWindow(path, start, end);
    let first: VectorSelector | undefined;
    walk(node.args[0], (n) => {
      if (!first && n.kind === 'vectorSelector') first = n;
    });
    const at = first?.atMs;
    const offset = first?.offsetMs ?? 0;
    const sel = node.args[1]?.kind === 'vectorSelector' ? node.args[1] : undefined;
    const mint = (at ?? evalStart) - this.lookbackDeltaMs + 1 - offset;
    const maxt = (at ?? evalEnd) - offset;
    return {
      key: node,
      matchers: infoFetchMatchers(sel),
      mint,
      maxt,
      hints: { start: mint, end: maxt, step: this.selectStep(path, step), func: 'info', range: 0 },
    };
  }

  /**
   * The fetched series against the query's series, chunks, chunk bytes and memory budgets (the
   * tenant's own where it has them); returns their estimated bytes (0 without a memory budget).
   */
  private checkFetchBudget(results: Series[][], tenant: TenantFetchLimits): number {
    const maxSeries = tenant.maxFetchedSeries ?? this.maxFetchedSeries;
    const maxChunks = tenant.maxFetchedChunks ?? 0;
    const maxChunkBytes = tenant.maxFetchedChunkBytes ?? this.maxChunkBytes;
    if (maxSeries > 0) {
      const fetched = results.reduce((n, r) => n + r.length, 0);
      if (fetched > maxSeries) throw new PromQLExecutionError(queryBudgetMessage('series', maxSeries));
    }
    if (maxChunks > 0) {
      let chunks = 0;
      for (const r of results) for (const s of r) chunks += seriesChunkCount(s);
      if (chunks > maxChunks) throw new PromQLExecutionError(queryBudgetMessage('chunks', maxChunks));
    }
    if (maxChunkBytes > 0) {
      let chunkBytes = 0;
      for (const r of results) for (const s of r) chunkBytes += seriesChunkBytes(s);
      if (chunkBytes > maxChunkBytes) throw new PromQLExecutionError(queryBudgetMessage('chunk-bytes', maxChunkBytes));
    }
    let bytes = 0;
    if (this.maxBytes > 0) {
      for (const r of results) for (const s of r) bytes += estimatedSeriesBytes(s);
      if (bytes > this.maxBytes) throw new PromQLExecutionError(queryBudgetMessage('memory', this.maxBytes));
    }
    return bytes;
  }

  /** The step a selector under `path` is evaluated at: the innermost subquery's, else the query's (0 for instant). */
  private selectStep(path: readonly Expr[], step: number): number {
    for (let i = path.length - 1; i >= 0; i--) {
      const n = path[i];
      if (n.kind === 'subquery') return n.stepMs > 0 ? n.stepMs : this.defaultSubqueryStepMs;
    }
    return step;
  }
}

/** What queryStats counts from. */
interface StatsInput {
  expr: Expr;
  data: Map<VectorSelector | Call, PreparedSeries[]>;
  start: number;
  end: number;
  interval: number;
  level: StatsLevel | undefined;
  /** The evaluation's peak sample count, when sample statistics were asked for. */
  peak: (() => number) | undefined;
  fetched: FetchedStats;
}

/** What the selects fetched: series, chunks, chunk bytes and the samples in each select's window. */
function fetchedStats(results: Series[][], selectors: FetchSelector[]): FetchedStats {
  const f: FetchedStats = { fetchedSeriesCount: 0, fetchedChunksCount: 0, fetchedChunkBytes: 0, fetchedSamplesCount: 0, shardedQueries: 0 };
  results.forEach((r, i) => {
    const { mint, maxt } = selectors[i];
    f.fetchedSeriesCount += r.length;
    for (const s of r) {
      f.fetchedChunksCount += seriesChunkCount(s);
      f.fetchedChunkBytes += seriesChunkBytes(s);
      f.fetchedSamplesCount += seriesFloatSamples(s, mint, maxt) + (s.histograms?.timestamps.length ?? 0);
    }
  });
  return f;
}

function zeroTimings(): QueryStats['timings'] {
  return { evalTotalTime: 0, resultSortTime: 0, queryPreparationTime: 0, innerEvalTime: 0, execQueueTime: 0, execTotalTime: 0 };
}

function sumTimings(a: QueryStats['timings'], b: QueryStats['timings']): QueryStats['timings'] {
  const out = zeroTimings();
  for (const k of Object.keys(out) as (keyof QueryStats['timings'])[]) out[k] = a[k] + b[k];
  return out;
}

/** The result with the whole execution's time (execQueueTime stays 0: the engine runs a query at once). */
function withExecTime(r: QueryResult, began: number): QueryResult {
  if (r.stats) r.stats.timings.execTotalTime = (performance.now() - began) / 1000;
  return r;
}

/** Makes the evaluator's sample count record its highest value (Prometheus' peakSamples); returns the reader. */
function trackPeak(shared: SharedState): () => number {
  let current = shared.currentSamples;
  let peak = current;
  Object.defineProperty(shared, 'currentSamples', {
    get: () => current,
    set: (v: number) => {
      current = v;
      if (v > peak) peak = v;
    },
  });
  return () => peak;
}

/** One select the query makes: what it keys the data by, its matchers, window and hints. */
interface FetchSelector {
  key: VectorSelector | Call;
  matchers: Matcher[];
  mint: number;
  maxt: number;
  hints: SelectHints;
}

/**
 * Every select at once, stopped by the deadline or the caller's abort. Storage sees its own
 * signal: it fires on the timeout, on the caller's abort, and when one select fails (the
 * others' answers are not wanted then), so downstream work stops.
 */
async function selectAll(querier: Querier, tenant: string, selectors: FetchSelector[], signal: AbortSignal | undefined, deadline: number): Promise<Series[][]> {
  const abortError = (where: string) => (signal?.aborted ? new PromQLTimeoutError('canceled', where) : new PromQLTimeoutError('timeout', where));
  if (signal?.aborted) throw abortError('query execution');
  const storage = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const cancelled = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => {
        reject(abortError('query execution'));
        storage.abort(new PromQLTimeoutError('timeout', 'query execution'));
      },
      Math.max(0, deadline - Date.now()),
    );
    onAbort = () => {
      reject(abortError('query execution'));
      storage.abort(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  cancelled.catch(() => undefined);
  let fetched = false;
  try {
    const results = await Promise.race([
      Promise.all(
        // Querier errors pass through unchanged so the HTTP layer can map its own error types.
        selectors.map(({ matchers, mint, maxt, hints }) => querier.select({ tenant, matchers, mint, maxt, signal: storage.signal, hints })),
      ),
      cancelled,
    ]);
    fetched = true;
    return results;
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
    if (!fetched) storage.abort();
  }
}

/** Prometheus' extractFuncFromPath: the nearest function or aggregation above a selector, none past a binary operator. */
function enclosingFunction(path: readonly Expr[]): string | undefined {
  for (let i = path.length - 1; i >= 0; i--) {
    const n = path[i];
    if (n.kind === 'call') return n.func.name;
    if (n.kind === 'aggregate') return n.op;
    if (n.kind === 'binary') return undefined;
  }
  return undefined;
}

/**
 * The selectors histogram_count/sum/avg read only statistics from (Prometheus'
 * detectHistogramStatsDecoding): the nearest enclosing function of that kind,
 * with no histogram_quantile/histogram_fraction, subquery or binary operator
 * in between.
 */
function statsOnlySelectors(expr: Expr): Set<VectorSelector> {
  const out = new Set<VectorSelector>();
  const visit = (e: Expr, path: Expr[]): void => {
    if (e.kind === 'binary') {
      visit(e.lhs, []);
      visit(e.rhs, []);
      return;
    }
    if (e.kind === 'vectorSelector') {
      for (let i = path.length - 1; i >= 0; i--) {
        const n = path[i];
        if (n.kind === 'subquery') return;
        if (n.kind !== 'call') continue;
        const name = n.func.name;
        if (name === 'histogram_count' || name === 'histogram_sum' || name === 'histogram_avg') {
          out.add(e);
          return;
        }
        if (name === 'histogram_quantile' || name === 'histogram_fraction') return;
      }
      return;
    }
    for (const c of children(e)) visit(c, [...path, e]);
  };
  visit(expr, []);
  return out;
}

/** The functions a range selector with `smoothed` / `anchored` may be passed to. */
const SMOOTHED_FUNCTIONS = ['delta', 'increase', 'rate'];
const ANCHORED_FUNCTIONS = ['changes', 'delta', 'increase', 'rate', 'resets'];

/** Rejects, before any I/O, what the engine cannot evaluate yet (or at all). */
function rejectUnsupported(expr: Expr): void {
  walk(expr, (node) => {
    if (node.kind === 'call' && !FUNCTIONS[node.func.name]?.impl && node.func.name !== 'info') {
      throw new PromQLExecutionError(`function ${goQuote(node.func.name)} is not supported yet`);
    }
    if (node.kind === 'call') {
      for (const arg of node.args) {
        const vs = arg.kind === 'matrixSelector' && arg.vectorSelector.kind === 'vectorSelector' ? arg.vectorSelector : undefined;
        const name = node.func.name;
        if (vs?.smoothed && !SMOOTHED_FUNCTIONS.includes(name)) {
          throw new PromQLExecutionError(`smoothed modifier can only be used with: ${SMOOTHED_FUNCTIONS.join(', ')} - not with ${name}`);
        }
        if (vs?.anchored && !ANCHORED_FUNCTIONS.includes(name)) {
          throw new PromQLExecutionError(`anchored modifier can only be used with: ${ANCHORED_FUNCTIONS.join(', ')} - not with ${name}`);
        }
      }
    }
    if (node.kind === 'aggregate' && !isKnownAggregation(node.op)) {
      throw new PromQLExecutionError(`aggregation ${node.op}() is not supported yet`);
    }
  });
}

/**
 * Sets the range, step and offset of every node written with a duration
 * expression, with step() the query's step (0 for instant queries) and range()
 * its end minus start (Prometheus' durationVisitor).
 */
function resolveDurationExprs(expr: Expr, stepMs: number, rangeMs: number): void {
  const resolve = (d: DurationExpr, allowNegative: boolean): number => {
    const seconds = evalDurationExpr(d, stepMs / 1000, rangeMs / 1000);
    if (seconds <= 0 && !allowNegative) throw new PromQLBadDataError('duration must be greater than 0');
    if (!(Math.abs(seconds) <= 2 ** 63 / 1e9)) throw new PromQLBadDataError('duration is out of range');
    return Math.trunc(seconds * 1000);
  };
  walk(expr, (node) => {
    if (node.kind === 'vectorSelector' && node.offsetExpr) node.offsetMs = resolve(node.offsetExpr, true);
    else if (node.kind === 'matrixSelector' && node.rangeExpr) node.rangeMs = resolve(node.rangeExpr, false);
    else if (node.kind === 'subquery') {
      if (node.offsetExpr) node.offsetMs = resolve(node.offsetExpr, true);
      if (node.stepExpr) node.stepMs = resolve(node.stepExpr, false);
      if (node.rangeExpr) node.rangeMs = resolve(node.rangeExpr, false);
    }
  });
}

/** The value of a duration expression in seconds. */
function evalDurationExpr(d: DurationExpr, stepSeconds: number, rangeSeconds: number): number {
  const ev = (x: DurationExpr): number => evalDurationExpr(x, stepSeconds, rangeSeconds);
  switch (d.kind) {
    case 'literal':
      return d.seconds;
    case 'step':
      return stepSeconds;
    case 'range':
      return rangeSeconds;
    case 'neg':
      return -ev(d.expr);
    case 'min_of':
    case 'max_of': {
      const a = ev(d.lhs);
      const b = ev(d.rhs);
      if (Number.isNaN(a) || Number.isNaN(b)) return NaN;
      return d.kind === 'min_of' ? Math.min(a, b) : Math.max(a, b);
    }
    case 'binary': {
      const a = ev(d.lhs);
      const b = ev(d.rhs);
      switch (d.op) {
        case '+':
          return a + b;
        case '-':
          return a - b;
        case '*':
          return a * b;
        case '/':
          if (b === 0) throw new PromQLBadDataError('division by zero');
          return a / b;
        case '%':
          if (b === 0) throw new PromQLBadDataError('modulo by zero');
          return a % b;
        case '^':
          return goPow(a, b);
      }
    }
  }
}

/** Turns `@ start()` / `@ end()` into timestamps. */
function resolveAtStartEnd(expr: Expr, start: number, end: number): void {
  walk(expr, (node) => {
    if ((node.kind === 'vectorSelector' || node.kind === 'subquery') && node.atStartOrEnd) {
      node.atMs = node.atStartOrEnd === 'start' ? start : end;
    }
  });
}
