// Test support (`@strata/model/testing`): the in-memory Querier every test
// that is not about storage reads through. Floats keep their bits (stale
// markers), native histograms sit beside them; never imported by production code.

import { QueryAbortedError, throwIfAborted } from './abort.ts';
import { compareUtf8, labelsKey, type Labels } from './labels.ts';
import { matcherFn } from './matchers.ts';
import { labelsInQueryShard, splitQueryShard } from './query-shard.ts';
import type { LabelValuesParams, NativeHistogram, Querier, SelectParams, Series } from './querier.ts';

interface StoredSeries {
  labels: Labels;
  /** Float samples as appended: times, and the value bits as two int32 words each. */
  ft: number[];
  fw: number[];
  ht: number[];
  hv: NativeHistogram[];
  /** Time-ordered views, rebuilt after an append. */
  floats: { timestamps: Float64Array; values: Float64Array } | null;
  histograms: { timestamps: Float64Array; values: NativeHistogram[] } | null;
}

/**
 * Series per tenant, answered in the order they were first appended (as a
 * head answers). Samples may come in any order; a later one at the same
 * timestamp replaces the earlier, as in Prometheus' test storage.
 */
export class MemoryQuerier implements Querier {
  /** Every select, in call order. */
  readonly calls: SelectParams[] = [];
  /** Delays every select (ended early by the caller's signal), to exercise timeouts and cancellation. */
  delayMs = 0;
  private readonly tenants = new Map<string, Map<string, StoredSeries>>();

  /** Appends float samples; a Float64Array's value bits are kept exactly. */
  append(tenant: string, labels: Labels, timestamps: ArrayLike<number>, values: ArrayLike<number>): void {
    const s = this.series(tenant, labels);
    const words =
      values instanceof Float64Array ? new Int32Array(values.buffer, values.byteOffset, values.length * 2) : new Int32Array(Float64Array.from(values).buffer);
    for (let i = 0; i < timestamps.length; i++) {
      s.ft.push(timestamps[i]);
      s.fw.push(words[2 * i], words[2 * i + 1]);
    }
    s.floats = null;
  }

  appendHistograms(tenant: string, labels: Labels, timestamps: ArrayLike<number>, histograms: readonly NativeHistogram[]): void {
    const s = this.series(tenant, labels);
    for (let i = 0; i < timestamps.length; i++) {
      s.ht.push(timestamps[i]);
      s.hv.push(histograms[i]);
    }
    s.histograms = null;
  }

  async select(p: SelectParams): Promise<Series[]> {
    this.calls.push(p);
    throwIfAborted(p.signal, 'selecting in-memory series');
    if (this.delayMs > 0) await delay(this.delayMs, p.signal);
    throwIfAborted(p.signal, 'selecting in-memory series');
    const out: Series[] = [];
    for (const s of this.matching(p)) {
      const f = floatsOf(s);
      const [fa, fb] = range(f.timestamps, p.mint, p.maxt);
      const h = histogramsOf(s);
      const [ha, hb] = range(h.timestamps, p.mint, p.maxt);
      if (fa === fb && ha === hb) continue;
      const series: Series = { labels: s.labels, timestamps: f.timestamps.slice(fa, fb), values: f.values.slice(fa, fb) };
      if (hb > ha) series.histograms = { timestamps: h.timestamps.slice(ha, hb), values: h.values.slice(ha, hb) };
      out.push(series);
    }
    return out;
  }

  async labelNames(p: SelectParams): Promise<string[]> {
    const names = new Set<string>();
    for (const s of this.matching(p)) if (hasDataIn(s, p.mint, p.maxt)) for (const l of s.labels) names.add(l.name);
    return [...names].sort(compareUtf8);
  }

  async labelValues(p: LabelValuesParams): Promise<string[]> {
    const values = new Set<string>();
    for (const s of this.matching(p)) {
      if (!hasDataIn(s, p.mint, p.maxt)) continue;
      const v = s.labels.find((l) => l.name === p.name)?.value;
      if (v !== undefined && v !== '') values.add(v);
    }
    return [...values].sort(compareUtf8);
  }

  private series(tenant: string, labels: Labels): StoredSeries {
    let t = this.tenants.get(tenant);
    if (!t) this.tenants.set(tenant, (t = new Map<string, StoredSeries>()));
    const key = labelsKey(labels);
    let s = t.get(key);
    if (!s) t.set(key, (s = { labels, ft: [], fw: [], ht: [], hv: [], floats: null, histograms: null }));
    return s;
  }

  private matching(p: SelectParams): StoredSeries[] {
    const { matchers, shard } = splitQueryShard(p.matchers);
    const fns = matchers.map((m) => ({ name: m.name, fn: matcherFn(m) }));
    return [...(this.tenants.get(p.tenant)?.values() ?? [])].filter(
      (s) =>
        fns.every(({ name, fn }) => fn(s.labels.find((l) => l.name === name)?.value ?? '')) && (shard === undefined || labelsInQueryShard(s.labels, shard)),
    );
  }
}

function floatsOf(s: StoredSeries): { timestamps: Float64Array; values: Float64Array } {
  if (s.floats === null) {
    const order = timeOrder(s.ft);
    const timestamps = Float64Array.from(order, (i) => s.ft[i]);
    const values = new Float64Array(order.length);
    const w = new Int32Array(values.buffer);
    order.forEach((i, k) => {
      w[2 * k] = s.fw[2 * i];
      w[2 * k + 1] = s.fw[2 * i + 1];
    });
    s.floats = { timestamps, values };
  }
  return s.floats;
}

function histogramsOf(s: StoredSeries): { timestamps: Float64Array; values: NativeHistogram[] } {
  if (s.histograms === null) {
    const order = timeOrder(s.ht);
    s.histograms = { timestamps: Float64Array.from(order, (i) => s.ht[i]), values: order.map((i) => s.hv[i]) };
  }
  return s.histograms;
}

/** Indices in time order, one per timestamp: the last appended wins. */
function timeOrder(t: number[]): number[] {
  const idx = t.map((_, i) => i).sort((a, b) => t[a] - t[b] || a - b);
  const out: number[] = [];
  for (const i of idx) {
    if (out.length > 0 && t[out[out.length - 1]] === t[i]) out[out.length - 1] = i;
    else out.push(i);
  }
  return out;
}

/** [from, to) of the sorted times within [mint, maxt]. */
function range(t: Float64Array, mint: number, maxt: number): [number, number] {
  const lo = firstAbove(t, (x) => x >= mint);
  return [
    lo,
    Math.max(
      lo,
      firstAbove(t, (x) => x > maxt),
    ),
  ];
}

/** The first index whose time passes `ok` (times ascending), or t.length. */
function firstAbove(t: Float64Array, ok: (x: number) => boolean): number {
  let lo = 0;
  let hi = t.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ok(t[mid])) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

function hasDataIn(s: StoredSeries, mint: number, maxt: number): boolean {
  const [fa, fb] = range(floatsOf(s).timestamps, mint, maxt);
  if (fb > fa) return true;
  const [ha, hb] = range(histogramsOf(s).timestamps, mint, maxt);
  return hb > ha;
}

function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(new QueryAbortedError('selecting in-memory series', signal?.reason));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
