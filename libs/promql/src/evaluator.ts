// The step-by-step evaluator: every node of the tree evaluates to a matrix over
// the steps start, start+interval, ..., end, as in Prometheus' evaluator. It
// works on data fetched beforehand and never performs I/O. Values are floats
// or native histograms (EvalSample.h / EvalSeries.histograms).

import type { Labels } from '@strata/model';
import { METRIC_NAME } from '@strata/model';
import type { AggregateExpr, BinaryExpr, Call, Expr, MatrixSelector, SubqueryExpr, VectorSelector } from './ast.ts';
import { exprType, isSetOp, unwrapParens } from './ast.ts';
import { groupsOf } from './aggregation-input.ts';
import { FloatGroupCells, countValuesStep, evalAggregation, isFloatGroupOp } from './aggregations.ts';
import { matchingSignature, scalarBinop, vectorAnd, vectorBinop, vectorOr, vectorScalarBinop, vectorUnless } from './binary-ops.ts';
import { PromQLExecutionError } from './errors.ts';
import type { FunctionContext, FunctionDef, FunctionImpl, RangeContext, RangeWindow } from './function-types.ts';
import { FUNCTIONS, absentLabels } from './functions.ts';
import { formatGoFloat, goQuote, isValidLabelName } from './go-compat.ts';
import { quantile } from './stats.ts';
import { combineInfo, infoSelector, relevantInfoSeries } from './info.ts';
import type { ExtendedFunction } from './anchored-smoothed.ts';
import {
  anchoredChangesOrResets,
  anchoredFloat,
  anchoredHistogram,
  smoothedFloat,
  smoothedHistogram,
  smoothedInstantFloat,
  smoothedInstantHistogram,
} from './anchored-smoothed.ts';
import { mixedFloatsHistograms } from './histogram-functions.ts';
import { dropMetadataLabels, keyOf } from './labels.ts';
import type { FloatHistogram } from './histogram/float-histogram.ts';
import type { Annotations, PreparedSeries } from './prepared-series.ts';
import type { EvalMatrix, EvalSample, EvalSeries, EvalVector, FPoint, HPoint, StringValue } from './values.ts';

/** Where a range-vector function reads its windows from. */
interface RangeSource {
  series: {
    metric: Labels;
    t: Float64Array;
    f: Float64Array;
    /** Histogram samples, or null when there are none. */
    h: { t: Float64Array; h: FloatHistogram[] } | null;
    dropName: boolean;
  }[];
  rangeMs: number;
  offsetMs: number;
  atMs: number | undefined;
  /** The range selector's `anchored` / `smoothed` modifier. */
  anchored?: boolean;
  smoothed?: boolean;
}

export interface SharedState {
  /** Step of subqueries written without one (`[1h:]`). */
  defaultSubqueryStepMs: number;
  /** The query's own start, end and step (0 for instant queries), in ms. */
  query: { start: number; end: number; step: number };
  lookbackMs: number;
  /** The -querier.max-samples limit, lowered to what the estimated-memory limit leaves for evaluated points. */
  maxSamples: number;
  /** The error for going over maxSamples: it names the limit that set it. */
  tooManySamples(): Error;
  /** Samples currently held by the evaluation, against maxSamples. */
  currentSamples: number;
  delayed: boolean;
  /** Whether aggregations may take the fused paths (fusedRangeAggregation, fusedSelectorAggregation). */
  fused: boolean;
  /** Each selector's series, and each info() call's candidate info series. */
  data: Map<VectorSelector | Call, PreparedSeries[]>;
  annotations: Annotations;
  checkCancel(): void;
}

/** Evaluates expressions at the steps start, start+interval, ..., end. */
export class Evaluator {
  private readonly numSteps: number;

  private readonly start: number;
  private readonly end: number;
  private readonly interval: number;
  private readonly s: SharedState;

  constructor(start: number, end: number, interval: number, s: SharedState) {
    this.start = start;
    this.end = end;
    this.interval = interval;
    this.s = s;
    this.numSteps = Math.floor((end - start) / interval) + 1;
  }

  private get instant(): boolean {
    return this.start === this.end;
  }

  private addSamples(n: number): void {
    this.s.currentSamples += n;
    if (this.s.currentSamples > this.s.maxSamples) throw this.s.tooManySamples();
  }

  private dropName<T extends { metric: Labels; dropName: boolean }>(x: T): T {
    return { ...x, metric: this.s.delayed ? x.metric : dropMetadataLabels(x.metric), dropName: true };
  }

  eval(e: Expr): EvalMatrix | StringValue {
    this.s.checkCancel();
    switch (e.kind) {
      case 'string':
        return { kind: 'string', value: e.value };
      case 'paren':
        return this.eval(e.expr);
      default:
        return this.evalMatrix(e);
    }
  }

  private evalMatrix(e: Expr): EvalMatrix {
    switch (e.kind) {
      case 'number': {
        const floats = [];
        for (let ts = this.start; ts <= this.end; ts += this.interval) floats.push({ t: ts, f: e.value });
        this.addSamples(floats.length);
        return [{ metric: [], floats, dropName: false }];
      }
      case 'paren':
        return this.evalMatrix(e.expr);
      case 'unary': {
        const mat = this.evalMatrix(e.expr);
        if (e.op === '+') return mat;
        const negated = mat.map((s) =>
          this.dropName({
            ...s,
            floats: s.floats.map((p) => ({ t: p.t, f: -p.f })),
            histograms: s.histograms?.map((p) => ({ t: p.t, h: p.h.copy().mul(-1) })),
          }),
        );
        return this.s.delayed ? negated : this.mergeSeriesWithSameLabelset(negated);
      }
      case 'vectorSelector':
        return this.evalVectorSelector(e);
      case 'matrixSelector':
        return this.evalMatrixSelector(e);
      case 'aggregate':
        return this.evalAggregate(e);
      case 'binary':
        return this.evalBinary(e);
      case 'call':
        return this.evalCall(e);
      case 'subquery':
        // Only reachable as the whole expression of an instant query: the inner points are the result.
        return this.evalSubquery(e);
      case 'string':
        throw new PromQLExecutionError('unexpected string expression in a vector context');
    }
  }

  // --- Selectors ----------------------------------------------------------------

  private data(vs: VectorSelector): PreparedSeries[] {
    const d = this.s.data.get(vs);
    if (!d) throw new PromQLExecutionError('internal error: selector was not fetched');
    return d;
  }

