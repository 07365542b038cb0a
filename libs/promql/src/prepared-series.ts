// Fetched series readied for evaluation: float and native histogram samples
// merged into one timeline with staleness markers located, a histogram's
// (stale NaN sum) as a float's (for instant selectors), plus marker-free float and histogram views (for range windows).
// Also the query's annotation collector.

import type { Labels, Series } from '@strata/model';
import { FloatHistogram } from './histogram/float-histogram.ts';
import { staleMarkers } from './values.ts';

export interface PreparedSeries {
  metric: Labels;
  /** Every sample in time order: floats, histograms and staleness markers. */
  t: Float64Array;
  f: Float64Array;
  /** hs[i] is set where sample i is a histogram; null for a float-only series. */
  hs: (FloatHistogram | undefined)[] | null;
  stale: Uint8Array | null;
  /** The float samples without staleness markers (shared arrays when there is nothing to drop). */
  live: { t: Float64Array; f: Float64Array };
  /** The histogram samples, or null when there are none. */
  liveH: { t: Float64Array; h: FloatHistogram[] } | null;
}

export function prepareSeries(s: Series): PreparedSeries {
  const hist = s.histograms && s.histograms.timestamps.length > 0 ? s.histograms : undefined;
  if (!hist) {
    const stale = staleMarkers(s.values);
    let live = { t: s.timestamps, f: s.values };
    if (stale) live = without(s.timestamps, s.values, stale);
    return { metric: s.labels, t: s.timestamps, f: s.values, hs: null, stale, live, liveH: null };
  }

  // Merge the two kinds into one timeline; a float wins a timestamp both have.
  const n = s.timestamps.length + hist.timestamps.length;
  const t = new Float64Array(n);
  const f = new Float64Array(n);
  const hs = new Array<FloatHistogram | undefined>(n);
  const fBits = new BigUint64Array(f.buffer);
  const srcBits = new BigUint64Array(s.values.buffer, s.values.byteOffset, s.values.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < s.timestamps.length || j < hist.timestamps.length) {
    const tf = i < s.timestamps.length ? s.timestamps[i] : Infinity;
    const th = j < hist.timestamps.length ? hist.timestamps[j] : Infinity;
    if (tf <= th) {
      t[k] = tf;
      fBits[k++] = srcBits[i++];
      if (tf === th) j++;
    } else {
      t[k] = th;
      const h = hist.values[j++];
      // A histogram stale marker (a stale NaN sum) ends the series as a float marker does.
      if (isStaleSum(h.sum)) fBits[k++] = STALE_BITS;
      else hs[k++] = FloatHistogram.from(h);
    }
  }
  const tt = t.subarray(0, k);
  const ff = f.subarray(0, k);
  const stale = staleMarkers(ff);
  const floatOnly = new Uint8Array(k);
  for (let x = 0; x < k; x++) if (hs[x] || (stale && stale[x])) floatOnly[x] = 1;
  const live = without(tt, ff, floatOnly);
  const ht: number[] = [];
  const hh: FloatHistogram[] = [];
  for (let x = 0; x < k; x++) {
    const h = hs[x];
    if (h) {
      ht.push(tt[x]);
      hh.push(h);
    }
  }
  return { metric: s.labels, t: tt, f: ff, hs: hs.slice(0, k), stale, live, liveH: { t: Float64Array.from(ht), h: hh } };
}

/**
 * The series as Prometheus' HistogramStatsIterator reads it for
 * histogram_count/sum/avg: each histogram reduced to its schema, count and sum, and a
 * counter reset hint of "unknown" replaced by what comparing it with the
 * previous histogram of the series shows ("reset" or "not_reset"). The
 * first histogram keeps "unknown".
 */
export function statsOnly(p: PreparedSeries): PreparedSeries {
  if (!p.hs) return p;
  let prev: FloatHistogram | undefined;
  const hs = p.hs.map((h) => {
    if (!h) return undefined;
    const stats = new FloatHistogram();
    // The schema (and custom bounds) stay, so that mixing the two kinds is still noticed.
    stats.schema = h.schema;
    stats.customValues = h.customValues;
    stats.count = h.count;
    stats.sum = h.sum;
    stats.counterResetHint = h.counterResetHint;
    if (h.counterResetHint === 'unknown' && prev) stats.counterResetHint = h.detectReset(prev) ? 'reset' : 'not_reset';
    prev = h;
    return stats;
  });
  const ht: number[] = [];
  const hh: FloatHistogram[] = [];
  hs.forEach((h, i) => {
    if (h) {
      ht.push(p.t[i]);
      hh.push(h);
    }
  });
  return { ...p, hs, liveH: { t: Float64Array.from(ht), h: hh } };
}

const STALE_BITS = 0x7ff0000000000002n;
const sumScratch = new Float64Array(1);
const sumWords = new Uint32Array(sumScratch.buffer);
const LO = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 0 : 1;

/** Whether a histogram's sum is the stale marker; V8 may have quieted its NaN (0x7ff8000000000002), which counts too. */
function isStaleSum(v: number): boolean {
  if (v === v) return false;
  sumScratch[0] = v;
  const hi = sumWords[1 - LO];
  return sumWords[LO] === 2 && (hi === 0x7ff00000 || hi === 0x7ff80000);
}

/** The samples whose flag is not set. */
function without(t: Float64Array, f: Float64Array, drop: Uint8Array): { t: Float64Array; f: Float64Array } {
  let n = 0;
  for (let i = 0; i < drop.length; i++) if (!drop[i]) n++;
  const ot = new Float64Array(n);
  const of = new Float64Array(n);
  for (let i = 0, j = 0; i < t.length; i++) {
    if (drop[i]) continue;
    ot[j] = t[i];
    of[j++] = f[i];
  }
  return { t: ot, f: of };
}

/** Deduplicated warnings and infos, formatted as Prometheus' annotations. */
export class Annotations {
  readonly warnings = new Set<string>();
  readonly infos = new Set<string>();
  private readonly query: string;

  constructor(query: string) {
    this.query = query;
  }

  warn(message: string): void {
    this.warnings.add(message);
  }

  info(message: string): void {
    this.infos.add(message);
  }

  /** `message (line:col)` for an annotation about the expression at `pos`. */
  at(message: string, pos: number): string {
    const before = this.query.slice(0, pos);
    const line = before.split('\n').length;
    const col = Buffer.byteLength(before.slice(before.lastIndexOf('\n') + 1)) + 1;
    return `${message} (${line}:${col})`;
  }
}
