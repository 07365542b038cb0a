// Field numbers and small message readers of remote write 1.0 (prompb/remote.proto,
// prompb/types.proto), shared by the distributor's parser and the ingester's decoder.

import type { Label } from '@strata/model';
import type { ProtoReader } from './wire.ts';

// Tags are `field << 3 | wireType`; readers switch on the whole tag.
export const TAG_WRITE_REQUEST_TIMESERIES = 0x0a; // 1, length-delimited
export const TAG_WRITE_REQUEST_METADATA = 0x1a; // 3, length-delimited
export const TAG_TIMESERIES_LABELS = 0x0a; // 1
export const TAG_TIMESERIES_SAMPLES = 0x12; // 2
export const TAG_TIMESERIES_EXEMPLARS = 0x1a; // 3
export const TAG_TIMESERIES_HISTOGRAMS = 0x22; // 4
export const TAG_LABEL_NAME = 0x0a; // 1
export const TAG_LABEL_VALUE = 0x12; // 2
export const TAG_SAMPLE_VALUE = 0x09; // 1, fixed64 double
export const TAG_SAMPLE_TIMESTAMP = 0x10; // 2, varint int64
// Not in 1.0: Strata's records carry a sample's start (created) timestamp in 2.0's field
// number (Sample.start_timestamp = 3, Histogram.start_timestamp = 17); 1.0 readers skip it.
export const TAG_SAMPLE_START_TIMESTAMP = 0x18; // 3, varint int64
export const TAG_EXEMPLAR_LABELS = 0x0a; // 1
export const TAG_EXEMPLAR_VALUE = 0x11; // 2, fixed64 double
export const TAG_EXEMPLAR_TIMESTAMP = 0x18; // 3, varint int64
export const TAG_HISTOGRAM_TIMESTAMP = 0x78; // 15, varint int64
export const TAG_HISTOGRAM_START_TIMESTAMP = 0x88; // 17, varint int64 (Strata's records, as TAG_SAMPLE_START_TIMESTAMP)
const TAG_METADATA_TYPE = 0x08; // 1, varint enum
const TAG_METADATA_FAMILY_NAME = 0x12; // 2
const TAG_METADATA_HELP = 0x22; // 4
const TAG_METADATA_UNIT = 0x2a; // 5

export const FIELD_TIMESERIES = 1;
export const FIELD_METADATA = 3;
export const FIELD_LABELS = 1;

// Wire type of each defined field, by field number (-1: none or not checked).
export const WT_WRITE_REQUEST = [-1, 2, -1, 2] as const;
export const WT_TIMESERIES = [-1, 2, 2, 2, 2] as const;
export const WT_LABEL = [-1, 2, 2] as const;
export const WT_SAMPLE = [-1, 1, 0] as const;
export const WT_EXEMPLAR = [-1, 2, 1, 0] as const;
const WT_METADATA = [-1, 0, 2, -1, 2, 2] as const;
export const WT_HISTOGRAM = [-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0] as const;

/** `MetricMetadata.MetricType`, lower-cased as Prometheus' metadata API prints it. */
export type MetricType = 'unknown' | 'counter' | 'gauge' | 'histogram' | 'gaugehistogram' | 'summary' | 'info' | 'stateset';

export const METRIC_TYPES: readonly MetricType[] = ['unknown', 'counter', 'gauge', 'histogram', 'gaugehistogram', 'summary', 'info', 'stateset'];

export interface MetricMetadata {
  type: MetricType;
  metricFamilyName: string;
  help: string;
  unit: string;
}

/** Reads one Label message body ending at `end`. */
export function readLabel(r: ProtoReader, end: number): Label {
  let name = '';
  let value = '';
  while (r.pos < end) {
    const tag = r.tag(end, 'Label');
    if (tag === TAG_LABEL_NAME) {
      const e = r.len(end, 1, 'Label');
      name = r.string(r.pos, e);
      r.pos = e;
    } else if (tag === TAG_LABEL_VALUE) {
      const e = r.len(end, 2, 'Label');
      value = r.string(r.pos, e);
      r.pos = e;
    } else {
      r.skip(tag, end, 'Label', WT_LABEL);
    }
  }
  return { name, value };
}

/** Reads one MetricMetadata message body ending at `end`. Unknown enum values read as 'unknown'. */
export function readMetadata(r: ProtoReader, end: number): MetricMetadata {
  let type: MetricType = 'unknown';
  let metricFamilyName = '';
  let help = '';
  let unit = '';
  while (r.pos < end) {
    const tag = r.tag(end, 'MetricMetadata');
    switch (tag) {
      case TAG_METADATA_TYPE:
        type = METRIC_TYPES[r.int64(end, 1, 'MetricMetadata')] ?? 'unknown';
        break;
      case TAG_METADATA_FAMILY_NAME: {
        const e = r.len(end, 2, 'MetricMetadata');
        metricFamilyName = r.string(r.pos, e);
        r.pos = e;
        break;
      }
      case TAG_METADATA_HELP: {
        const e = r.len(end, 4, 'MetricMetadata');
        help = r.string(r.pos, e);
        r.pos = e;
        break;
      }
      case TAG_METADATA_UNIT: {
        const e = r.len(end, 5, 'MetricMetadata');
        unit = r.string(r.pos, e);
        r.pos = e;
        break;
      }
      default:
        r.skip(tag, end, 'MetricMetadata', WT_METADATA);
    }
  }
  return { type, metricFamilyName, help, unit };
}