  /**
   * The latest sample in (ref - lookback, ref] at each step, where ref is the
   * step (or the @ time) minus the offset; nothing when that sample is a
   * staleness marker. With keepSampleTime the points carry the sample's own
   * timestamp (for timestamp()).
   */
  private selectInstant(vs: VectorSelector, keepSampleTime: boolean): EvalVector[] {
    const series = this.data(vs);
    const perStep: EvalVector[] = Array.from({ length: this.numSteps }, () => []);
    for (const s of series) {
      this.s.checkCancel();
      let j = 0;
      for (let ts = this.start, step = 0; ts <= this.end; ts += this.interval, step++) {
        const ref = (vs.atMs ?? ts) - vs.offsetMs;
        while (j < s.t.length && s.t[j] <= ref) j++;
        const idx = j - 1;
        if (idx < 0 || s.t[idx] <= ref - this.s.lookbackMs) continue;
        if (s.stale && s.stale[idx]) continue;
        this.addSamples(1);
        const smp: EvalSample = { metric: s.metric, t: keepSampleTime ? s.t[idx] : ts, f: s.f[idx], dropName: false };
        const h = s.hs?.[idx];
        if (h) {
          smp.f = 0;
          smp.h = h;
        }
        perStep[step].push(smp);
      }
    }
    return perStep;
  }

  private evalVectorSelector(vs: VectorSelector): EvalMatrix {
    if (vs.smoothed) return this.evalSmoothedSelector(vs);
    const out: EvalMatrix = [];
    for (const s of this.data(vs)) {
      this.s.checkCancel();
      const floats = [];
      const histograms: HPoint[] = [];
      let j = 0;
      let lastIdx = -1;
      for (let ts = this.start; ts <= this.end; ts += this.interval) {
        const ref = (vs.atMs ?? ts) - vs.offsetMs;
        while (j < s.t.length && s.t[j] <= ref) j++;
        const idx = j - 1;
        if (idx < 0 || s.t[idx] <= ref - this.s.lookbackMs) continue;
        if (s.stale && s.stale[idx]) continue;
        const h = s.hs?.[idx];
        if (h) {
          // A sample repeated at later steps must not look like another counter reset (e.g. to rate() over a subquery).
          if (idx === lastIdx && h.counterResetHint === 'reset') {
            const c = h.copy();
            c.counterResetHint = 'unknown';
            histograms.push({ t: ts, h: c });
          } else histograms.push({ t: ts, h });
        } else floats.push({ t: ts, f: s.f[idx] });
        lastIdx = idx;
      }
      this.addSamples(floats.length + histograms.length);
      if (floats.length + histograms.length > 0) {
        out.push({ metric: s.metric, floats, ...(histograms.length > 0 ? { histograms } : {}), dropName: false });
      }
    }
    return out;
  }

  /** An instant selector with `smoothed`: at each step the value interpolated between the samples around it (see anchored-smoothed.ts). */
  private evalSmoothedSelector(vs: VectorSelector): EvalMatrix {
    const out: EvalMatrix = [];
    const a = this.s.annotations;
    const annotate = { warn: (m: string) => a.warn(a.at(m, vs.pos.start)), info: (m: string) => a.info(a.at(m, vs.pos.start)) };
    for (const s of this.data(vs)) {
      this.s.checkCancel();
      const name = s.metric.find((l) => l.name === METRIC_NAME)?.value ?? '';
      const floats: FPoint[] = [];
      const histograms: HPoint[] = [];
      for (let ts = this.start; ts <= this.end; ts += this.interval) {
        const ref = (vs.atMs ?? ts) - vs.offsetMs;
        let j = 0;
        while (j < s.t.length && s.t[j] <= ref) j++;
        const p = j - 1;
        if (p < 0 || s.t[p] <= ref - this.s.lookbackMs || (s.stale && s.stale[p])) continue;
        const next = j < s.t.length && s.t[j] < ref + this.s.lookbackMs && !(s.stale && s.stale[j]) && s.t[p] !== ref ? j : -1;
        const hp = s.hs?.[p];
        const hn = next >= 0 ? s.hs?.[next] : undefined;
        if (next >= 0 && !hp !== !hn) {
          annotate.warn(mixedFloatsHistograms(name));
          continue;
        }
        if (hp) {
          const h = next >= 0 ? smoothedInstantHistogram(Float64Array.of(s.t[p], s.t[next]), [hp, hn!], ref, this.s.lookbackMs, name, annotate) : hp;
          if (h) histograms.push({ t: ts, h });
          continue;
        }
        const f = next >= 0 ? smoothedInstantFloat(Float64Array.of(s.t[p], s.t[next]), Float64Array.of(s.f[p], s.f[next]), ref, this.s.lookbackMs) : s.f[p];
        if (f !== undefined) floats.push({ t: ts, f });
      }
      this.addSamples(floats.length + histograms.length);
      if (floats.length + histograms.length > 0) {
        out.push({ metric: s.metric, floats, ...(histograms.length > 0 ? { histograms } : {}), dropName: false });
      }
    }
    return out;
  }

  /** A range selector as a query result (instant queries only): the raw samples in (ref - range, ref]. */
  private evalMatrixSelector(ms: MatrixSelector): EvalMatrix {
    if (!this.instant) throw new PromQLExecutionError('cannot do range evaluation of matrix selector');
    const vs = unwrapParens(ms.vectorSelector);
    if (vs.kind !== 'vectorSelector') throw new PromQLExecutionError('ranges only allowed for vector selectors');
    const refEnd = (vs.atMs ?? this.start) - vs.offsetMs;
    const refStart = refEnd - ms.rangeMs;
    const out: EvalMatrix = [];
    for (const s of this.data(vs)) {
      const { t, f } = s.live;
      const floats = [];
      for (let i = 0; i < t.length; i++) if (t[i] > refStart && t[i] <= refEnd) floats.push({ t: t[i], f: f[i] });
      const histograms: HPoint[] = [];
      if (s.liveH) {
        const { t: ht, h } = s.liveH;
        for (let i = 0; i < ht.length; i++) if (ht[i] > refStart && ht[i] <= refEnd) histograms.push({ t: ht[i], h: h[i] });
      }
      this.addSamples(floats.length + histograms.length);
      if (floats.length + histograms.length > 0) {
        out.push({ metric: s.metric, floats, ...(histograms.length > 0 ? { histograms } : {}), dropName: false });
      }
    }
    return out;
  }

