// OTLP metrics -> Prometheus series, as Prometheus' OTLP receiver (and Mimir's
// distributor, which uses it) converts them by default: gauges and sums become
// samples (monotonic sums with `_total`), explicit-bucket histograms become
// `_bucket{le}` (cumulative, with `+Inf`), `_sum` and `_count`, summaries become
// quantile series plus `_sum`/`_count`; `service.namespace`/`service.name` ->
// `job`, `service.instance.id` -> `instance`, the other resource attributes -> a
// `target_info` series. What cannot be converted (delta or unspecified temporality,
// exponential histograms) is dropped and reported, never silently.

import type { Label } from '@strata/model';
import type { HistogramSpan, NativeHistogram } from '@strata/model';
import { encodeHistogram, type ExemplarInput, type MetricMetadata, type MetricType, type SampleInput, type SeriesInput } from '@strata/remote-write';
import {
  FLAG_NO_RECORDED_VALUE,
  TEMPORALITY_CUMULATIVE,
  TEMPORALITY_DELTA,
  type ExponentialBuckets,
  type ExponentialHistogramDataPoint,
  type ExportMetricsRequest,
  type HistogramDataPoint,
  type KeyValue,
  type NumberDataPoint,
  type OtlpExemplar,
  type OtlpMetric,
  type SummaryDataPoint,
} from './model.ts';
import { formatFloatF, labelName, metricName, namingOf, prometheusUnit, type Naming, type TranslationStrategy } from './names.ts';

export interface TranslateOptions {
  /** Default `UnderscoreEscapingWithSuffixes`, as Prometheus' receiver. */
  strategy?: TranslationStrategy;
}

export interface Translation {
  /** One entry per distinct label set, labels sorted by name; samples in the order sent. */
  timeseries: SeriesInput[];
  /** One per metric family: type, help (the description) and the Prometheus unit. */
  metadata: MetricMetadata[];
  /** Data points that were not converted; `errors` says why, one line per metric. */
  droppedPoints: number;
  errors: string[];
}

const SERVICE_NAME = 'service.name';
const SERVICE_NAMESPACE = 'service.namespace';
const SERVICE_INSTANCE_ID = 'service.instance.id';
const IDENTIFYING = new Set([SERVICE_NAME, SERVICE_NAMESPACE, SERVICE_INSTANCE_ID]);
const TARGET_INFO = 'target_info';
/** OpenMetrics caps exemplar labels at 128 UTF-8 characters; attributes go only if they fit. */
const MAX_EXEMPLAR_RUNES = 128;

interface Resource {
  attributes: KeyValue[];
  /** Attribute keys are escaped to Prometheus 2's label characters. */
  escape: boolean;
  job: string | undefined;
  instance: string | undefined;
}

/** Converts a decoded request. Never throws for unsupported content: it is dropped and listed in `errors`. */
export function translateMetrics(req: ExportMetricsRequest, opts: TranslateOptions = {}): Translation {
  const naming = namingOf(opts.strategy ?? 'UnderscoreEscapingWithSuffixes');
  const out = new SeriesSet();
  const metadata = new Map<string, MetricMetadata>();
  const errors: string[] = [];
  let droppedPoints = 0;
  for (const rm of req.resourceMetrics) {
    const resource = resourceOf(rm.resource, naming);
    let latest = 0n;
    for (const sm of rm.scopeMetrics) {
      for (const m of sm.metrics) {
        const problem = unsupported(m);
        if (problem !== undefined) {
          errors.push(problem);
          droppedPoints += pointCount(m);
          continue;
        }
        const name = metricName(m, naming);
        if (m.kind === 'gauge' || m.kind === 'sum') {
          for (const p of m.numberPoints) {
            addNumberPoint(out, resource, name, p);
            if (p.timeUnixNano > latest) latest = p.timeUnixNano;
          }
        } else if (m.kind === 'histogram') {
          for (const p of m.histogramPoints) {
            addHistogramPoint(out, resource, name, p);
            if (p.timeUnixNano > latest) latest = p.timeUnixNano;
          }
        } else if (m.kind === 'exponential_histogram') {
          let bad = 0;
          for (const p of m.exponentialPoints) {
            if (p.scale < -4) {
              bad++;
              continue;
            }
            addExponentialPoint(out, resource, name, p);
            if (p.timeUnixNano > latest) latest = p.timeUnixNano;
          }
          if (bad > 0) {
            errors.push(`OTLP metric ${JSON.stringify(m.name)} has exponential histogram points with a scale below -4, the lowest native histogram schema`);
            droppedPoints += bad;
          }
        } else {
          for (const p of m.summaryPoints) {
            addSummaryPoint(out, resource, name, p);
            if (p.timeUnixNano > latest) latest = p.timeUnixNano;
          }
        }
        if (!metadata.has(name) && name !== '') {
          metadata.set(name, { type: metricType(m), metricFamilyName: name, help: m.description, unit: prometheusUnit(m.unit) });
        }
      }
    }
    if (addTargetInfo(out, resource, latest) && !metadata.has(TARGET_INFO)) {
      metadata.set(TARGET_INFO, { type: 'gauge', metricFamilyName: TARGET_INFO, help: 'Target metadata', unit: '' });
    }
  }
  return { timeseries: out.series(), metadata: [...metadata.values()], droppedPoints, errors };
}

