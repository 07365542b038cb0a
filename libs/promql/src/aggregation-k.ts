// topk, bottomk, limitk and limit_ratio exactly as Prometheus' aggregationK
// (promql/engine.go) computes them: at each step one heap per group, built
// with container/heap under vectorByValueHeap's Less (NaN below everything);
// a candidate replaces the heap's top only when strictly better, so which of
// several tied series survive depends on the heap's layout; topk and bottomk
// order an instant result by Go's sort.Sort of the reversed heap, limitk and
// limit_ratio leave the heap's order. Never replace the heaps by a sort.

import type { AggregateOp } from './ast.ts';
import { StepReader, groupsOf, type AggregationParams, type StepValue } from './aggregation-input.ts';
import { PromQLExecutionError } from './errors.ts';
import { formatGoG } from './go-compat.ts';
import { goHeapFix, goHeapUp, goReverse, goSort, reverseValueLess, valueLess, type GoSortable } from './go-sort.ts';
import type { FloatHistogram } from './histogram/float-histogram.ts';
import { keyOf } from './labels.ts';
import type { EvalMatrix, EvalSeries } from './values.ts';
import { keepRatioSample, ratioSampleOffset } from './xxhash.ts';

type SelectingOp = 'topk' | 'bottomk' | 'limitk' | 'limit_ratio';

const SELECTING = new Set<AggregateOp>(['topk', 'bottomk', 'limitk', 'limit_ratio']);

/** Whether an aggregation selects input samples (aggregationK) rather than folding them. */
export function isSelectingAggregation(op: AggregateOp): op is SelectingOp {
  return SELECTING.has(op);
}

/** One input sample at one step (Prometheus' Sample): its series' index and value. */
interface Picked {
  si: number;
  f: number;
  h: FloatHistogram | undefined;
}

/** One group's heap at one step (groupedAggregation.heap). */
class SampleHeap implements GoSortable {
  readonly items: Picked[] = [];
  private readonly lessValue: (a: number, b: number) => boolean;

  constructor(lessValue: (a: number, b: number) => boolean) {
    this.lessValue = lessValue;
  }

  less(i: number, j: number): boolean {
    return this.lessValue(this.items[i].f, this.items[j].f);
  }

  swap(i: number, j: number): void {
    const t = this.items[i];
    this.items[i] = this.items[j];
    this.items[j] = t;
  }

  /** heap.Push. */
  push(s: Picked): void {
    this.items.push(s);
    goHeapUp(this, this.items.length - 1);
  }

  /** group.heap[0] = s, then heap.Fix(h, 0) unless k is 1. */
  replaceTop(s: Picked, k: number): void {
    this.items[0] = s;
    if (k > 1) goHeapFix(this, 0, this.items.length);
  }

  /** sort.Sort(sort.Reverse(heap)): topk's descending, bottomk's ascending output order. */
  sortReversed(): void {
    if (this.items.length > 1) goSort(goReverse(this), this.items.length);
  }
}

/** How a step's samples are offered to the heaps: the op, its k or ratio, and what ratio sampling needs. */
interface StepRule {
  op: SelectingOp;
  k: number;
  ratio: number;
  offsets: number[] | undefined;
  groupOf: Int32Array;
  info(message: string): void;
}

/** Evaluates topk, bottomk, limitk or limit_ratio over all steps of its already evaluated input. */
export function evalAggregationK(p: AggregationParams): EvalMatrix {
  const op = p.expr.op as SelectingOp;
  if (!p.params) throw new PromQLExecutionError(`aggregation ${op}() needs a parameter`);
  const params = p.params;
  if (op === 'limit_ratio' ? !checkRatios(p, params) : !checkKs(params)) return [];
  const { input } = p;
  const { groupOf, outputs } = groupsOf(
    input.map((s) => s.metric),
    new Set(p.expr.grouping),
    p.expr.without,
  );
  const rule: StepRule = {
    op,
    k: 0,
    ratio: 0,
    offsets: op === 'limit_ratio' ? input.map((s) => ratioSampleOffset(s.metric)) : undefined,
    groupOf,
    info: p.infoAtAggregation,
  };
  const reader = new StepReader(input);
  const sink = new SelectedSink(input, p.start === p.end);
  for (let ts = p.start, step = 0; ts <= p.end; ts += p.interval, step++) {
    p.checkCancel();
    const select = setStepLimit(rule, params[step], input.length);
    const heaps = fillHeaps(rule, reader, input.length, ts, outputs.length, select);
    for (const heap of heaps) {
      if (heap === undefined) continue;
      if (op === 'topk' || op === 'bottomk') heap.sortReversed();
      for (const s of heap.items) sink.add(s, ts);
    }
  }
  return sink.result();
}

/** rangeEvalAgg's checks of k for topk, bottomk and limitk; false when no step can select anything. */
function checkKs(params: number[]): boolean {
  const { max, min, anyNaN } = goMinMax(params);
  if (max < 1) return false;
  if (anyNaN) throw new PromQLExecutionError('Parameter value is NaN');
  if (min <= MIN_INT64_FLOAT) throw new PromQLExecutionError(`Scalar value ${goV(min)} underflows int64`);
  if (max >= MAX_INT64_FLOAT) throw new PromQLExecutionError(`Scalar value ${goV(max)} overflows int64`);
  return true;
}

/** rangeEvalAgg's checks of limit_ratio's ratios, warning once for the largest above 1 and the smallest below -1. */
function checkRatios(p: AggregationParams, params: number[]): boolean {
  const { max, min, anyNaN } = goMinMax(params);
  if (max === 0 && min === 0) return false;
  if (anyNaN) throw new PromQLExecutionError('Ratio value is NaN');
  const capping = (r: number, to: number) => `PromQL warning: ratio value should be between -1 and 1, got ${formatGoG(r)}, capping to ${formatGoG(to)}`;
  if (max > 1) p.warn(capping(max, 1));
  if (min < -1) p.warn(capping(min, -1));
  return true;
}