  // --- Step-wise evaluation (Prometheus' rangeEval) --------------------------------

  /**
   * Evaluates the argument expressions, then calls fn once per step with their
   * vectors at that step (string arguments give empty vectors), and assembles
   * the outputs into series. With `signatureOf`, fn also gets each sample's
   * matching signature.
   */
  private rangeEval(
    exprs: Expr[],
    fn: (vectors: EvalVector[], sigs: string[][], ts: number) => EvalVector,
    signatureOf?: (metric: Labels) => string,
    preEvaluated?: (EvalMatrix | EvalVector[] | null)[],
  ): EvalMatrix {
    const before = this.s.currentSamples;
    const inputs = exprs.map((e, i) => {
      if (preEvaluated?.[i] !== undefined) return preEvaluated[i];
      return exprType(e) === 'string' ? null : this.evalMatrix(e);
    });
    const steps = new StepInputs(inputs, signatureOf);
    const held = this.s.currentSamples;
    let produced = 0;
    const bySeries = new Map<string, { series: EvalSeries; lastTs: number }>();

    for (let ts = this.start, step = 0; ts <= this.end; ts += this.interval, step++) {
      this.s.checkCancel();
      const vectors: EvalVector[] = [];
      const sigs: string[][] = [];
      const gathered = steps.gather(step, ts, vectors, sigs);
      this.s.currentSamples = held + produced + gathered;
      if (this.s.currentSamples > this.s.maxSamples) throw this.s.tooManySamples();

      const result = fn(vectors, sigs, ts);
      produced += result.length;
      this.s.currentSamples = held + produced;
      if (this.s.currentSamples > this.s.maxSamples) throw this.s.tooManySamples();

      if (this.instant) {
        if (!this.s.delayed && containsSameLabelset(result.map((r) => r.metric))) {
          throw new PromQLExecutionError('vector cannot contain metrics with the same labelset');
        }
        this.s.currentSamples = before + result.length;
        return result.map((r) => seriesOfSample(r, ts));
      }
      addStepResult(bySeries, result, ts);
    }
    this.s.currentSamples = before + produced;
    return [...bySeries.values()].map((e) => e.series);
  }

  // --- Aggregations ---------------------------------------------------------------

  private evalAggregate(e: AggregateExpr): EvalMatrix {
    const grouping = [...e.grouping].sort();
    if (e.op === 'count_values') {
      const param = unwrapParens(e.param!);
      const valueLabel = param.kind === 'string' ? param.value : '';
      if (!isValidLabelName(valueLabel)) throw new PromQLExecutionError(`invalid label name ${goQuote(valueLabel)}`);
      const groupingSet = new Set(grouping);
      return this.rangeEval([e.expr], (v, _s, ts) => countValuesStep(v[0], groupingSet, e.without, valueLabel, ts));
    }
    const before = this.s.currentSamples;
    let params: number[] | undefined;
    if (e.param) {
      const p = this.evalMatrix(e.param);
      params = [];
      const byTs = new Map((p[0]?.floats ?? []).map((pt) => [pt.t, pt.f]));
      for (let ts = this.start; ts <= this.end; ts += this.interval) params.push(byTs.get(ts) ?? 0);
    }
    const fused = !this.s.fused
      ? undefined
      : e.param
        ? this.fusedSelectorAggregation(e, grouping, params)
        : (this.fusedRangeAggregation(e, grouping) ?? this.fusedSelectorAggregation(e, grouping, undefined));
    if (fused) {
      this.s.currentSamples = before + totalSamples(fused);
      return fused;
    }
    const input = this.evalMatrix(e.expr);
    const out = evalAggregation({
      expr: { ...e, grouping },
      input,
      params,
      start: this.start,
      end: this.end,
      interval: this.interval,
      delayedNameRemoval: this.s.delayed,
      warn: (m) => this.s.annotations.warn(this.s.annotations.at(m, (e.param ?? e).pos.start)),
      warnAtExpr: (m) => this.s.annotations.warn(this.s.annotations.at(m, e.expr.pos.start)),
      infoAtExpr: (m) => this.s.annotations.info(this.s.annotations.at(m, e.expr.pos.start)),
      infoAtAggregation: (m) => this.s.annotations.info(this.s.annotations.at(m, e.pos.start)),
      checkCancel: () => this.s.checkCancel(),
    });
    this.s.currentSamples = before + totalSamples(out);
    return out;
  }

  // --- Binary operators -------------------------------------------------------------

  private evalBinary(e: BinaryExpr): EvalMatrix {
    const lt = exprType(e.lhs);
    const rt = exprType(e.rhs);
    const resultMetrics = new WeakMap();
    const a = this.s.annotations;
    const ctx = (ts: number) => ({
      ts,
      delayedNameRemoval: this.s.delayed,
      resultMetrics,
      warn: (m: string) => a.warn(a.at(m, e.pos.start)),
      info: (m: string) => a.info(a.at(m, e.pos.start)),
    });
    if (lt === 'scalar' && rt === 'scalar') {
      return this.rangeEval([e.lhs, e.rhs], (v, _s, ts) => [{ metric: [], t: ts, f: scalarBinop(e.op, v[0][0].f, v[1][0].f), dropName: false }]);
    }
    if (lt === 'vector' && rt === 'vector') {
      const m = e.matching!;
      const sigOf = matchingSignature(m);
      if (isSetOp(e.op)) {
        const setFn = e.op === 'and' ? vectorAnd : e.op === 'or' ? vectorOr : vectorUnless;
        const mat = this.rangeEval([e.lhs, e.rhs], (v, s) => setFn(v[0], v[1], s[0], s[1]), sigOf);
        return mat;
      }
      return this.rangeEval([e.lhs, e.rhs], (v, s, ts) => vectorBinop(e.op, v[0], v[1], m, e.returnBool, s[0], s[1], ctx(ts)), sigOf);
    }
    if (lt === 'vector') {
      return this.rangeEval([e.lhs, e.rhs], (v, _s, ts) => vectorScalarBinop(e.op, v[0], v[1][0].f, false, e.returnBool, ctx(ts)));
    }
    return this.rangeEval([e.lhs, e.rhs], (v, _s, ts) => vectorScalarBinop(e.op, v[1], v[0][0].f, true, e.returnBool, ctx(ts)));
  }

