// The checks of one query's outcome against an eval's expectations, as in
// Prometheus' promqltest (compareResult, checkAnnotations, almost.Equal).
// They throw EvalFailure with a readable reason; they never run queries.

import type { Labels } from '@strata/model';
import { compareLabels, sortLabels } from '@strata/model';
import type { FloatHistogram, QueryResult } from '@strata/promql';
import { histogramSpansMatch } from '@strata/promql';
import type { EvalCmd, Expectation } from './script.ts';
import type { SeqValue } from './series-desc.ts';
import { formatLabels, labelsKeyOf } from './series-desc.ts';

/** What went wrong, for grouping failures into an engine to-do list. */
export type FailureCategory =
  | 'native-histogram'
  | 'parse-error'
  | 'unsupported'
  | 'unexpected-error'
  | 'crash'
  | 'missing-error'
  | 'wrong-error'
  | 'result'
  | 'annotations'
  | 'timeout'
  | 'start-timestamps'
  | 'script';

/** Prometheus' promqltest defaultEpsilon: relative error allowed for sample values. */
const EPSILON = 0.000001;
const MIN_NORMAL = 2.2250738585072014e-308;

export class EvalFailure extends Error {
  readonly category: FailureCategory;

  constructor(category: FailureCategory, message: string) {
    super(message);
    this.category = category;
  }
}

export function isOrdered(cmd: EvalCmd): boolean {
  return cmd.legacy.ordered || cmd.expect.ordered;
}

export function matches(e: Expectation, s: string): boolean {
  if (e.regex) return e.regex.test(s);
  if (e.message !== undefined) return e.message === s;
  return true;
}

export function describeExpectation(e: Expectation): string {
  if (e.regex) return `matching ${e.regex}`;
  if (e.message !== undefined) return JSON.stringify(e.message);
  return 'any';
}

// --- Annotations ---------------------------------------------------------------------

/**
 * Strata's engine returns annotations as Prometheus' API prints them, with the
 * expression's position appended (` (1:25)`); promqltest compares the bare
 * annotation (err.Error() without a query), so the position is cut off.
 */
function bareAnnotation(a: string): string {
  return a.replace(/ \(\d+:\d+\)$/, '');
}

export function checkAnnotations(cmd: EvalCmd, res: QueryResult, notes: string[]): void {
  const warnings = res.warnings.map(bareAnnotation);
  const infos = res.infos.map(bareAnnotation);
  if (cmd.legacy.warn && warnings.length === 0) throw new EvalFailure('annotations', 'expected warnings but got none');
  if (cmd.legacy.info && infos.length === 0) throw new EvalFailure('annotations', 'expected info annotations but got none');
  validateAnnotations('warn', cmd.expect.warn, warnings);
  validateAnnotations('info', cmd.expect.info, infos);
  // no_warn / no_info are not enforced yet; the contradiction is kept as a note.
  if (cmd.expect.noWarn && warnings.length > 0 && notes.length === 0) notes.push(`no_warn, but the engine warned: ${warnings.join('; ')}`);
  if (cmd.expect.noInfo && infos.length > 0 && notes.length === 0) notes.push(`no_info, but the engine gave info: ${infos.join('; ')}`);
}

function validateAnnotations(type: string, expected: Expectation[], actual: string[]): void {
  if (expected.length === 0) return;
  if (actual.length === 0) {
    throw new EvalFailure(
      'annotations',
      `expected ${type} annotation${expected.some((e) => e.message || e.regex) ? ` ${expected.map(describeExpectation).join(', ')}` : ''}, but the engine produced none`,
    );
  }
  for (const e of expected) {
    if (!actual.some((a) => matches(e, a))) {
      throw new EvalFailure(
        'annotations',
        `expected ${type} annotation ${describeExpectation(e)}, but found: ${actual.map((a) => JSON.stringify(a)).join(', ')}`,
      );
    }
  }
  for (const a of actual) {
    if (!expected.some((e) => matches(e, a))) throw new EvalFailure('annotations', `unexpected ${type} annotation ${JSON.stringify(a)}`);
  }
}

// --- Results ---------------------------------------------------------------------------

/** Prometheus' almost.Equal: relative epsilon, NaN equals NaN, stale markers only equal each other. */
export function almostEqual(a: number, b: number, epsilon = EPSILON, aStale = false, bStale = false): boolean {
  if (aStale || bStale) return aStale && bStale;
  if (Number.isNaN(a) && Number.isNaN(b)) return true;
  if (a === b) return true;
  const absSum = Math.abs(a) + Math.abs(b);
  const diff = Math.abs(a - b);
  if (a === 0 || b === 0 || absSum < MIN_NORMAL) return diff < epsilon * MIN_NORMAL;
  return diff / Math.min(absSum, Number.MAX_VALUE) < epsilon;
}

