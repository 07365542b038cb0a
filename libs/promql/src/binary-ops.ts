// Binary operators at one evaluation step: scalar/scalar, vector/scalar and
// vector/vector with one-to-one, many-to-one and one-to-many matching, and the
// set operators. Semantics (which side's labels survive, when the metric name is
// dropped, the errors) are Prometheus' VectorBinop and friends.

import type { Labels } from '@strata/model';
import { METRIC_NAME } from '@strata/model';
import type { BinaryOp, VectorMatching } from './ast.ts';
import { isTrimOp } from './ast.ts';
import { trimHistogram } from './histogram/trim.ts';
import { PromQLExecutionError } from './errors.ts';
import { goPow } from './go-compat.ts';
import type { FloatHistogram } from './histogram/float-histogram.ts';
import { IncompatibleSchemaError } from './histogram/float-histogram.ts';
import { dropMetadataLabels, getLabel, keyOf, labelsKeep, labelsString, labelsWithout, setLabel, signature } from './labels.ts';
import type { EvalSample, EvalVector } from './values.ts';

/** Arithmetic operators change what a series means, so their results lose the metric name. */
function changesMetricSchema(op: BinaryOp): boolean {
  return op === '+' || op === '-' || op === '*' || op === '/' || op === '%' || op === '^' || op === 'atan2';
}

type Arithmetic = (l: number, r: number) => number;
type Comparison = (l: number, r: number) => boolean;

const ARITHMETIC: Record<string, Arithmetic> = {
  '+': (l, r) => l + r,
  '-': (l, r) => l - r,
  '*': (l, r) => l * r,
  '/': (l, r) => l / r,
  '^': goPow,
  // JS % is exact with the dividend's sign, as Go's math.Mod.
  '%': (l, r) => l % r,
  atan2: Math.atan2,
};

const COMPARISONS: Record<string, Comparison> = {
  '==': (l, r) => l === r,
  '!=': (l, r) => l !== r,
  '>': (l, r) => l > r,
  '<': (l, r) => l < r,
  '>=': (l, r) => l >= r,
  '<=': (l, r) => l <= r,
};

/**
 * How an operator combines two floats: arithmetic yields a value, comparison
 * a keep/drop decision (the value is then the left side's).
 */
function operator(op: BinaryOp): { arithmetic: Arithmetic } | { comparison: Comparison } {
  const a = ARITHMETIC[op];
  if (a) return { arithmetic: a };
  const c = COMPARISONS[op];
  if (c) return { comparison: c };
  throw new PromQLExecutionError(`operator "${op}" not allowed for operations between vectors`);
}

/** scalar op scalar; comparisons (which require bool) give 1 or 0. */
export function scalarBinop(op: BinaryOp, lhs: number, rhs: number): number {
  const o = operator(op);
  return 'arithmetic' in o ? o.arithmetic(lhs, rhs) : o.comparison(lhs, rhs) ? 1 : 0;
}

export interface BinopContext {
  ts: number;
  delayedNameRemoval: boolean;
  /** Result labels by (many-side, one-side) label arrays, kept for one binary expression across steps. */
  resultMetrics?: WeakMap<Labels, WeakMap<Labels, Labels>>;
  /** Annotations at the binary expression's position. */
  warn?(message: string): void;
  info?(message: string): void;
}

/** The sample with a new value and its name dropped (or marked to be, with delayed name removal). */
function withDroppedName(s: EvalSample, f: number, ctx: BinopContext, h?: FloatHistogram): EvalSample {
  // An explicit literal, not a spread: this runs once per sample and step.
  const out: EvalSample = { metric: ctx.delayedNameRemoval ? s.metric : dropMetadataLabels(s.metric), t: s.t, f, dropName: true };
  if (h) out.h = h;
  return out;
}

/** The result of one element-wise operation (Prometheus' vectorElemBinop). */
interface ElemResult {
  f: number;
  h?: FloatHistogram;
  keep: boolean;
  /** An info annotation (incompatible sample types); the sample is still kept or dropped by `keep`. */
  info?: string;
  /** A warning that drops the sample. */
  error?: string;
  /** The operator is not defined for these sample types: no result, even with bool. */
  incompatible?: boolean;
}

