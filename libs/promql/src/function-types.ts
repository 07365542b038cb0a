// The types the function table (functions.ts) and the files that implement its
// entries share: what a function sees and returns at each step. Types only, so an
// implementation file never imports the table that lists it.

import type { Labels } from '@strata/model';
import type { Expr, FunctionSignature } from './ast.ts';
import type { FloatHistogram } from './histogram/float-histogram.ts';
import type { EvalMatrix, EvalVector } from './values.ts';

/** What an instant-vector function sees at one evaluation step. */
export interface FunctionContext {
  /** The step's timestamp in ms. */
  ts: number;
  delayedNameRemoval: boolean;
  /** The query's own range: start and end in ms, step in ms (0 for instant queries). */
  query: { start: number; end: number; step: number };
  /** Annotations at the first argument's position, or at argument `arg`'s. */
  warn(message: string, arg?: number): void;
  info(message: string, arg?: number): void;
}

/**
 * Called once per step with the arguments evaluated at that step: instant
 * vectors as vectors, scalars as one-sample vectors, strings as empty vectors
 * (read them from `exprs`).
 */
export type InstantFunction = (args: EvalVector[], exprs: Expr[], ctx: FunctionContext) => EvalVector;

/**
 * The samples of one series in (rangeStart, rangeEnd], staleness markers
 * removed, oldest first: floats are t[lo..hi) and f[lo..hi) (indices into the
 * series' arrays, so no view is allocated per step), native histograms ht/h.
 */
export interface RangeWindow {
  t: Float64Array;
  f: Float64Array;
  lo: number;
  hi: number;
  ht: Float64Array;
  h: FloatHistogram[];
}

export interface RangeContext {
  /** The step's timestamp in ms. */
  ts: number;
  /** Exclusive start and inclusive end of the window in ms (offset applied). */
  rangeStart: number;
  rangeEnd: number;
  rangeMs: number;
  /** The scalar arguments at this step, in argument order. */
  scalarArgs: number[];
  metric: Labels;
  warn(message: string): void;
  info(message: string): void;
  /** A warning at argument `arg`'s position rather than the range argument's. */
  warnAtArg(arg: number, message: string): void;
}

/** Called per series and step with a non-empty window; undefined means no output sample. */
export type RangeFunction = (w: RangeWindow, ctx: RangeContext) => number | FloatHistogram | undefined;

/** Rewrites whole series (labels only), e.g. label_replace; the engine merges resulting duplicates. */
export type SeriesFunction = (input: EvalMatrix, exprs: Expr[], ctx: { delayedNameRemoval: boolean }) => EvalMatrix;

export type FunctionImpl =
  | { kind: 'instant'; call: InstantFunction }
  | {
      kind: 'range';
      call: RangeFunction;
      /** last_over_time and first_over_time behave like offset and keep the metric name. */
      keepName?: boolean;
      /** absent_over_time: the engine turns "no series at a step" into a sample. */
      absentOverTime?: boolean;
    }
  | { kind: 'series'; call: SeriesFunction };

export interface FunctionDef extends FunctionSignature {
  /** Missing for functions the engine does not implement yet. */
  impl?: FunctionImpl;
}