const MAX_INT64_FLOAT = 9223372036854774784;
const MIN_INT64_FLOAT = -9223372036854775808;

/** fParams' Min and Max, folded with Go's math.Min/Max (an infinity wins over NaN, NaN over any number). */
function goMinMax(params: number[]): { max: number; min: number; anyNaN: boolean } {
  let max = -Number.MAX_VALUE;
  let min = Number.MAX_VALUE;
  let anyNaN = false;
  for (const v of params) {
    anyNaN ||= Number.isNaN(v);
    max = max === Infinity || v === Infinity ? Infinity : Number.isNaN(max) || Number.isNaN(v) ? NaN : Math.max(max, v);
    min = min === -Infinity || v === -Infinity ? -Infinity : Number.isNaN(min) || Number.isNaN(v) ? NaN : Math.min(min, v);
  }
  return { max, min, anyNaN };
}

/** Go's %v for a float64, enough for the int64 overflow messages. */
function goV(v: number): string {
  const s = String(v);
  return s.replace(/e\+?(-?)(\d)$/, 'e+$10$2').replace('e+-', 'e-');
}

/** The step's k (min(int64(k), series)) or capped ratio; false when the step selects nothing. */
function setStepLimit(rule: StepRule, param: number, numSeries: number): boolean {
  if (rule.op === 'limit_ratio') {
    rule.ratio = Math.max(-1, Math.min(1, param));
    return param !== 0;
  }
  rule.k = Math.min(Math.trunc(param), numSeries);
  return rule.k >= 1;
}

/**
 * Offers every series' sample at ts, in input order, to its group's heap (a group no sample
 * started stays undefined); with `select` false only consumes them, as the step selects nothing.
 */
function fillHeaps(rule: StepRule, reader: StepReader, numSeries: number, ts: number, numGroups: number, select: boolean): (SampleHeap | undefined)[] {
  const heaps = new Array<SampleHeap | undefined>(numGroups);
  const v = reader.value;
  for (let si = 0; si < numSeries; si++) {
    if (!reader.next(si, ts) || !select) continue;
    const g = rule.groupOf[si];
    const heap = heaps[g];
    if (heap === undefined) heaps[g] = startHeap(rule, si, v);
    else offer(rule, heap, si, v);
  }
  return heaps;
}

const picked = (si: number, v: StepValue): Picked => ({ si, f: v.f, h: v.h });

/** A group's first sample at a step; topk and bottomk skip a histogram and wait for the next sample. */
function startHeap(rule: StepRule, si: number, v: StepValue): SampleHeap | undefined {
  // bottomk's heap keeps its largest value on top (vectorByReverseValueHeap), the others their smallest.
  const heap = new SampleHeap(rule.op === 'bottomk' ? reverseValueLess : valueLess);
  switch (rule.op) {
    case 'limit_ratio':
      if (keepRatioSample(rule.ratio, rule.offsets![si])) heap.push(picked(si, v));
      return heap;
    case 'limitk':
      heap.items.push(picked(si, v));
      return heap;
    case 'topk':
    case 'bottomk':
      if (v.h) {
        rule.info(`PromQL info: ignored histogram in ${rule.op} aggregation`);
        return undefined;
      }
      heap.push(picked(si, v));
      return heap;
  }
}

/** A later sample of the group: topk/bottomk keep the k best, limitk the first k, limit_ratio those the hash picks. */
function offer(rule: StepRule, heap: SampleHeap, si: number, v: StepValue): void {
  const { op, k } = rule;
  if (op === 'limit_ratio') {
    if (keepRatioSample(rule.ratio, rule.offsets![si])) heap.push(picked(si, v));
    return;
  }
  if (op === 'limitk') {
    if (heap.items.length < k) heap.push(picked(si, v));
    return;
  }
  if (v.h) {
    rule.info(`PromQL info: ignored histogram in ${op} aggregation`);
    return;
  }
  if (heap.items.length < k) {
    heap.push(picked(si, v));
    return;
  }
  const top = heap.items[0].f;
  const better = op === 'topk' ? top < v.f : top > v.f;
  if (better || (Number.isNaN(top) && !Number.isNaN(v.f))) heap.replaceTop(picked(si, v), k);
}

/** The selected samples: in selection order for an instant query, gathered per series for a range query. */
class SelectedSink {
  private readonly ordered: EvalMatrix = [];
  private readonly byLabels = new Map<string, EvalSeries>();
  private readonly input: EvalMatrix;
  private readonly instant: boolean;

  constructor(input: EvalMatrix, instant: boolean) {
    this.input = input;
    this.instant = instant;
  }

  add(s: Picked, ts: number): void {
    const src = this.input[s.si];
    if (this.instant) {
      this.ordered.push(
        s.h
          ? { metric: src.metric, floats: [], histograms: [{ t: ts, h: s.h }], dropName: src.dropName }
          : { metric: src.metric, floats: [{ t: ts, f: s.f }], dropName: src.dropName },
      );
      return;
    }
    const key = keyOf(src.metric);
    let out = this.byLabels.get(key);
    if (!out) {
      out = { metric: src.metric, floats: [], dropName: src.dropName };
      this.byLabels.set(key, out);
    }
    if (s.h) (out.histograms ??= []).push({ t: ts, h: s.h });
    else out.floats.push({ t: ts, f: s.f });
  }

  result(): EvalMatrix {
    return this.instant ? this.ordered : [...this.byLabels.values()];
  }
}
