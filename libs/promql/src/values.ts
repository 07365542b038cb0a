// The values a query produces (public) and the ones the evaluator passes
// between nodes (internal), plus staleness-marker detection. Every evaluated
// node is a matrix over the query's steps, as in Prometheus' evaluator.

import type { Labels } from '@strata/model';
import type { FloatHistogram } from './histogram/float-histogram.ts';
import type { QueryStats } from './stats-types.ts';

/** One float sample; t in milliseconds. */
export interface FPoint {
  t: number;
  f: number;
}

/** One native histogram sample; t in milliseconds. */
export interface HPoint {
  t: number;
  h: FloatHistogram;
}

/** An element of an instant vector: a float, or a native histogram when `h` is set. */
export interface Sample {
  metric: Labels;
  t: number;
  f: number;
  h?: FloatHistogram;
}

/** A series of a range vector (matrix): float samples and native histogram samples, each in time order. */
export interface MatrixSeries {
  metric: Labels;
  floats: FPoint[];
  histograms?: HPoint[];
}

export type QueryValue =
  | { resultType: 'vector'; result: Sample[] }
  | { resultType: 'matrix'; result: MatrixSeries[] }
  | { resultType: 'scalar'; result: FPoint }
  | { resultType: 'string'; result: { t: number; value: string } };

/** A query's value plus the annotations Prometheus returns next to it, and what it cost (set by the engine). */
export type QueryResult = QueryValue & { warnings: string[]; infos: string[]; stats?: QueryStats };

// --- Evaluator-internal values -------------------------------------------

/**
 * A series flowing between nodes. `dropName` marks a series whose metric name
 * is to be removed: at once, or at the end of the query when delayed name
 * removal is on (the metric still carries it in that case).
 */
export interface EvalSeries {
  metric: Labels;
  floats: FPoint[];
  /** Native histogram samples (a series may hold both kinds, at different times). */
  histograms?: HPoint[];
  dropName: boolean;
}

export type EvalMatrix = EvalSeries[];

/** One element of an instant vector at one step of the evaluation. */
export interface EvalSample {
  metric: Labels;
  /** The step's timestamp, or the sample's own one where a function needs it (timestamp()). */
  t: number;
  /** The float value; unused (0) for a histogram sample. */
  f: number;
  /** Set for a native histogram sample. */
  h?: FloatHistogram;
  dropName: boolean;
}

export type EvalVector = EvalSample[];

export interface StringValue {
  kind: 'string';
  value: string;
}

// --- Staleness markers ------------------------------------------------------

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const HI = LITTLE_ENDIAN ? 1 : 0;
const LO = 1 - HI;
const STALE_HI = 0x7ff00000;
const STALE_LO = 0x00000002;

/**
 * Flags the staleness markers (NaN with bits 0x7ff0000000000002) of a value
 * array, or returns null when there are none. Reads the bits in place: a
 * marker loaded into a JS number could lose its payload.
 */
export function staleMarkers(values: Float64Array): Uint8Array | null {
  let flags: Uint8Array | null = null;
  let words: Uint32Array | null = null;
  for (let i = 0; i < values.length; i++) {
    if (values[i] === values[i]) continue; // Not NaN.
    words ??= new Uint32Array(values.buffer, values.byteOffset, values.length * 2);
    if (words[2 * i + HI] === STALE_HI && words[2 * i + LO] === STALE_LO) {
      flags ??= new Uint8Array(values.length);
      flags[i] = 1;
    }
  }
  return flags;
}

/** Writes a staleness marker into values[index] bit-exactly. */
export function writeStaleMarker(values: Float64Array, index: number): void {
  const words = new Uint32Array(values.buffer, values.byteOffset + index * 8, 2);
  words[HI] = STALE_HI;
  words[LO] = STALE_LO;
}