  // --- Function calls ---------------------------------------------------------------

  private functionContext(ts: number, e: Call): FunctionContext {
    const a = this.s.annotations;
    const pos = (arg = 0) => e.args[arg]?.pos.start ?? e.pos.start;
    return {
      ts,
      delayedNameRemoval: this.s.delayed,
      query: this.s.query,
      warn: (m, arg) => a.warn(a.at(m, pos(arg))),
      info: (m, arg) => a.info(a.at(m, pos(arg))),
    };
  }

  private evalCall(e: Call): EvalMatrix {
    if (e.func.name === 'info') return this.evalInfo(e);
    const def: FunctionDef | undefined = FUNCTIONS[e.func.name];
    const impl = def?.impl;
    if (!impl) throw new PromQLExecutionError(`function ${goQuote(e.func.name)} is not supported yet`);
    const args = e.args.map(unwrapParens);

    if (impl.kind === 'series') {
      const input = this.evalMatrix(args[0]);
      const out = impl.call(input, args, { delayedNameRemoval: this.s.delayed });
      return this.mergeSeriesWithSameLabelset(out);
    }

    if (impl.kind === 'instant') {
      // timestamp() of a selector reports the samples' own timestamps, not the step's.
      if (e.func.name === 'timestamp' && args[0]?.kind === 'vectorSelector') {
        const perStep = this.selectInstant(args[0], true);
        return this.rangeEval(args, (v, _s, ts) => impl.call(v, args, this.functionContext(ts, e)), undefined, [perStep]);
      }
      return this.rangeEval(args, (v, _s, ts) => impl.call(v, args, this.functionContext(ts, e)));
    }

    return this.evalRangeFunction(e, args, impl);
  }

  /** info(v, selector): v with the data labels of its info series (see info.ts). */
  private evalInfo(e: Call): EvalMatrix {
    const sel = infoSelector(e.args[1]?.kind === 'vectorSelector' ? e.args[1] : undefined);
    const base = this.evalMatrix(e.args[0]);
    const fetched = this.s.data.get(e);
    if (!fetched) throw new PromQLExecutionError('internal error: info series were not fetched');
    const info = relevantInfoSeries(
      fetched,
      base.map((s) => s.metric),
      sel,
    );
    // The info series' latest sample at each step (no offset or @), valued with its own timestamp: the newest one wins.
    const perStep: EvalVector[] = Array.from({ length: this.numSteps }, () => []);
    for (const s of info) {
      let j = 0;
      for (let ts = this.start, step = 0; ts <= this.end; ts += this.interval, step++) {
        while (j < s.t.length && s.t[j] <= ts) j++;
        const idx = j - 1;
        if (idx < 0 || s.t[idx] <= ts - this.s.lookbackMs || (s.stale && s.stale[idx])) continue;
        const smp: EvalSample = { metric: s.metric, t: ts, f: s.t[idx], dropName: false };
        const h = s.hs?.[idx];
        if (h) smp.h = h;
        perStep[step].push(smp);
      }
    }
    return this.rangeEval([e.args[0], e.args[1] ?? e.args[0]], (v) => combineInfo(v[0], v[1], sel), undefined, [base, perStep]);
  }

  /**
   * sum/avg/count/group/min/max (by labels) of a range function over a range
   * selector, e.g. `sum by (job) (rate(x[5m]))`: each series' windows slide over
   * its samples and every value goes straight into its group's cell, with no
   * series, point or label set built per input series (what evalRangeFunction
   * and then evalAggregation would allocate). The same values in the same order
   * per cell, so the same result. Undefined where the general path is needed:
   * histograms, selectors with mixed metric names (a duplicate label set after
   * dropping the name is an error there), `without`, metadata labels in the
   * grouping, scalar arguments, anchored/smoothed, delayed name removal.
   */
  private fusedRangeAggregation(e: AggregateExpr, grouping: string[]): EvalMatrix | undefined {
    const fusable = this.fusableRange(e, grouping);
    if (fusable === undefined) return undefined;
    const { call, impl, arg, vs, data } = fusable;
    const a = this.s.annotations;
    const warn = (m: string) => a.warn(a.at(m, arg.pos.start));
    const info = (m: string) => a.info(a.at(m, arg.pos.start));
    const isRateLike = call.func.name === 'rate' || call.func.name === 'increase';
    const empty = new Float64Array(0);
    const window: RangeWindow = { t: empty, f: empty, lo: 0, hi: 0, ht: empty, h: [] };
    const ctx: RangeContext = {
      ts: 0,
      rangeStart: 0,
      rangeEnd: 0,
      rangeMs: arg.rangeMs,
      scalarArgs: [],
      metric: [],
      warn,
      info,
      warnAtArg: (i, m) => a.warn(a.at(m, call.args[i].pos.start)),
    };
    const { groupOf, outputs } = groupsOf(
      data.map((s) => s.metric),
      new Set(grouping),
      false,
    );
    const cells = new FloatGroupCells(e.op, outputs.length, this.numSteps);
    const rangeMs = arg.rangeMs;
    for (let si = 0; si < data.length; si++) {
      if ((si & 1023) === 0) this.s.checkCancel();
      const s = data[si];
      const { t, f } = s.live;
      ctx.metric = s.metric;
      const base = groupOf[si] * this.numSteps;
      let lo = 0;
      let hi = 0;
      let produced = 0;
      for (let ts = this.start, step = 0; ts <= this.end; ts += this.interval, step++) {
        const rangeEnd = (vs.atMs ?? ts) - vs.offsetMs;
        const rangeStart = rangeEnd - rangeMs;
        while (hi < t.length && t[hi] <= rangeEnd) hi++;
        while (lo < hi && t[lo] <= rangeStart) lo++;
        if (hi === lo) continue;
        if (this.s.currentSamples + (hi - lo) > this.s.maxSamples) throw this.s.tooManySamples();
        window.t = t;
        window.f = f;
        window.lo = lo;
        window.hi = hi;
        ctx.ts = ts;
        ctx.rangeStart = rangeStart;
        ctx.rangeEnd = rangeEnd;
        const v = impl.call(window, ctx);
        if (v === undefined || typeof v !== 'number') continue;
        cells.add(base + step, v);
        produced++;
      }
      if (produced === 0) continue;
      // The function's output drops the name (unless it keeps it), and so does its group's.
      if (!impl.keepName) outputs[groupOf[si]].dropName = true;
      // What the general path holds at this point: the function's output points.
      this.addSamples(produced);
      if (isRateLike && t.length > 0) infoIfNotCounter(s.metric, info);
    }
    return cells.emit(outputs, this.start, this.interval);
  }

