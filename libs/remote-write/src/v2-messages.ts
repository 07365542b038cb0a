// Field numbers of remote write 2.0 (`io.prometheus.write.v2.Request`,
// prompb/io/prometheus/write/v2/types.proto), shared by the v2 parser, converter and encoder.

import type { MetricType } from './messages.ts';

const PROTO_V2_NAME = 'io.prometheus.write.v2.Request';

// Tags are `field << 3 | wireType`.
export const TAG_V2_REQUEST_SYMBOLS = 0x22; // 4, length-delimited
export const TAG_V2_REQUEST_TIMESERIES = 0x2a; // 5, length-delimited
export const TAG_V2_TS_LABELS_REFS_PACKED = 0x0a; // 1, packed uint32
export const TAG_V2_TS_LABELS_REFS_VARINT = 0x08; // 1, one unpacked uint32
export const TAG_V2_TS_SAMPLES = 0x12; // 2
export const TAG_V2_TS_HISTOGRAMS = 0x1a; // 3
export const TAG_V2_TS_EXEMPLARS = 0x22; // 4
export const TAG_V2_TS_METADATA = 0x2a; // 5
export const TAG_V2_SAMPLE_VALUE = 0x09; // 1, double
export const TAG_V2_SAMPLE_TIMESTAMP = 0x10; // 2, int64
export const TAG_V2_SAMPLE_START_TIMESTAMP = 0x18; // 3, int64
export const TAG_V2_TS_CREATED_TIMESTAMP = 0x30; // 6, int64 (rc.0-rc.3 only)
export const TAG_V2_EXEMPLAR_LABELS_REFS_PACKED = 0x0a; // 1
export const TAG_V2_EXEMPLAR_LABELS_REFS_VARINT = 0x08; // 1
export const TAG_V2_EXEMPLAR_VALUE = 0x11; // 2, double
export const TAG_V2_EXEMPLAR_TIMESTAMP = 0x18; // 3, int64
export const TAG_V2_METADATA_TYPE = 0x08; // 1, enum
export const TAG_V2_METADATA_HELP_REF = 0x18; // 3, uint32
export const TAG_V2_METADATA_UNIT_REF = 0x20; // 4, uint32
export const TAG_V2_HISTOGRAM_TIMESTAMP = 0x78; // 15, int64
export const TAG_V2_HISTOGRAM_START_TIMESTAMP = 0x88; // 17, int64 (a two-byte tag: 0x88 0x01)

// Wire type of each defined field, by field number (-1: none or not checked).
// Request fields 1..3 are reserved so a 1.0 body sent as 2.0 is recognisable (see parse-v2.ts).
// TimeSeries field 6 is created_timestamp (rc.0-rc.3; reserved since rc.4, which moved it
// into Sample.start_timestamp = 3 and Histogram.start_timestamp = 17): both are read.
export const WT_V2_REQUEST = [-1, -1, -1, -1, 2, 2] as const;
export const WT_V2_TIMESERIES = [-1, -1, 2, 2, 2, 2, 0] as const;
export const WT_V2_SAMPLE = [-1, 1, 0, 0] as const;
export const WT_V2_EXEMPLAR = [-1, -1, 1, 0] as const;
export const WT_V2_METADATA = [-1, 0, -1, 0, 0] as const;
export const WT_V2_HISTOGRAM = [-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, -1, 0] as const;

/** `Metadata.MetricType` by enum number; the same order as 1.0's MetricMetadata.MetricType. */
export const V2_METRIC_TYPES: readonly MetricType[] = ['unknown', 'counter', 'gauge', 'histogram', 'gaugehistogram', 'summary', 'info', 'stateset'];
