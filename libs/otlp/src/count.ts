// How many Prometheus series an OTLP request can become, counted before it is
// decoded (protobuf) or translated (either format): one per number point, per
// histogram bucket (+ _sum, _count), per summary quantile (+ _sum, _count). The
// distributor bounds this per request, so a small body cannot make it build
// millions of objects.

import { ProtoReader, RemoteWriteError } from '@strata/remote-write';
import { OtlpError } from './errors.ts';
import type { ExportMetricsRequest } from './model.ts';

/** Walks an ExportMetricsServiceRequest's protobuf without decoding it. Throws OtlpError 'bad-protobuf'. */
export function countExportRequestSeries(body: Uint8Array): number {
  const r = new ProtoReader(body);
  let n = 0;
  // Calls `each` with the end of every field `want` of the message ending at `end`.
  const fields = (end: number, want: number, msg: string, each: (e: number) => void) => {
    while (r.pos < end) {
      const tag = r.tag(end, msg);
      if (tag === want) {
        const e = r.len(end, want >>> 3, msg);
        each(e);
        r.pos = e;
      } else r.skip(tag, end, msg);
    }
  };
  const histogramPoint = (end: number) => {
    n += 2;
    while (r.pos < end) {
      const tag = r.tag(end, 'HistogramDataPoint');
      if (tag === 0x32) {
        const e = r.len(end, 6, 'HistogramDataPoint');
        n += Math.floor((e - r.pos) / 8); // packed fixed64 bucket counts
        r.pos = e;
      } else {
        if (tag === 0x31) n++; // one unpacked bucket count
        r.skip(tag, end, 'HistogramDataPoint');
      }
    }
  };
  const summaryPoint = (end: number) => {
    n += 2;
    fields(end, 0x32, 'SummaryDataPoint', () => n++);
  };
  const metric = (end: number) => {
    while (r.pos < end) {
      const tag = r.tag(end, 'Metric');
      const kind = tag === 0x2a || tag === 0x3a || tag === 0x4a || tag === 0x52 || tag === 0x5a;
      if (!kind) {
        r.skip(tag, end, 'Metric');
        continue;
      }
      const e = r.len(end, tag >>> 3, 'Metric');
      if (tag === 0x4a) fields(e, 0x0a, 'Histogram', histogramPoint);
      else if (tag === 0x5a) fields(e, 0x0a, 'Summary', summaryPoint);
      else fields(e, 0x0a, 'Metric data', () => n++);
      r.pos = e;
    }
  };
  try {
    fields(body.length, 0x0a, 'ExportMetricsServiceRequest', (rm) => fields(rm, 0x12, 'ResourceMetrics', (sm) => fields(sm, 0x12, 'ScopeMetrics', metric)));
  } catch (err) {
    if (err instanceof RemoteWriteError) throw new OtlpError('bad-protobuf', err.message);
    throw err;
  }
  return n;
}

/** The same count over a decoded request (OTLP/JSON). */
export function countRequestSeries(req: ExportMetricsRequest): number {
  let n = 0;
  for (const rm of req.resourceMetrics) {
    for (const sm of rm.scopeMetrics) {
      for (const m of sm.metrics) {
        n += m.numberPoints.length + m.exponentialPointCount;
        for (const p of m.histogramPoints) n += p.bucketCounts.length + 2;
        for (const p of m.summaryPoints) n += p.quantileValues.length + 2;
      }
    }
  }
  return n;
}