function unsupported(m: OtlpMetric): string | undefined {
  const name = JSON.stringify(m.name);
  switch (m.kind) {
    case 'gauge':
    case 'summary':
      return undefined;
    case 'sum':
    case 'histogram':
    case 'exponential_histogram':
      if (m.temporality === TEMPORALITY_CUMULATIVE) return undefined;
      return (
        `OTLP metric ${name} is ${m.kind === 'exponential_histogram' ? 'an exponential histogram' : `a ${m.kind}`} with ${m.temporality === TEMPORALITY_DELTA ? 'delta' : 'unspecified'} aggregation temporality: ` +
        `only cumulative temporality is ingested (convert it with the collector's deltatocumulative processor)`
      );
    default:
      return `OTLP metric ${name} has no data: none of gauge, sum, histogram, exponential_histogram or summary is set`;
  }
}

function pointCount(m: OtlpMetric): number {
  return m.numberPoints.length + m.histogramPoints.length + m.summaryPoints.length + m.exponentialPointCount;
}

function metricType(m: OtlpMetric): MetricType {
  switch (m.kind) {
    case 'sum':
      return m.monotonic ? 'counter' : 'gauge';
    case 'histogram':
    case 'exponential_histogram':
      return 'histogram';
    case 'summary':
      return 'summary';
    default:
      return 'gauge';
  }
}

function resourceOf(attributes: KeyValue[], naming: Naming): Resource {
  const get = (key: string) => attributes.find((a) => a.key === key)?.value;
  const name = get(SERVICE_NAME);
  const namespace = get(SERVICE_NAMESPACE);
  return {
    attributes,
    escape: naming.escape,
    job: name === undefined ? undefined : namespace === undefined ? name : `${namespace}/${name}`,
    instance: get(SERVICE_INSTANCE_ID),
  };
}

/**
 * Labels from attributes (sorted by key, names escaped unless the strategy keeps them; keys that sanitise to the
 * same name have their values joined with `;`), then `job` and `instance` from the resource.
 */
function baseLabels(resource: Resource, attributes: readonly KeyValue[], ignore?: ReadonlySet<string>): Map<string, string> {
  const sorted = (ignore === undefined ? attributes.slice() : attributes.filter((a) => !ignore.has(a.key))).sort((a, b) =>
    a.key < b.key ? -1 : a.key > b.key ? 1 : 0,
  );
  const labels = new Map<string, string>();
  for (const a of sorted) {
    const name = labelName(a.key, resource.escape);
    const prev = labels.get(name);
    labels.set(name, prev === undefined ? a.value : `${prev};${a.value}`);
  }
  if (resource.job !== undefined) labels.set('job', resource.job);
  if (resource.instance !== undefined) labels.set('instance', resource.instance);
  return labels;
}

function addNumberPoint(out: SeriesSet, resource: Resource, name: string, p: NumberDataPoint): void {
  const series = out.add(withName(baseLabels(resource, p.attributes), name), sample(p.value, p.timeUnixNano, p.flags));
  for (const x of p.exemplars) if (x.value <= Infinity) series.exemplars!.push(exemplar(x));
}