  /** What fusedRangeAggregation folds (the call, its range function, selector and data), or undefined where the general path is needed. */
  private fusableRange(e: AggregateExpr, grouping: string[]): FusableRange | undefined {
    if (!isFloatGroupOp(e.op) || e.without || this.s.delayed || grouping.some((g) => g.startsWith('__'))) return undefined;
    const call = unwrapParens(e.expr);
    if (call.kind !== 'call' || call.args.length !== 1) return undefined;
    const def = FUNCTIONS[call.func.name];
    const impl = def?.impl;
    if (!impl || impl.kind !== 'range' || impl.absentOverTime) return undefined;
    const arg = call.args[0];
    if (arg.kind !== 'matrixSelector') return undefined;
    const vs = unwrapParens(arg.vectorSelector);
    if (vs.kind !== 'vectorSelector' || vs.anchored || vs.smoothed) return undefined;
    const data = this.data(vs);
    for (const s of data) if (s.liveH !== null && s.liveH.t.length > 0) return undefined;
    if (!sameMetricName(data)) return undefined;
    return { call, impl, arg, vs, data };
  }

  /**
   * sum/avg/count/group/min/max/quantile (by labels) of a plain instant
   * selector, e.g. `quantile by (job) (0.5, x)` over a range: each series'
   * sample at each step goes straight into its group's cell (quantile: into
   * one typed array per cell), with no series or points built per input series.
   * Same values, same order per cell as the general path. Undefined where that
   * is needed (histograms, `without`, metadata labels in the grouping,
   * smoothed, delayed name removal).
   */
  private fusedSelectorAggregation(e: AggregateExpr, grouping: string[], params: number[] | undefined): EvalMatrix | undefined {
    const isQuantile = e.op === 'quantile';
    if (!(isFloatGroupOp(e.op) || (isQuantile && params)) || e.without || this.s.delayed || grouping.some((g) => g.startsWith('__'))) return undefined;
    const vs = unwrapParens(e.expr);
    if (vs.kind !== 'vectorSelector' || vs.smoothed) return undefined;
    const data = this.data(vs);
    for (const s of data) if (s.hs !== null) return undefined;
    const { groupOf, outputs } = groupsOf(
      data.map((s) => s.metric),
      new Set(grouping),
      false,
    );
    const numSteps = this.numSteps;
    const lookback = this.s.lookbackMs;
    /** Calls fn(cell, value) for every series' sample at every step, in series order. */
    const visit = (fn: (cell: number, f: number) => void, count: boolean) => {
      for (let si = 0; si < data.length; si++) {
        if ((si & 1023) === 0) this.s.checkCancel();
        const s = data[si];
        const { t, f, stale } = s;
        const base = groupOf[si] * numSteps;
        let j = 0;
        let n = 0;
        for (let ts = this.start, step = 0; ts <= this.end; ts += this.interval, step++) {
          const ref = (vs.atMs ?? ts) - vs.offsetMs;
          while (j < t.length && t[j] <= ref) j++;
          const idx = j - 1;
          if (idx < 0 || t[idx] <= ref - lookback) continue;
          if (stale && stale[idx]) continue;
          fn(base + step, f[idx]);
          n++;
        }
        // What the general path holds: the selector's points.
        if (count) this.addSamples(n);
      }
    };
    if (!isQuantile) {
      const cells = new FloatGroupCells(e.op, outputs.length, numSteps);
      visit((cell, f) => cells.add(cell, f), true);
      return cells.emit(outputs, this.start, this.interval);
    }
    for (const q of params!) {
      if (Number.isNaN(q) || q < 0 || q > 1) {
        this.s.annotations.warn(this.s.annotations.at(`PromQL warning: quantile value should be between 0 and 1, got ${formatGoFloat(q)}`, e.param!.pos.start));
      }
    }
    // Values per cell, laid out cell after cell: count, then place.
    const cellCount = outputs.length * numSteps;
    const offsets = new Int32Array(cellCount + 1);
    visit((cell) => void offsets[cell + 1]++, true);
    for (let c = 0; c < cellCount; c++) offsets[c + 1] += offsets[c];
    const values = new Float64Array(offsets[cellCount]);
    const fill = offsets.slice(0, cellCount);
    visit((cell, f) => (values[fill[cell]++] = f), false);
    for (let g = 0; g < outputs.length; g++) {
      for (let step = 0; step < numSteps; step++) {
        const c = g * numSteps + step;
        if (offsets[c + 1] === offsets[c]) continue;
        outputs[g].floats.push({ t: this.start + step * this.interval, f: quantile(params![step], values.subarray(offsets[c], offsets[c + 1])) });
      }
    }
    return outputs.filter((o) => o.floats.length > 0);
  }

  private evalRangeFunction(e: Call, args: Expr[], impl: Extract<FunctionImpl, { kind: 'range' }>): EvalMatrix {
    const matrixIdx = args.findIndex((a) => a.kind === 'matrixSelector' || a.kind === 'subquery');
    const arg = args[matrixIdx];
    if (!arg) throw new PromQLExecutionError(`expected a range vector in call to ${goQuote(e.func.name)}`);
    const source = this.rangeSource(arg);
    const scalarArgs = this.scalarArgsByStep(args, matrixIdx);
    const a = this.s.annotations;
    const warn = (m: string) => a.warn(a.at(m, arg.pos.start));
    const info = (m: string) => a.info(a.at(m, arg.pos.start));
    if (source.anchored || source.smoothed) return this.evalExtendedRange(e, arg, source);
    const isRateLike = e.func.name === 'rate' || e.func.name === 'increase';
    // One window and one context, updated in place: this runs per series and step, and closures cost.
    const window: RangeWindow = { t: NO_HISTOGRAMS.t, f: NO_HISTOGRAMS.t, lo: 0, hi: 0, ht: NO_HISTOGRAMS.t, h: NO_HISTOGRAMS.h };
    const ctx: RangeContext = {
      ts: 0,
      rangeStart: 0,
      rangeEnd: 0,
      rangeMs: source.rangeMs,
      scalarArgs: new Array<number>(scalarArgs.length),
      metric: [],
      warn,
      info,
      warnAtArg: (i, m) => a.warn(a.at(m, e.args[i].pos.start)),
    };
    const out: EvalMatrix = [];
    for (const s of source.series) {
      this.s.checkCancel();
      const series = this.rangeFunctionOf(s, source, impl, window, ctx, scalarArgs, isRateLike);
      if (series !== undefined) out.push(series);
    }

    if (impl.absentOverTime) return this.absentOverTime(out, arg);
    // Fetched series are distinct, so dropping one shared metric name cannot make two alike.
    const distinct = arg.kind === 'matrixSelector' && sameMetricName(source.series);
    if (!this.s.delayed && !distinct && containsSameLabelset(out.map((x) => x.metric))) {
      throw new PromQLExecutionError('vector cannot contain metrics with the same labelset');
    }
    return out;
  }