/** op between two samples that may be floats or histograms. */
function elemBinop(op: BinaryOp, fl: number, fr: number, hl: FloatHistogram | undefined, hr: FloatHistogram | undefined): ElemResult {
  if (!hl && !hr) {
    const o = operator(op);
    if ('arithmetic' in o) return { f: o.arithmetic(fl, fr), keep: true };
    return { f: fl, keep: o.comparison(fl, fr) };
  }
  const incompatible = (l: string, r: string): ElemResult => ({
    f: 0,
    keep: false,
    incompatible: true,
    info: `PromQL info: incompatible sample types encountered for binary operator "${op}": ${l} ${op} ${r}`,
  });
  if (!hl && hr) {
    if (op === '*') return { f: 0, h: hr.copy().mul(fl).compact(0), keep: true };
    return incompatible('float', 'histogram');
  }
  if (hl && !hr) {
    if (op === '*') return { f: 0, h: hl.copy().mul(fr).compact(0), keep: true };
    if (op === '/') return { f: 0, h: hl.copy().div(fr).compact(0), keep: true };
    return incompatible('histogram', 'float');
  }
  const a = hl!;
  const b = hr!;
  if (op === '+' || op === '-') {
    const res = a.copy();
    let r;
    try {
      r = op === '+' ? res.add(b) : res.sub(b);
    } catch (err) {
      if (err instanceof IncompatibleSchemaError)
        return { f: 0, keep: false, error: `PromQL warning: incompatible bucket layout encountered for binary operator ${op}` };
      throw err;
    }
    if (op === '-') res.counterResetHint = 'gauge';
    const what = op === '+' ? 'addition' : 'subtraction';
    if (r.counterResetCollision) return { f: 0, keep: false, error: `PromQL warning: conflicting counter resets during histogram ${what}` };
    return {
      f: 0,
      h: res.compact(0),
      keep: true,
      info: r.nhcbBoundsReconciled ? `PromQL info: mismatched custom buckets were reconciled during ${what}` : undefined,
    };
  }
  if (op === '==') return { f: 0, h: a, keep: a.equals(b) };
  if (op === '!=') return { f: 0, h: a, keep: !a.equals(b) };
  return incompatible('histogram', 'histogram');
}

/** vector op scalar, or scalar op vector when `swap`; filtering comparisons keep the vector's value. */
export function vectorScalarBinop(op: BinaryOp, vec: EvalVector, scalar: number, swap: boolean, returnBool: boolean, ctx: BinopContext): EvalVector {
  const out: EvalVector = [];
  if (isTrimOp(op)) {
    // Histograms only; the series keeps its name, as with a filter.
    for (const s of vec) if (s.h && !swap) out.push({ ...s, h: trimHistogram(s.h, scalar, op === '</') });
    return out;
  }
  const o = operator(op);
  const comparison = 'comparison' in o;
  for (const s of vec) {
    if (s.h) {
      const r = swap ? elemBinop(op, scalar, 0, undefined, s.h) : elemBinop(op, 0, scalar, s.h, undefined);
      if (r.info) ctx.info?.(r.info);
      if (r.error || r.incompatible) continue;
      if (returnBool) out.push(withDroppedName(s, r.keep ? 1 : 0, ctx));
      else if (r.keep) out.push(comparison ? s : withDroppedName(s, 0, ctx, r.h));
      continue;
    }
    if (!comparison) {
      const fn = (o as { arithmetic: Arithmetic }).arithmetic;
      out.push(withDroppedName(s, swap ? fn(scalar, s.f) : fn(s.f, scalar), ctx));
      continue;
    }
    const cmp = (o as { comparison: Comparison }).comparison;
    const keep = swap ? cmp(scalar, s.f) : cmp(s.f, scalar);
    if (returnBool) out.push(withDroppedName(s, keep ? 1 : 0, ctx));
    else if (keep) out.push(s);
  }
  return out;
}

/**
 * The join signature function of a vector matching: on(...) compares only
 * the listed labels, ignoring(...) (or nothing) all but those and the name.
 */
export function matchingSignature(m: VectorMatching): (metric: Labels) => string {
  if (m.on) {
    const names = new Set(m.matchingLabels);
    return (metric) => signature(metric, names, true);
  }
  const names = new Set([METRIC_NAME, ...m.matchingLabels]);
  return (metric) => signature(metric, names, false);
}

/** The labels a vector/vector result carries: the "many" side's, shaped by on/ignoring and group_x. */
function resultMetric(lhs: Labels, rhs: Labels, op: BinaryOp, m: VectorMatching): Labels {
  let ls = lhs;
  // Unlike elsewhere, this drop happens even with delayed name removal, as in Prometheus.
  if (changesMetricSchema(op)) ls = dropMetadataLabels(ls);
  if (m.card === 'one-to-one') {
    const names = new Set(m.matchingLabels);
    ls = m.on ? labelsKeep(ls, names) : labelsWithout(ls, names);
  }
  for (const name of m.include) ls = setLabel(ls, name, getLabel(rhs, name));
  return ls;
}

