export { RemoteWriteError } from './errors.ts';
export type { RemoteWriteErrorCode } from './errors.ts';
export { decompressBody, compressBody, BodyBuffers } from './snappy.ts';
export { parseContentType, checkContentEncoding } from './content-type.ts';
export type { RemoteWriteVersion } from './content-type.ts';
export { parseWriteRequest } from './parse-v1.ts';
export { ParsedSeries } from './parse-v1.ts';
export type { ParsedWriteRequest, ParsedMetadata } from './parse-v1.ts';
export { countSeries } from './count.ts';
export { decodeWriteRequest, DecodedSeries } from './decode-record.ts';
export { symbolizeSeries, decodeRecordValue, symbolString, Symbolizer, SymbolizedDecoder } from './symbolized-record.ts';
export type { KnownPairs, SymbolizedRecord } from './symbolized-record.ts';
export { LabelPairs, PAIR_ASCII_VALID, PAIR_METRIC_NAME, PAIR_PLAIN } from './label-pairs.ts';
export type { DecodedWriteRequest, DecodedExemplar } from './decode-record.ts';
export { readHistogram, validateHistogram, encodeHistogram, reduceResolution, histogramBucketCount, checkSeriesHistograms } from './histogram.ts';
export type { SeriesHistogramLimits, SeriesHistogramOutcome } from './histogram.ts';
export type { DecodedHistogram } from './histogram.ts';
export { encodeRecordValue, encodeWriteRequest, encodeMetricMetadata, replaceSeriesLabels, withoutExemplars } from './encode.ts';
export type { WriteRequestInput, SeriesInput, SampleInput, ExemplarInput } from './encode.ts';
export type { MetricMetadata, MetricType } from './messages.ts';
export { parseWriteRequestV2, metricFamilyName } from './parse-v2.ts';
export type { ParsedWriteRequestV2, ParsedSeriesV2 } from './parse-v2.ts';
export { seriesV2ToV1 } from './convert-v2.ts';
export { encodeWriteRequestV2, encodeSymbolizedWriteRequestV2 } from './encode-v2.ts';
export type {
  WriteRequestV2Input,
  SeriesInputV2,
  ExemplarInputV2,
  MetadataInputV2,
  SymbolizedWriteRequestV2,
  SymbolizedSeriesV2,
} from './encode-v2.ts';
export { ProtoReader, ProtoWriter, WIRE_VARINT, WIRE_FIXED64, WIRE_LEN, WIRE_FIXED32 } from './wire.ts';
export { STALE_NAN_BITS, isStaleNaN } from './stale.ts';
export {
  validateSeriesLabels,
  validateParsedSeries,
  sortLabelsInPlace,
  withoutEmptyLabelValues,
  formatSeries,
  DEFAULT_LABEL_LIMITS,
} from './validate.ts';
export type { ValidationFailure, ValidationCode, LabelLimits, NameValidationScheme } from './validate.ts';