function addHistogramPoint(out: SeriesSet, resource: Resource, name: string, p: HistogramDataPoint): void {
  const base = baseLabels(resource, p.attributes);
  if (p.sum !== undefined) out.add(withName(base, name + '_sum'), sample(p.sum, p.timeUnixNano, p.flags));
  out.add(withName(base, name + '_count'), sample(p.count, p.timeUnixNano, p.flags));
  const buckets: { series: SeriesInput; bound: number }[] = [];
  let cumulative = 0;
  for (let i = 0; i < p.explicitBounds.length && i < p.bucketCounts.length; i++) {
    cumulative += p.bucketCounts[i];
    const bound = p.explicitBounds[i];
    const series = out.add(withName(base, name + '_bucket', 'le', formatFloatF(bound)), sample(cumulative, p.timeUnixNano, p.flags));
    buckets.push({ series, bound });
  }
  const inf = out.add(withName(base, name + '_bucket', 'le', '+Inf'), sample(p.count, p.timeUnixNano, p.flags));
  buckets.push({ series: inf, bound: Infinity });
  if (p.exemplars.length === 0) return;
  // An exemplar belongs to the first bucket that holds its value.
  buckets.sort((a, b) => a.bound - b.bound);
  for (const x of p.exemplars) {
    const b = buckets.find((b) => x.value <= b.bound);
    if (b !== undefined) b.series.exemplars!.push(exemplar(x));
  }
}

/** Prometheus' highest native histogram schema; OTLP scales above it are downscaled. */
const MAX_SCHEMA = 8;

/**
 * One side's OTLP buckets as native histogram spans and counts: OTLP bucket i is
 * Prometheus bucket i + 1; `scaleDown` steps merge bucket pairs (i >> scaleDown).
 * Runs of up to two empty buckets stay inside a span, longer gaps start a new one.
 */
function spansOf(b: ExponentialBuckets, scaleDown: number): { spans: HistogramSpan[]; counts: number[] } {
  const spans: HistogramSpan[] = [];
  const counts: number[] = [];
  let next = 0;
  for (let i = 0; i < b.bucketCounts.length; i++) {
    const c = b.bucketCounts[i];
    const idx = ((b.offset + i) >> scaleDown) + 1;
    if (counts.length > 0 && idx === next - 1) {
      counts[counts.length - 1] += c;
      continue;
    }
    if (c === 0 && (i === 0 || counts.length === 0)) continue;
    if (spans.length > 0 && idx - next <= 2) {
      for (let k = next; k < idx; k++) counts.push(0);
      spans[spans.length - 1].length += idx - next + 1;
    } else {
      spans.push({ offset: spans.length === 0 ? idx : idx - next, length: 1 });
    }
    counts.push(c);
    next = idx + 1;
  }
  // Trailing empty buckets add nothing.
  while (counts.length > 0 && counts[counts.length - 1] === 0) {
    counts.pop();
    const last = spans[spans.length - 1];
    if (--last.length === 0) spans.pop();
  }
  return { spans, counts };
}

function addExponentialPoint(out: SeriesSet, resource: Resource, name: string, p: ExponentialHistogramDataPoint): void {
  const scaleDown = Math.max(0, p.scale - MAX_SCHEMA);
  const pos = spansOf(p.positive, scaleDown);
  const neg = spansOf(p.negative, scaleDown);
  const stale = (p.flags & FLAG_NO_RECORDED_VALUE) !== 0;
  const histogram: NativeHistogram = {
    counterResetHint: 'unknown',
    schema: p.scale - scaleDown,
    zeroThreshold: p.zeroThreshold,
    zeroCount: p.zeroCount,
    count: p.count,
    sum: stale ? STALE_NAN : (p.sum ?? 0),
    positiveSpans: pos.spans,
    positiveBuckets: pos.counts,
    negativeSpans: neg.spans,
    negativeBuckets: neg.counts,
  };
  out.addHistogram(withName(baseLabels(resource, p.attributes), name), encodeHistogram({ timestamp: toMillis(p.timeUnixNano), float: false, histogram }));
}