function cachedResultMetric(lhs: Labels, rhs: Labels, op: BinaryOp, m: VectorMatching, ctx: BinopContext): Labels {
  const cache = ctx.resultMetrics;
  if (!cache) return resultMetric(lhs, rhs, op, m);
  let byRhs = cache.get(lhs);
  if (!byRhs) {
    byRhs = new WeakMap();
    cache.set(lhs, byRhs);
  }
  let out = byRhs.get(rhs);
  if (!out) {
    out = resultMetric(lhs, rhs, op, m);
    byRhs.set(rhs, out);
  }
  return out;
}

/** Labels of a series that take part in matching, for error messages (Prometheus' MatchLabels). */
function matchLabels(ls: Labels, m: VectorMatching): Labels {
  const names = new Set(m.matchingLabels);
  return ls.filter((l) => names.has(l.name) === m.on && (m.on || l.name !== METRIC_NAME));
}

/**
 * vector op vector for arithmetic and comparison operators. `lsig`/`rsig` are
 * the matching signatures of the samples, index-aligned with lhs/rhs.
 */
export function vectorBinop(
  op: BinaryOp,
  lhs: EvalVector,
  rhs: EvalVector,
  m: VectorMatching,
  returnBool: boolean,
  lsig: string[],
  rsig: string[],
  ctx: BinopContext,
): EvalVector {
  if (m.card === 'many-to-many') throw new PromQLExecutionError('many-to-many only allowed for set operators');
  // one-to-many is many-to-one with the sides swapped; values are swapped back below.
  const swapped = m.card === 'one-to-many';
  const [many, one, manySig, oneSig] = swapped ? [rhs, lhs, rsig, lsig] : [lhs, rhs, lsig, rsig];
  // fill_left stands in for the "many" side, fill_right for the "one" side.
  const fillMany = m.fillLeft;
  const fillOne = m.fillRight;
  if ((many.length === 0 && fillMany === undefined) || (one.length === 0 && fillOne === undefined)) return [];
  const j = new VectorJoin(op, m, returnBool, swapped, ctx);
  const oneBySig = indexBySignature(one, oneSig, m, swapped);
  for (let i = 0; i < many.length; i++) {
    const ls = many[i];
    const rs = oneBySig.get(manySig[i]);
    if (rs) j.join(ls, rs, manySig[i], true);
    else if (fillOne !== undefined) j.join(ls, j.filled(ls, fillOne), manySig[i], false);
  }
  if (fillMany !== undefined) {
    for (let i = 0; i < one.length; i++) {
      if (!j.matched.has(oneSig[i])) j.join(j.filled(one[i], fillMany), one[i], oneSig[i], false);
    }
  }
  return j.out;
}

/** The "one" side's samples by signature; two of one signature are an error (many-to-many is for set operators). */
function indexBySignature(one: EvalVector, oneSig: string[], m: VectorMatching, swapped: boolean): Map<string, EvalSample> {
  const oneBySig = new Map<string, EvalSample>();
  for (let i = 0; i < one.length; i++) {
    const rs = one[i];
    const dup = oneBySig.get(oneSig[i]);
    if (dup) {
      throw new PromQLExecutionError(
        `found duplicate series for the match group ${labelsString(matchLabels(rs.metric, m))} on the ${swapped ? 'left' : 'right'} ` +
          `hand-side of the operation: [${labelsString(rs.metric)}, ${labelsString(dup.metric)}];` +
          'many-to-many matching not allowed: matching labels must be unique on one side',
      );
    }
    oneBySig.set(oneSig[i], rs);
  }
  return oneBySig;
}

/** One vector/vector operation at one step: the pairs joined so far (by match group) and the samples they gave. */
class VectorJoin {
  readonly matched = new Map<string, Set<string> | null>();
  readonly out: EvalVector = [];
  private readonly op: BinaryOp;
  private readonly m: VectorMatching;
  private readonly returnBool: boolean;
  private readonly swapped: boolean;
  private readonly ctx: BinopContext;
  /** The float operator; undefined for a trim operator. */
  private readonly o: ReturnType<typeof operator> | undefined;
  // The last pair's result (apply()).
  private value = 0;
  private hist: FloatHistogram | undefined;
  private keep = true;

  constructor(op: BinaryOp, m: VectorMatching, returnBool: boolean, swapped: boolean, ctx: BinopContext) {
    this.op = op;
    this.m = m;
    this.returnBool = returnBool;
    this.swapped = swapped;
    this.ctx = ctx;
    this.o = isTrimOp(op) ? undefined : operator(op);
  }

