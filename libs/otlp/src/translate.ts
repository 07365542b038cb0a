// OTLP metrics -> Prometheus series, as Prometheus' OTLP receiver (and Mimir's
// distributor, which uses it) converts them: gauges and sums become samples
// (monotonic sums with `_total`), explicit-bucket histograms become `_bucket{le}`
// (cumulative, with `+Inf`), `_sum` and `_count` (or, with convertHistogramsToNhcb,
// native histograms with custom buckets), summaries become quantile series plus
// `_sum`/`_count`; `service.namespace`/`service.name` -> `job`, `service.instance.id`
// -> `instance`, the other resource attributes -> a `target_info` series (and, when
// promoted, labels). Delta temporality is stored as sent with allowDelta (Prometheus'
// otlp-native-delta-ingestion); what cannot be converted (delta otherwise,
// unspecified temporality) is dropped and reported, never silently.

import type { Label } from '@strata/model';
import type { HistogramSpan, NativeHistogram } from '@strata/model';
import {
  ProtoWriter,
  WIRE_VARINT,
  encodeHistogram,
  type ExemplarInput,
  type MetricMetadata,
  type MetricType,
  type SampleInput,
  type SeriesInput,
} from '@strata/remote-write';
import {
  FLAG_NO_RECORDED_VALUE,
  STALE_NAN,
  TEMPORALITY_CUMULATIVE,
  TEMPORALITY_DELTA,
  type ExponentialBuckets,
  type ExponentialHistogramDataPoint,
  type ExportMetricsRequest,
  type HistogramDataPoint,
  type NumberDataPoint,
  type OtlpExemplar,
  type OtlpMetric,
  type ResourceMetrics,
  type SummaryDataPoint,
} from './model.ts';
import { formatFloatF, labelName, metricName, namingOf, prometheusUnit, type Naming, type TranslationStrategy } from './names.ts';
import { customBucketsHistogram } from './nhcb.ts';
import { baseLabels, resourceOf, scopeLabels, targetInfoLabels, type Promotion, type Resource } from './resource-labels.ts';