function valueEquals(expected: SeqValue, actual: number): boolean {
  if (expected.kind === 'stale') return false; // A query result never holds a staleness marker.
  if (expected.kind !== 'float') return false;
  return almostEqual(expected.value, actual);
}

function showValue(v: SeqValue): string {
  return v.kind === 'float' ? fmt(v.value) : v.kind;
}

function fmt(n: number): string {
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  return String(n);
}

function keyOf(metric: Labels): string {
  return labelsKeyOf(sortLabels(metric));
}

export function compareResult(cmd: EvalCmd, res: QueryResult): void {
  const expectScalar = cmd.expectedScalar !== undefined;
  switch (res.resultType) {
    case 'matrix': {
      if (isOrdered(cmd)) throw new EvalFailure('result', 'expected ordered result, but query returned a matrix');
      if (expectScalar) throw new EvalFailure('result', `expected scalar result, but got a matrix of ${res.result.length} series`);
      assertMatrixSorted(res.result);
      const seen = new Set<string>();
      for (const s of res.result) {
        const key = keyOf(s.metric);
        const exp = cmd.expected.get(key);
        if (!exp) throw new EvalFailure('result', `unexpected series ${formatLabels(s.metric)} in result, has ${formatSeries(s)}`);
        seen.add(key);
        const expectedFloats: { t: number; v: SeqValue }[] = [];
        const expectedHistograms: { t: number; h: FloatHistogram }[] = [];
        for (let i = 0; i < exp.values.length; i++) {
          const t = cmd.startMs + i * cmd.stepMs;
          if (t > cmd.endMs) {
            throw new EvalFailure(
              'script',
              `expected ${exp.values.length} points for ${formatLabels(exp.labels)}, but query time range cannot return this many points`,
            );
          }
          const v = exp.values[i];
          if (v.kind === 'histogram') expectedHistograms.push({ t, h: v.h });
          else if (v.kind !== 'omitted') expectedFloats.push({ t, v });
        }
        const histograms = s.histograms ?? [];
        if (expectedFloats.length !== s.floats.length || expectedHistograms.length !== histograms.length) {
          throw new EvalFailure(
            'result',
            `expected ${expectedFloats.length} float points and ${expectedHistograms.length} histogram points for ${formatLabels(exp.labels)}, but got ${formatSeries(s)}`,
          );
        }
        expectedFloats.forEach((e, i) => {
          const a = s.floats[i];
          if (e.t !== a.t) {
            throw new EvalFailure(
              'result',
              `expected point ${i} of ${formatLabels(exp.labels)} at t=${e.t}, but it is at t=${a.t} (result has ${formatSeries(s)})`,
            );
          }
          if (!valueEquals(e.v, a.f)) {
            throw new EvalFailure(
              'result',
              `expected ${showValue(e.v)} at t=${a.t} for ${formatLabels(exp.labels)}, but got ${fmt(a.f)} (result has ${formatSeries(s)})`,
            );
          }
        });
        expectedHistograms.forEach((e, i) => {
          const a = histograms[i];
          if (e.t !== a.t) {
            throw new EvalFailure(
              'result',
              `expected histogram ${i} of ${formatLabels(exp.labels)} at t=${e.t}, but it is at t=${a.t} (result has ${formatSeries(s)})`,
            );
          }
          if (!histogramsEqual(e.h, a.h)) {
            throw new EvalFailure('result', `expected ${e.h.testExpression()} at t=${a.t} for ${formatLabels(exp.labels)}, but got ${a.h.testExpression()}`);
          }
        });
      }
      for (const [key, exp] of cmd.expected) {
        if (!seen.has(key)) throw new EvalFailure('result', `expected series ${formatLabels(exp.labels)} not found`);
      }
      return;
    }
    case 'vector': {
      if (expectScalar) throw new EvalFailure('result', `expected scalar result, but got a vector of ${res.result.length} samples`);
      const seen = new Set<string>();
      res.result.forEach((smp, pos) => {
        const key = keyOf(smp.metric);
        const exp = cmd.expected.get(key);
        const shown = smp.h ? smp.h.testExpression() : fmt(smp.f);
        if (!exp) throw new EvalFailure('result', `unexpected series ${formatLabels(smp.metric)} in result, has value ${shown}`);
        if (isOrdered(cmd) && exp.pos !== pos + 1) {
          throw new EvalFailure('result', `expected ${formatLabels(smp.metric)} at position ${exp.pos} but was at ${pos + 1}`);
        }
        const e = exp.values[0];
        if (e.kind === 'histogram' || smp.h) {
          if (e.kind !== 'histogram')
            throw new EvalFailure('result', `expected float value ${showValue(e)} for ${formatLabels(smp.metric)} but got histogram ${shown}`);
          if (!smp.h) throw new EvalFailure('result', `expected histogram ${e.text} for ${formatLabels(smp.metric)} but got float value ${shown}`);
          if (!histogramsEqual(e.h, smp.h))
            throw new EvalFailure('result', `expected ${e.h.testExpression()} for ${formatLabels(smp.metric)} but got ${shown}`);
        } else if (!valueEquals(e, smp.f)) {
          throw new EvalFailure('result', `expected ${showValue(e)} for ${formatLabels(smp.metric)} but got ${fmt(smp.f)}`);
        }
        seen.add(key);
      });
      for (const [key, exp] of cmd.expected) {
        if (!seen.has(key))
          throw new EvalFailure('result', `expected series ${formatLabels(exp.labels)} with ${exp.values.map(showValue).join(' ')} not found`);
      }
      return;
    }
    case 'scalar':
      if (!expectScalar) throw new EvalFailure('result', `expected vector or matrix result, but got scalar ${fmt(res.result.f)}`);
      if (!almostEqual(cmd.expectedScalar!, res.result.f)) {
        throw new EvalFailure('result', `expected scalar ${fmt(cmd.expectedScalar!)} but got ${fmt(res.result.f)}`);
      }
      return;
    case 'string':
      if ((cmd.expectedString ?? '') !== res.result.value) {
        throw new EvalFailure('result', `expected string ${JSON.stringify(cmd.expectedString ?? '')} but got ${JSON.stringify(res.result.value)}`);
      }
      return;
  }
}