/** Prometheus' stale marker NaN (0x7ff0000000000002). */
const STALE_NAN = new Float64Array(new BigUint64Array([0x7ff0000000000002n]).buffer)[0];

function addSummaryPoint(out: SeriesSet, resource: Resource, name: string, p: SummaryDataPoint): void {
  const base = baseLabels(resource, p.attributes);
  out.add(withName(base, name + '_sum'), sample(p.sum, p.timeUnixNano, p.flags));
  out.add(withName(base, name + '_count'), sample(p.count, p.timeUnixNano, p.flags));
  for (const q of p.quantileValues) {
    out.add(withName(base, name, 'quantile', formatFloatF(q.quantile)), sample(q.value, p.timeUnixNano, p.flags));
  }
}

/** `target_info{job, instance, <other resource attributes>} 1` at the resource's latest timestamp. */
function addTargetInfo(out: SeriesSet, resource: Resource, latest: bigint): boolean {
  if (latest === 0n) return false;
  if (!resource.attributes.some((a) => !IDENTIFYING.has(a.key))) return false;
  const labels = baseLabels(resource, resource.attributes, IDENTIFYING);
  if (!labels.has('job') && !labels.has('instance')) return false;
  out.add(withName(labels, TARGET_INFO), { value: 1, timestamp: toMillis(latest) });
  return true;
}

function withName(base: ReadonlyMap<string, string>, name: string, extraName?: string, extraValue?: string): Label[] {
  const m = new Map(base);
  if (extraName !== undefined) m.set(extraName, extraValue!);
  m.set('__name__', name);
  const labels: Label[] = [];
  for (const [n, v] of m) labels.push({ name: n, value: v });
  return labels.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function sample(value: number, timeUnixNano: bigint, flags: number): SampleInput {
  const timestamp = toMillis(timeUnixNano);
  return (flags & FLAG_NO_RECORDED_VALUE) !== 0 ? { value: NaN, timestamp, stale: true } : { value, timestamp };
}

function exemplar(x: OtlpExemplar): ExemplarInput {
  const labels: Label[] = [];
  let runes = 0;
  if (!allZero(x.traceId)) {
    const v = hex(x.traceId);
    labels.push({ name: 'trace_id', value: v });
    runes += 8 + v.length;
  }
  if (!allZero(x.spanId)) {
    const v = hex(x.spanId);
    labels.push({ name: 'span_id', value: v });
    runes += 7 + v.length;
  }
  const attrs: Label[] = [];
  for (const a of x.filteredAttributes) {
    attrs.push({ name: labelName(a.key), value: a.value });
    runes += [...a.key].length + [...a.value].length;
  }
  if (runes <= MAX_EXEMPLAR_RUNES) labels.push(...attrs);
  return { labels, value: x.value, timestamp: toMillis(x.timeUnixNano) };
}

function toMillis(ns: bigint): number {
  return Number(ns / 1_000_000n);
}

function allZero(id: Uint8Array): boolean {
  for (const b of id) if (b !== 0) return false;
  return true;
}

function hex(id: Uint8Array): string {
  return Buffer.from(id.buffer, id.byteOffset, id.byteLength).toString('hex');
}

/** Series by label set, in first-seen order; data points of the same labels share one series. */
class SeriesSet {
  private readonly byKey = new Map<string, SeriesInput>();

  add(labels: Label[], s: SampleInput): SeriesInput {
    let key = '';
    for (const l of labels) key += l.name + '\xff' + l.value + '\xff';
    let series = this.byKey.get(key);
    if (series === undefined) this.byKey.set(key, (series = { labels, samples: [], exemplars: [] }));
    series.samples.push(s);
    return series;
  }

  addHistogram(labels: Label[], h: Uint8Array): SeriesInput {
    let key = '';
    for (const l of labels) key += l.name + '\xff' + l.value + '\xff';
    let series = this.byKey.get(key);
    if (series === undefined) this.byKey.set(key, (series = { labels, samples: [], exemplars: [] }));
    (series.histograms ??= []).push(h);
    return series;
  }

  series(): SeriesInput[] {
    return [...this.byKey.values()];
  }
}
