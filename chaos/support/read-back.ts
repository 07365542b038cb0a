// Reads acknowledged samples back through a querier and compares them exactly with the ledger.
// Queries are instant range-vector selectors (`metric{group}[R]` at time T), which return the
// raw stored samples in (T-R, T] — no lookback or step interpolation to hide a gap.

import type { DrillSeries } from './drill-series.ts';
import { instantQuery, type MatrixSeries } from './http-client.ts';
import type { Ledger } from './ledger.ts';

interface LostSample {
  series: string;
  t: number;
  want: number;
  got: number | null;
}

export interface Comparison {
  /** Acked samples expected in the window. */
  checked: number;
  /** Acked samples absent from the answer. */
  missing: number;
  /** Acked samples present with another value. */
  mismatched: number;
  /** Samples in the answer the ledger does not hold as acked (sent but never acknowledged). */
  unacked_present: number;
  /** Points answered twice for one series and timestamp (e.g. two zones' blocks not deduplicated). */
  duplicate_points: number;
  examples: LostSample[];
}

function emptyComparison(): Comparison {
  return { checked: 0, missing: 0, mismatched: 0, unacked_present: 0, duplicate_points: 0, examples: [] };
}

export function lostOf(c: Comparison): number {
  return c.missing + c.mismatched;
}

function addComparison(into: Comparison, c: Comparison): void {
  into.checked += c.checked;
  into.missing += c.missing;
  into.mismatched += c.mismatched;
  into.unacked_present += c.unacked_present;
  into.duplicate_points += c.duplicate_points;
  for (const e of c.examples) if (into.examples.length < 10) into.examples.push(e);
}

/**
 * Compares one query answer for `seriesIdx` over (from, to] with the ledger's samples acked by `ackedBy`.
 */
export function compare(
  result: MatrixSeries[],
  series: DrillSeries,
  ledger: Ledger,
  seriesIdx: readonly number[],
  from: number,
  to: number,
  ackedBy = Infinity,
): Comparison {
  const got = new Map<number, Map<number, number>>();
  const c = emptyComparison();
  for (const s of result) {
    const i = series.indexOf(s.metric);
    if (i === undefined) {
      c.unacked_present += s.values.length;
      continue;
    }
    // One series answered twice (labels split across zones or blocks) counts like repeated points.
    const m = got.get(i) ?? new Map<number, number>();
    for (const [t, v] of s.values) {
      const ms = Math.round(t * 1000);
      if (m.has(ms)) c.duplicate_points++;
      m.set(ms, Number(v));
    }
    got.set(i, m);
  }
  const wanted = new Set(seriesIdx);
  for (const i of seriesIdx) {
    const have = got.get(i) ?? new Map<number, number>();
    const want = ledger.samples(i, from, to, ackedBy);
    c.checked += want.length;
    for (const { t, v } of want) {
      const g = have.get(t);
      if (g === v) {
        have.delete(t);
        continue;
      }
      if (g === undefined) c.missing++;
      else c.mismatched++;
      have.delete(t);
      if (c.examples.length < 10) c.examples.push({ series: series.labels(i)[3].value, t, want: v, got: g ?? null });
    }
    // Left over: samples sent but never acked (allowed), or a rejected batch's (allowed either way).
    if (ackedBy === Infinity) for (const t of have.keys()) if (!ledger.isRejected(i, t)) c.unacked_present++;
  }
  for (const i of got.keys()) if (!wanted.has(i)) c.unacked_present += got.get(i)!.size;
  return c;
}

export interface ReadBackOptions {
  querierUrl: string;
  tenant: string;
  series: DrillSeries;
  ledger: Ledger;
  /** Only samples acked at or before this wall-clock time are expected. */
  ackedBy?: number;
  timeoutMs?: number;
}

export type ReadBackResult = { ok: true; comparison: Comparison } | { ok: false; reason: string };

/** Reads every group's whole acked history back and compares it with the ledger. */
export async function readBack(opts: ReadBackOptions): Promise<ReadBackResult> {
  const range = opts.ledger.timeRange();
  const total = emptyComparison();
  if (range === undefined) return { ok: true, comparison: total };
  const [lo, hi] = range;
  // (hi - R, hi] must include lo.
  const rangeSeconds = Math.floor((hi - lo) / 1000) + 1;
  for (let g = 0; g < opts.series.groups; g++) {
    const res = await instantQuery(opts.querierUrl, opts.tenant, `${opts.series.selector(g)}[${rangeSeconds}s]`, hi / 1000, opts.timeoutMs ?? 60_000);
    if (!res.ok) return { ok: false, reason: `group ${g}: ${res.reason}` };
    if (res.resultType !== 'matrix') return { ok: false, reason: `group ${g}: expected a matrix, got ${res.resultType}` };
    addComparison(total, compare(res.result, opts.series, opts.ledger, opts.series.seriesOfGroup(g), -Infinity, hi, opts.ackedBy));
  }
  return { ok: true, comparison: total };
}