export function assertMatrixSorted(m: { metric: Labels }[]): void {
  for (let i = 0; i + 1 < m.length; i++) {
    // Prometheus' labels.Compare: byte-wise, as Go compares strings.
    if (compareLabels(m[i].metric, m[i + 1].metric) > 0) {
      throw new EvalFailure(
        'result',
        `matrix results should always be sorted by labels, but ${formatLabels(m[i + 1].metric)} comes after ${formatLabels(m[i].metric)}`,
      );
    }
  }
}

/** Prometheus' compareNativeHistogram on compacted copies: layout exact, numbers almost equal; the counter reset hint is not compared. */
function histogramsEqual(expected: FloatHistogram, actual: FloatHistogram): boolean {
  const e = expected.copy().compact(0);
  const a = actual.copy().compact(0);
  if (e.schema !== a.schema || !almostEqual(e.count, a.count) || !almostEqual(e.sum, a.sum)) return false;
  if (e.usesCustomBuckets() && !sameNumbers(e.customValues ?? [], a.customValues ?? [])) return false;
  if (e.zeroThreshold !== a.zeroThreshold || !almostEqual(e.zeroCount, a.zeroCount)) return false;
  if (!histogramSpansMatch(e.negativeSpans, a.negativeSpans) || !bucketsAlmostEqual(e.negativeBuckets, a.negativeBuckets)) return false;
  return histogramSpansMatch(e.positiveSpans, a.positiveSpans) && bucketsAlmostEqual(e.positiveBuckets, a.positiveBuckets);
}

function sameNumbers(a: number[], b: number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function bucketsAlmostEqual(a: number[], b: number[]): boolean {
  return a.length === b.length && a.every((x, i) => almostEqual(x, b[i]));
}

function formatSeries(s: { floats: { t: number; f: number }[]; histograms?: { t: number; h: FloatHistogram }[] }): string {
  const h = s.histograms ?? [];
  if (h.length === 0) return formatPoints(s.floats);
  const shown = h.slice(0, 4).map((p) => `${p.h.testExpression()}@${p.t}`);
  return `${formatPoints(s.floats)} and ${h.length} histogram point${h.length === 1 ? '' : 's'} [${shown.join(' ')}${h.length > 4 ? ' ...' : ''}]`;
}

function formatPoints(floats: { t: number; f: number }[]): string {
  const shown = floats.slice(0, 8).map((p) => `${fmt(p.f)}@${p.t}`);
  return `${floats.length} point${floats.length === 1 ? '' : 's'} [${shown.join(' ')}${floats.length > 8 ? ' ...' : ''}]`;
}

export function summarize(res: QueryResult): string {
  switch (res.resultType) {
    case 'vector':
      return `a vector of ${res.result.length} samples`;
    case 'matrix':
      return `a matrix of ${res.result.length} series`;
    case 'scalar':
      return `scalar ${fmt(res.result.f)}`;
    case 'string':
      return `string ${JSON.stringify(res.result.value)}`;
  }
}