  /** The scalar arguments of a range function call, each as one value per step (NaN where it has none). */
  private scalarArgsByStep(args: Expr[], matrixIdx: number): number[][] {
    const scalarArgs: number[][] = [];
    for (let i = 0; i < args.length; i++) {
      if (i === matrixIdx) continue;
      const m = this.evalMatrix(args[i]);
      const byTs = new Map((m[0]?.floats ?? []).map((p) => [p.t, p.f]));
      const values: number[] = [];
      for (let ts = this.start; ts <= this.end; ts += this.interval) values.push(byTs.get(ts) ?? NaN);
      scalarArgs.push(values);
    }
    return scalarArgs;
  }

  /** A range function over one series' windows, step by step; undefined when no step gave a value. */
  private rangeFunctionOf(
    s: RangeSource['series'][number],
    source: RangeSource,
    impl: Extract<FunctionImpl, { kind: 'range' }>,
    window: RangeWindow,
    ctx: RangeContext,
    scalarArgs: number[][],
    isRateLike: boolean,
  ): EvalSeries | undefined {
    const { t, f } = s;
    const hs = s.h ?? NO_HISTOGRAMS;
    ctx.metric = s.metric;
    let lo = 0;
    let hi = 0;
    let hlo = 0;
    let hhi = 0;
    const floats = [];
    const histograms: HPoint[] = [];
    let sawFloats = false;
    for (let ts = this.start, step = 0; ts <= this.end; ts += this.interval, step++) {
      const rangeEnd = (source.atMs ?? ts) - source.offsetMs;
      const rangeStart = rangeEnd - source.rangeMs;
      while (hi < t.length && t[hi] <= rangeEnd) hi++;
      while (lo < hi && t[lo] <= rangeStart) lo++;
      while (hhi < hs.t.length && hs.t[hhi] <= rangeEnd) hhi++;
      while (hlo < hhi && hs.t[hlo] <= rangeStart) hlo++;
      if (hi === lo && hhi === hlo) continue;
      if (hi > lo) sawFloats = true;
      if (this.s.currentSamples + (hi - lo) + (hhi - hlo) > this.s.maxSamples) throw this.s.tooManySamples();
      window.t = t;
      window.f = f;
      window.lo = lo;
      window.hi = hi;
      if (hhi > hlo) {
        window.ht = hs.t.subarray(hlo, hhi);
        window.h = hs.h.slice(hlo, hhi);
      } else {
        window.ht = NO_HISTOGRAMS.t;
        window.h = NO_HISTOGRAMS.h;
      }
      ctx.ts = ts;
      ctx.rangeStart = rangeStart;
      ctx.rangeEnd = rangeEnd;
      for (let i = 0; i < scalarArgs.length; i++) ctx.scalarArgs[i] = scalarArgs[i][step];
      const v = impl.call(window, ctx);
      if (v === undefined) continue;
      if (typeof v === 'number') floats.push({ t: ts, f: v });
      else histograms.push({ t: ts, h: v });
    }
    if (floats.length + histograms.length === 0) return undefined;
    this.addSamples(floats.length + histograms.length);
    // last_over_time and first_over_time keep the name, unless the input already lost it.
    const dropName = !impl.keepName || s.dropName;
    const metric = dropName && !this.s.delayed ? dropMetadataLabels(s.metric) : s.metric;
    if (isRateLike && sawFloats && hs.h.length === 0) infoIfNotCounter(s.metric, ctx.info);
    return { metric, floats, ...(histograms.length > 0 ? { histograms } : {}), dropName };
  }