/** Prometheus' `otlp` settings (Mimir's `otel_*` limits) that change the translation; every one off by default. */
export interface TranslateOptions {
  /** Default `UnderscoreEscapingWithSuffixes`, as Prometheus' receiver. */
  strategy?: TranslationStrategy;
  /** Delta sums and histograms are stored as sent, metadata type unknown (Prometheus' otlp-native-delta-ingestion). */
  allowDelta?: boolean;
  /** Resource attributes copied onto every series of the resource. */
  promoteResourceAttributes?: readonly string[];
  /** Every resource attribute but `ignoreResourceAttributes` is promoted. */
  promoteAllResourceAttributes?: boolean;
  ignoreResourceAttributes?: readonly string[];
  /** target_info keeps service.name, service.namespace and service.instance.id. */
  keepIdentifyingResourceAttributes?: boolean;
  /** The scope's name, version, schema URL and attributes become `otel_scope_*` labels. */
  promoteScopeMetadata?: boolean;
  /** Explicit-bucket histograms become native histograms with custom buckets (schema -53). */
  convertHistogramsToNhcb?: boolean;
  /**
   * Start times of cumulative counters, histograms and summaries go with their samples (2.0's
   * start_timestamp), for the ingester's zero samples (created_timestamp_zero_ingestion_enabled).
   */
  startTimestamps?: boolean;
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

const TARGET_INFO = 'target_info';
/** Half of the 5-minute lookback delta, as Prometheus' OTLP receiver spaces target_info samples. */
const TARGET_INFO_INTERVAL_MS = 150_000;
/**
 * target_info covers at most a request's last hour (25 samples): Prometheus walks the whole span,
 * so one point stamped 1970 costs it millions of samples, and its head takes none older than that.
 */
const TARGET_INFO_SPAN_MS = 3_600_000;
/** The zero bucket's width Prometheus gives every converted exponential histogram. */
const OTLP_ZERO_THRESHOLD = 1e-128;
/** OpenMetrics caps exemplar labels at 128 UTF-8 characters; attributes go only if they fit. */
const MAX_EXEMPLAR_RUNES = 128;

/** One request's conversion: its options, the series and metadata so far, what was dropped and why. */
interface Conversion {
  opts: TranslateOptions;
  naming: Naming;
  promotion: Promotion | undefined;
  out: SeriesSet;
  metadata: Map<string, MetricMetadata>;
  errors: string[];
  droppedPoints: number;
}

/** Converts a decoded request. Never throws for unsupported content: it is dropped and listed in `errors`. */
export function translateMetrics(req: ExportMetricsRequest, opts: TranslateOptions = {}): Translation {
  const c: Conversion = {
    opts,
    naming: namingOf(opts.strategy ?? 'UnderscoreEscapingWithSuffixes'),
    promotion: promotionOf(opts),
    out: new SeriesSet(),
    metadata: new Map(),
    errors: [],
    droppedPoints: 0,
  };
  for (const rm of req.resourceMetrics) addResourceMetrics(c, rm);
  return { timeseries: c.out.series(), metadata: [...c.metadata.values()], droppedPoints: c.droppedPoints, errors: c.errors };
}

/** Prometheus' rule: with promote-all the list is what to ignore, else what to promote. */
function promotionOf(opts: TranslateOptions): Promotion | undefined {
  const all = opts.promoteAllResourceAttributes === true;
  const names = all ? opts.ignoreResourceAttributes : opts.promoteResourceAttributes;
  if (!all && (names === undefined || names.length === 0)) return undefined;
  return { all, names: new Set(names ?? []) };
}

function addResourceMetrics(c: Conversion, rm: ResourceMetrics): void {
  const resource = resourceOf(rm.resource, c.naming, c.promotion);
  const span: TimeSpan = { earliest: -1n, latest: 0n };
  for (const sm of rm.scopeMetrics) {
    resource.scope = c.opts.promoteScopeMetadata === true ? scopeLabels(sm.scope, sm.schemaUrl, c.naming.escape) : undefined;
    for (const m of sm.metrics) {
      widenToPoints(span, m);
      addMetric(c, resource, m);
    }
  }
  if (addTargetInfo(c.out, resource, span, c.opts.keepIdentifyingResourceAttributes === true) && !c.metadata.has(TARGET_INFO)) {
    c.metadata.set(TARGET_INFO, { type: 'gauge', metricFamilyName: TARGET_INFO, help: 'Target metadata', unit: '' });
  }
}

/** One metric's points and metadata. */
function addMetric(c: Conversion, resource: Resource, m: OtlpMetric): void {
  const problem = unsupported(m, c.opts.allowDelta === true);
  if (problem !== undefined) {
    c.errors.push(problem);
    c.droppedPoints += pointCount(m);
    return;
  }
  const name = metricName(m, c.naming);
  addPoints(c, resource, name, m);
  c.out.startMs = 0;
  if (!c.metadata.has(name) && name !== '') {
    c.metadata.set(name, { type: metricType(m), metricFamilyName: name, help: m.description, unit: prometheusUnit(m.unit) });
  }
}

/** The earliest and latest point of a resource (ns); earliest -1n: no point yet. */
interface TimeSpan {
  earliest: bigint;
  latest: bigint;
}

/** Every point counts, those of metrics then refused too, as in Prometheus' receiver. */
function widenToPoints(span: TimeSpan, m: OtlpMetric): void {
  const widen = (p: { timeUnixNano: bigint }) => {
    if (span.earliest < 0n || p.timeUnixNano < span.earliest) span.earliest = p.timeUnixNano;
    if (p.timeUnixNano > span.latest) span.latest = p.timeUnixNano;
  };
  m.numberPoints.forEach(widen);
  m.histogramPoints.forEach(widen);
  m.exponentialPoints.forEach(widen);
  m.summaryPoints.forEach(widen);
}

function addPoints(c: Conversion, resource: Resource, name: string, m: OtlpMetric): void {
  const out = c.out;
  const delta = m.temporality === TEMPORALITY_DELTA;
  switch (m.kind) {
    case 'gauge':
    case 'sum':
      for (const p of m.numberPoints) {
        out.startMs = startOf(c, m, p.startTimeUnixNano);
        addNumberPoint(out, resource, name, p);
      }
      return;
    case 'histogram':
      for (const p of m.histogramPoints) {
        out.startMs = startOf(c, m, p.startTimeUnixNano);
        if (c.opts.convertHistogramsToNhcb === true) addCustomBucketsPoint(out, resource, name, p, delta);
        else addHistogramPoint(out, resource, name, p);
      }
      return;
    case 'exponential_histogram':
      return addExponentialPoints(c, resource, name, m);
    default:
      for (const p of m.summaryPoints) {
        out.startMs = startOf(c, m, p.startTimeUnixNano);
        addSummaryPoint(out, resource, name, p);
      }
  }
}

/**
 * A point's start time in ms, to go with its samples: only with `startTimestamps`, and only for
 * what Prometheus gives a created timestamp (cumulative monotonic sums, histograms, summaries;
 * not gauges, up-down sums or deltas); 0: none.
 */
function startOf(c: Conversion, m: OtlpMetric, startTimeUnixNano: bigint): number {
  if (c.opts.startTimestamps !== true || startTimeUnixNano === 0n) return 0;
  if (m.kind === 'gauge' || (m.kind === 'sum' && !m.monotonic)) return 0;
  if (m.kind !== 'summary' && m.temporality !== TEMPORALITY_CUMULATIVE) return 0;
  return toMillis(startTimeUnixNano);
}

function unsupported(m: OtlpMetric, allowDelta: boolean): string | undefined {
  const name = JSON.stringify(m.name);
  switch (m.kind) {
    case 'gauge':
    case 'summary':
      return undefined;
    case 'sum':
    case 'histogram':
    case 'exponential_histogram': {
      if (m.temporality === TEMPORALITY_CUMULATIVE || (allowDelta && m.temporality === TEMPORALITY_DELTA)) return undefined;
      const what = `OTLP metric ${name} is ${m.kind === 'exponential_histogram' ? 'an exponential histogram' : `a ${m.kind}`}`;
      if (m.temporality === TEMPORALITY_DELTA) {
        return (
          `${what} with delta aggregation temporality: deltas are stored only for tenants with otel_native_delta_ingestion ` +
          `(or convert them with the collector's deltatocumulative processor)`
        );
      }
      return `${what} with unspecified aggregation temporality: send cumulative (or delta) temporality`;
    }
    default:
      return `OTLP metric ${name} has no data: none of gauge, sum, histogram, exponential_histogram or summary is set`;
  }
}

function pointCount(m: OtlpMetric): number {
  return m.numberPoints.length + m.histogramPoints.length + m.summaryPoints.length + m.exponentialPointCount;
}

/** Delta sums and histograms are `unknown`: Prometheus has no delta type yet and marks them so. */
function metricType(m: OtlpMetric): MetricType {
  if (m.temporality === TEMPORALITY_DELTA && m.kind !== 'gauge' && m.kind !== 'summary') return 'unknown';
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

/** Points with a scale below Prometheus' lowest schema are dropped and listed; the rest become native histograms. */
function addExponentialPoints(c: Conversion, resource: Resource, name: string, m: OtlpMetric): void {
  let bad = 0;
  for (const p of m.exponentialPoints) {
    if (p.scale < -4) {
      bad++;
      continue;
    }
    c.out.startMs = startOf(c, m, p.startTimeUnixNano);
    addExponentialPoint(c.out, resource, name, p, m.temporality === TEMPORALITY_DELTA);
  }
  if (bad > 0) {
    c.errors.push(`OTLP metric ${JSON.stringify(m.name)} has exponential histogram points with a scale below -4, the lowest native histogram schema`);
    c.droppedPoints += bad;
  }
}

/** A delta point is a gauge histogram, Prometheus' hint for native deltas (no counter-reset detection). */
function addExponentialPoint(out: SeriesSet, resource: Resource, name: string, p: ExponentialHistogramDataPoint, delta: boolean): void {
  const scaleDown = Math.max(0, p.scale - MAX_SCHEMA);
  const pos = spansOf(p.positive, scaleDown);
  const neg = spansOf(p.negative, scaleDown);
  const stale = (p.flags & FLAG_NO_RECORDED_VALUE) !== 0;
  const histogram: NativeHistogram = {
    counterResetHint: delta ? 'gauge' : 'unknown',
    schema: p.scale - scaleDown,
    // Prometheus' receiver ignores the point's zero_threshold and uses its own (1e-128): so do we, for equal answers.
    zeroThreshold: OTLP_ZERO_THRESHOLD,
    zeroCount: p.zeroCount,
    count: p.count,
    sum: stale ? STALE_NAN : (p.sum ?? 0),
    positiveSpans: pos.spans,
    positiveBuckets: pos.counts,
    negativeSpans: neg.spans,
    negativeBuckets: neg.counts,
  };
  const series = out.addHistogram(
    withName(baseLabels(resource, p.attributes), name),
    encodeHistogram({ timestamp: toMillis(p.timeUnixNano), float: false, histogram }),
  );
  for (const x of p.exemplars) if (x.value <= Infinity) series.exemplars!.push(exemplar(x));
}

/** An explicit-bucket point as one native histogram with custom buckets, its exemplars on the one series. */
function addCustomBucketsPoint(out: SeriesSet, resource: Resource, name: string, p: HistogramDataPoint, delta: boolean): void {
  const h = encodeHistogram({ timestamp: toMillis(p.timeUnixNano), float: false, histogram: customBucketsHistogram(p, delta) });
  const series = out.addHistogram(withName(baseLabels(resource, p.attributes), name), h);
  for (const x of p.exemplars) if (x.value <= Infinity) series.exemplars!.push(exemplar(x));
}

function addSummaryPoint(out: SeriesSet, resource: Resource, name: string, p: SummaryDataPoint): void {
  const base = baseLabels(resource, p.attributes);
  out.add(withName(base, name + '_sum'), sample(p.sum, p.timeUnixNano, p.flags));
  out.add(withName(base, name + '_count'), sample(p.count, p.timeUnixNano, p.flags));
  for (const q of p.quantileValues) {
    out.add(withName(base, name, 'quantile', formatFloatF(q.quantile)), sample(q.value, p.timeUnixNano, p.flags));
  }
}

/**
 * `target_info{job, instance, <other resource attributes>} 1` from the resource's earliest point to
 * its latest, every half lookback delta (Prometheus' and Mimir's 5 m default), so that a join with
 * target_info finds it at every step; one sample per timestamp when resources share the labels.
 */
function addTargetInfo(out: SeriesSet, resource: Resource, span: TimeSpan, keepIdentifying: boolean): boolean {
  if (span.earliest < 0n) return false;
  const labels = targetInfoLabels(resource, keepIdentifying);
  if (labels === undefined) return false;
  const named = withName(labels, TARGET_INFO);
  const latest = toMillis(span.latest);
  const times: number[] = [];
  for (let t = Math.max(toMillis(span.earliest), latest - TARGET_INFO_SPAN_MS); t < latest; t += TARGET_INFO_INTERVAL_MS) times.push(t);
  times.push(latest);
  const written = new Set(out.find(named)?.samples.map((s) => s.timestamp));
  for (const timestamp of times) if (!written.has(timestamp)) out.add(named, { value: 1, timestamp });
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
  /** The start time (ms) of the data point being added, given to each sample and histogram of it; 0: none. */
  startMs = 0;

  add(labels: Label[], s: SampleInput): SeriesInput {
    if (this.startMs !== 0) s.startTimestamp = this.startMs;
    const series = this.seriesOf(labels);
    series.samples.push(s);
    return series;
  }

  addHistogram(labels: Label[], h: Uint8Array): SeriesInput {
    if (this.startMs !== 0) h = withStartTimestamp(h, this.startMs);
    const series = this.seriesOf(labels);
    (series.histograms ??= []).push(h);
    return series;
  }

  find(labels: Label[]): SeriesInput | undefined {
    return this.byKey.get(keyOf(labels));
  }

  series(): SeriesInput[] {
    return [...this.byKey.values()];
  }

  private seriesOf(labels: Label[]): SeriesInput {
    const key = keyOf(labels);
    let series = this.byKey.get(key);
    if (series === undefined) this.byKey.set(key, (series = { labels, samples: [], exemplars: [] }));
    return series;
  }
}

function keyOf(labels: Label[]): string {
  let key = '';
  for (const l of labels) key += l.name + '\xff' + l.value + '\xff';
  return key;
}

/** A Histogram message with its start timestamp (field 17) added: fields may come in any order. */
function withStartTimestamp(h: Uint8Array, startMs: number): Uint8Array {
  const w = new ProtoWriter(h.length + 12);
  w.raw(h);
  w.tag(17, WIRE_VARINT);
  w.int64(startMs);
  return w.finish();
}