  /** A stand-in for a missing sample: the fill value with the match group's labels. */
  filled(other: EvalSample, f: number): EvalSample {
    return { metric: matchLabels(other.metric, this.m), t: this.ctx.ts, f, dropName: false };
  }

  /** The many side's `ls` with the one side's `rs` (of match group `sig`): a sample unless a comparison drops it. */
  join(ls: EvalSample, rs: EvalSample, sig: string, cache: boolean): void {
    if (!this.apply(ls, rs)) return;
    const { op, m, ctx, returnBool } = this;
    let metric = cache ? cachedResultMetric(ls.metric, rs.metric, op, m, ctx) : resultMetric(ls.metric, rs.metric, op, m);
    if (!ctx.delayedNameRemoval && returnBool) metric = dropMetadataLabels(metric);
    this.checkUniqueMatch(sig, metric);
    if (!this.keep && !returnBool) return;
    const smp: EvalSample = { metric, t: ctx.ts, f: this.value, dropName: returnBool };
    if (this.hist) smp.h = this.hist;
    this.out.push(smp);
  }

  /** The operator on the pair (left and right as written) into value, hist and keep; false when the pair gives nothing. */
  private apply(ls: EvalSample, rs: EvalSample): boolean {
    const { o, swapped, returnBool } = this;
    const fl = swapped ? rs.f : ls.f;
    const fr = swapped ? ls.f : rs.f;
    this.hist = undefined;
    this.keep = true;
    if (!o) {
      // A trim operator: a histogram on the left, a float on the right.
      const hl = swapped ? rs.h : ls.h;
      if (!hl || (swapped ? ls.h : rs.h)) return false;
      this.value = 0;
      this.hist = trimHistogram(hl, fr, this.op === '</');
    } else if (!ls.h && !rs.h) {
      if ('arithmetic' in o) this.value = o.arithmetic(fl, fr);
      else {
        this.keep = o.comparison(fl, fr);
        this.value = returnBool ? (this.keep ? 1 : 0) : fl;
      }
    } else {
      const r = elemBinop(this.op, fl, fr, swapped ? rs.h : ls.h, swapped ? ls.h : rs.h);
      if (r.error) {
        this.ctx.warn?.(r.error);
        return false;
      }
      if (r.info) this.ctx.info?.(r.info);
      if (r.incompatible) return false;
      this.keep = r.keep;
      this.value = returnBool ? (r.keep ? 1 : 0) : r.f;
      this.hist = returnBool ? undefined : r.h;
    }
    return true;
  }

  /** A match group matches once one-to-one; many-to-one, once per result label set. */
  private checkUniqueMatch(sig: string, metric: Labels): void {
    if (this.m.card === 'one-to-one') {
      if (this.matched.has(sig)) {
        throw new PromQLExecutionError('multiple matches for labels: many-to-one matching must be explicit (group_left/group_right)');
      }
      this.matched.set(sig, null);
      return;
    }
    // The grouping labels must keep results of one match group apart.
    const key = keyOf(metric);
    let seen = this.matched.get(sig);
    if (!seen) {
      seen = new Set();
      this.matched.set(sig, seen);
    } else if (seen.has(key)) {
      throw new PromQLExecutionError('multiple matches for labels: grouping labels must ensure unique matches');
    }
    seen.add(key);
  }
}

/** lhs and rhs: the lhs samples that have a match on the right. */
export function vectorAnd(lhs: EvalVector, rhs: EvalVector, lsig: string[], rsig: string[]): EvalVector {
  if (lhs.length === 0 || rhs.length === 0) return [];
  const present = new Set(rsig);
  return lhs.filter((_, i) => present.has(lsig[i]));
}

/** lhs or rhs: all of lhs, plus the rhs samples without a match on the left. */
export function vectorOr(lhs: EvalVector, rhs: EvalVector, lsig: string[], rsig: string[]): EvalVector {
  if (lhs.length === 0) return rhs.slice();
  if (rhs.length === 0) return lhs.slice();
  const present = new Set(lsig);
  return lhs.concat(rhs.filter((_, i) => !present.has(rsig[i])));
}

/** lhs unless rhs: the lhs samples without a match on the right. */
export function vectorUnless(lhs: EvalVector, rhs: EvalVector, lsig: string[], rsig: string[]): EvalVector {
  if (lhs.length === 0 || rhs.length === 0) return lhs.slice();
  const present = new Set(rsig);
  return lhs.filter((_, i) => !present.has(lsig[i]));
}