  /** rate/increase/delta/changes/resets over a range selector with `anchored` or `smoothed` (see anchored-smoothed.ts). */
  private evalExtendedRange(e: Call, arg: Expr, source: RangeSource): EvalMatrix {
    const fn = e.func.name as ExtendedFunction;
    const a = this.s.annotations;
    const annotate = { warn: (m: string) => a.warn(a.at(m, arg.pos.start)), info: (m: string) => a.info(a.at(m, arg.pos.start)) };
    const lookback = this.s.lookbackMs;
    const rangeSeconds = source.rangeMs / 1000;
    const noHistograms = { t: new Float64Array(0), h: [] as FloatHistogram[] };
    const out: EvalMatrix = [];
    for (const s of source.series) {
      this.s.checkCancel();
      const name = s.metric.find((l) => l.name === METRIC_NAME)?.value ?? '';
      const hs = s.h ?? noHistograms;
      const floats: FPoint[] = [];
      const histograms: HPoint[] = [];
      let lo = 0;
      let hi = 0;
      let hlo = 0;
      let hhi = 0;
      for (let ts = this.start; ts <= this.end; ts += this.interval) {
        const rangeEnd = (source.atMs ?? ts) - source.offsetMs;
        const rangeStart = rangeEnd - source.rangeMs;
        while (hi < s.t.length && s.t[hi] <= rangeEnd) hi++;
        while (lo < hi && s.t[lo] <= rangeStart) lo++;
        while (hhi < hs.t.length && hs.t[hhi] <= rangeEnd) hhi++;
        while (hlo < hhi && hs.t[hlo] <= rangeStart) hlo++;
        if (source.anchored && (fn === 'changes' || fn === 'resets')) {
          const v = anchoredChangesOrResets({ t: s.t, f: s.f, lo, hi }, { t: hs.t, h: hs.h, lo: hlo, hi: hhi }, rangeStart, lookback, fn === 'resets');
          if (v !== undefined) floats.push({ t: ts, f: v });
          continue;
        }
        // Which kind the window (with its neighbours) holds.
        const near = (t: Float64Array, l: number, h: number) =>
          h > l || (l > 0 && t[l - 1] > rangeStart - lookback) || (source.smoothed && h < t.length && t[h] < rangeEnd + lookback);
        const hasFloats = near(s.t, lo, hi);
        const hasHistograms = near(hs.t, hlo, hhi);
        if (hasFloats && hasHistograms) {
          annotate.warn(mixedFloatsHistograms(name));
          continue;
        }
        let v: number | FloatHistogram | undefined;
        if (hasHistograms) {
          v = source.anchored
            ? anchoredHistogram(fn, hs.t, hs.h, hlo, hhi, rangeStart, lookback, rangeSeconds, name, annotate)
            : smoothedHistogram(fn, hs.t, hs.h, hlo, hhi, rangeStart, rangeEnd, lookback, rangeSeconds, name, annotate);
        } else if (hasFloats) {
          v = source.anchored
            ? anchoredFloat(fn, s.t, s.f, lo, hi, rangeStart, lookback, rangeSeconds)
            : smoothedFloat(fn, s.t, s.f, lo, hi, rangeStart, rangeEnd, lookback, rangeSeconds);
        }
        if (v === undefined) continue;
        if (typeof v === 'number') floats.push({ t: ts, f: v });
        else histograms.push({ t: ts, h: v });
      }
      if (floats.length + histograms.length === 0) continue;
      this.addSamples(floats.length + histograms.length);
      const metric = this.s.delayed ? s.metric : dropMetadataLabels(s.metric);
      out.push({ metric, floats, ...(histograms.length > 0 ? { histograms } : {}), dropName: true });
    }
    if (!this.s.delayed && containsSameLabelset(out.map((x) => x.metric))) {
      throw new PromQLExecutionError('vector cannot contain metrics with the same labelset');
    }
    return out;
  }

  /**
   * The series a range-vector argument provides, with how to window them: a
   * range selector's fetched samples, or a subquery's evaluated points.
   */
  private rangeSource(arg: Expr): RangeSource {
    if (arg.kind === 'subquery') {
      const series = this.evalSubquery(arg).map((s) => ({
        metric: s.metric,
        t: Float64Array.from(s.floats, (p) => p.t),
        f: Float64Array.from(s.floats, (p) => p.f),
        h: s.histograms && s.histograms.length > 0 ? { t: Float64Array.from(s.histograms, (p) => p.t), h: s.histograms.map((p) => p.h) } : null,
        dropName: s.dropName,
      }));
      return { series, rangeMs: arg.rangeMs, offsetMs: arg.offsetMs, atMs: arg.atMs };
    }
    if (arg.kind !== 'matrixSelector') throw new PromQLExecutionError('expected a range vector');
    const vs = unwrapParens(arg.vectorSelector);
    if (vs.kind !== 'vectorSelector') throw new PromQLExecutionError('ranges only allowed for vector selectors');
    const series = this.data(vs).map((s) => ({ metric: s.metric, t: s.live.t, f: s.live.f, h: s.liveH, dropName: false }));
    return { series, rangeMs: arg.rangeMs, offsetMs: vs.offsetMs, atMs: vs.atMs, anchored: vs.anchored, smoothed: vs.smoothed };
  }

  /**
   * Evaluates a subquery's inner expression at its own steps: multiples of the
   * step after (start - offset - range), up to end - offset, as Prometheus aligns them.
   */
  private evalSubquery(sq: SubqueryExpr): EvalMatrix {
    const outerStart = sq.atMs ?? this.start;
    const outerEnd = sq.atMs ?? this.end;
    const interval = sq.stepMs > 0 ? sq.stepMs : this.s.defaultSubqueryStepMs;
    const from = outerStart - sq.offsetMs - sq.rangeMs;
    let innerStart = interval * Math.trunc(from / interval);
    if (innerStart <= from) innerStart += interval;
    const innerEnd = outerEnd - sq.offsetMs;
    if (innerEnd < innerStart) return [];
    return new Evaluator(innerStart, innerEnd, interval, this.s).evalMatrix(sq.expr);
  }

  /** absent_over_time: one series with the selector's labels at the steps where no series had samples. */
  private absentOverTime(mat: EvalMatrix, arg: Expr): EvalMatrix {
    const found = new Set<number>();
    for (const s of mat) {
      for (const p of s.floats) found.add(p.t);
      for (const p of s.histograms ?? []) found.add(p.t);
    }
    const floats = [];
    for (let ts = this.start; ts <= this.end; ts += this.interval) if (!found.has(ts)) floats.push({ t: ts, f: 1 });
    if (floats.length === 0) return [];
    return [{ metric: absentLabels(arg), floats, dropName: true }];
  }

  // --- Label-set bookkeeping ----------------------------------------------------------

  /** Merges series that ended up with one label set; overlapping samples are an error. */
  mergeSeriesWithSameLabelset(mat: EvalMatrix): EvalMatrix {
    if (mat.length <= 1 || !containsSameLabelset(mat.map((s) => s.metric))) return mat;
    const byKey = new Map<string, EvalSeries>();
    for (const s of mat) {
      const key = keyOf(s.metric);
      const prev = byKey.get(key);
      if (!prev) {
        byKey.set(key, s);
        continue;
      }
      const floats = prev.floats.concat(s.floats).sort((a, b) => a.t - b.t);
      const histograms = (prev.histograms ?? []).concat(s.histograms ?? []).sort((a, b) => a.t - b.t);
      for (const points of [floats, histograms]) {
        for (let i = 1; i < points.length; i++) {
          if (points[i].t === points[i - 1].t) throw new PromQLExecutionError('vector cannot contain metrics with the same labelset');
        }
      }
      byKey.set(key, { ...prev, floats, ...(histograms.length > 0 ? { histograms } : {}) });
    }
    return [...byKey.values()];
  }

  /** Delayed name removal's last step: drop the names now, then merge or reject the duplicates. */
  cleanupMetricLabels(mat: EvalMatrix, isVector: boolean): EvalMatrix {
    const cleaned = mat.map((s) => (s.dropName ? { ...s, metric: dropMetadataLabels(s.metric) } : s));
    if (isVector) {
      if (containsSameLabelset(cleaned.map((s) => s.metric))) {
        throw new PromQLExecutionError('vector cannot contain metrics with the same labelset');
      }
      return cleaned;
    }
    return this.mergeSeriesWithSameLabelset(cleaned);
  }
}

/** No histogram samples: the window's histogram fields when a series or a window has none. */
const NO_HISTOGRAMS = { t: new Float64Array(0), h: [] as FloatHistogram[] };

/** What fusedRangeAggregation folds: `sum by (...) (<range function>(<selector>[range]))`. */
interface FusableRange {
  call: Call;
  impl: Extract<FunctionImpl, { kind: 'range' }>;
  arg: MatrixSelector;
  vs: VectorSelector;
  data: PreparedSeries[];
}

/** rate() and increase() of a series whose name does not look like a counter's get Prometheus' info annotation. */
function infoIfNotCounter(metric: Labels, info: (m: string) => void): void {
  const name = metric.find((l) => l.name === METRIC_NAME)?.value;
  if (name && !/(_total|_sum|_count|_bucket)$/.test(name)) {
    info(`PromQL info: metric might not be a counter, name does not end in _total/_sum/_count/_bucket: ${goQuote(name)}`);
  }
}

/**
 * rangeEval's arguments, read step by step: a matrix through a cursor per series (floats and
 * histograms apart), or vectors already per step; with `signatureOf`, each sample's signature.
 */
class StepInputs {
  private readonly inputs: (EvalMatrix | EvalVector[] | null)[];
  private readonly signatureOf: ((metric: Labels) => string) | undefined;
  private readonly seriesSigs: (string[] | null)[];
  private readonly cursors: (Int32Array | null)[];
  private readonly hCursors: (Int32Array | null)[];

  constructor(inputs: (EvalMatrix | EvalVector[] | null)[], signatureOf: ((metric: Labels) => string) | undefined) {
    this.inputs = inputs;
    this.signatureOf = signatureOf;
    this.seriesSigs = inputs.map((inp) => (signatureOf && inp && !isPerStep(inp) ? (inp as EvalMatrix).map((s) => signatureOf(s.metric)) : null));
    this.cursors = inputs.map((inp) => (inp && !isPerStep(inp) ? new Int32Array(inp.length) : null));
    this.hCursors = inputs.map((inp) => (inp && !isPerStep(inp) ? new Int32Array(inp.length) : null));
  }

  /** Each argument's vector at `step` (time `ts`) into vectors, their signatures into sigs (strings: empty); returns the samples gathered. */
  gather(step: number, ts: number, vectors: EvalVector[], sigs: string[][]): number {
    let gathered = 0;
    for (let i = 0; i < this.inputs.length; i++) {
      const inp = this.inputs[i];
      const vec: EvalVector = [];
      const sig: string[] = [];
      if (inp && isPerStep(inp)) {
        for (const smp of inp[step]) {
          vec.push(smp);
          if (this.signatureOf) sig.push(this.signatureOf(smp.metric));
        }
      } else if (inp) {
        gatherAt(inp as EvalMatrix, this.cursors[i]!, this.hCursors[i]!, this.seriesSigs[i], ts, vec, sig);
      }
      gathered += vec.length;
      vectors.push(vec);
      sigs.push(sig);
    }
    return gathered;
  }
}

/** The matrix's samples at `ts` (a float, else a histogram, per series) into vec, moving each series' cursor past it. */
function gatherAt(mat: EvalMatrix, cur: Int32Array, hCur: Int32Array, ss: string[] | null, ts: number, vec: EvalVector, sig: string[]): void {
  for (let si = 0; si < mat.length; si++) {
    const fl = mat[si].floats;
    const c = cur[si];
    if (c < fl.length && fl[c].t === ts) {
      cur[si] = c + 1;
      vec.push({ metric: mat[si].metric, t: ts, f: fl[c].f, dropName: mat[si].dropName });
      if (ss) sig.push(ss[si]);
      continue;
    }
    const hl = mat[si].histograms;
    const hc = hCur[si];
    if (hl && hc < hl.length && hl[hc].t === ts) {
      hCur[si] = hc + 1;
      vec.push({ metric: mat[si].metric, t: ts, f: 0, h: hl[hc].h, dropName: mat[si].dropName });
      if (ss) sig.push(ss[si]);
    }
  }
}

/** A step's result added to its series (a second sample of one label set at one step is an error). */
function addStepResult(bySeries: Map<string, { series: EvalSeries; lastTs: number }>, result: EvalVector, ts: number): void {
  for (const r of result) {
    const key = keyOf(r.metric);
    const entry = bySeries.get(key);
    if (entry) {
      if (entry.lastTs === ts) throw new PromQLExecutionError('vector cannot contain metrics with the same labelset');
      entry.lastTs = ts;
      if (r.h) (entry.series.histograms ??= []).push({ t: ts, h: r.h });
      else entry.series.floats.push({ t: ts, f: r.f });
    } else {
      bySeries.set(key, { series: seriesOfSample(r, ts), lastTs: ts });
    }
  }
}

function isPerStep(x: EvalMatrix | EvalVector[]): x is EvalVector[] {
  return x.length > 0 && Array.isArray(x[0]);
}

/** Whether every series has the same __name__ (or none has one). */
function sameMetricName(series: { metric: Labels }[]): boolean {
  let name: string | undefined;
  for (let i = 0; i < series.length; i++) {
    const n = series[i].metric.find((l) => l.name === METRIC_NAME)?.value ?? '';
    if (i === 0) name = n;
    else if (n !== name) return false;
  }
  return true;
}

function containsSameLabelset(metrics: Labels[]): boolean {
  if (metrics.length <= 1) return false;
  const seen = new Set<string>();
  for (const m of metrics) {
    const k = keyOf(m);
    if (seen.has(k)) return true;
    seen.add(k);
  }
  return false;
}

function totalSamples(mat: EvalMatrix): number {
  let n = 0;
  for (const s of mat) n += s.floats.length + (s.histograms?.length ?? 0);
  return n;
}

/** A one-point series holding a float or histogram sample. */
function seriesOfSample(r: EvalSample, ts: number): EvalSeries {
  if (r.h) return { metric: r.metric, floats: [], histograms: [{ t: ts, h: r.h }], dropName: r.dropName };
  return { metric: r.metric, floats: [{ t: ts, f: r.f }], dropName: r.dropName };
}
