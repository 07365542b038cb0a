export { RemoteWriteError } from './errors.ts';
export type { RemoteWriteErrorCode } from './errors.ts';
export { decompressBody, compressBody } from './snappy.ts';
export { parseContentType, checkContentEncoding } from './content-type.ts';
export type { RemoteWriteVersion } from './content-type.ts';
export { parseWriteRequest } from './parse.ts';
export type { ParsedWriteRequest, ParsedSeries, ParsedMetadata } from './parse.ts';
export { decodeWriteRequest } from './decode.ts';
export type { DecodedWriteRequest, DecodedSeries, DecodedExemplar } from './decode.ts';
export { encodeRecordValue, encodeWriteRequest, replaceSeriesLabels } from './encode.ts';
export type { WriteRequestInput, SeriesInput, SampleInput, ExemplarInput } from './encode.ts';
export type { MetricMetadata, MetricType } from './messages.ts';
export { STALE_NAN_BITS, isStaleNaN } from './stale.ts';
export {
  validateSeriesLabels,
  validateParsedSeries,
  withoutEmptyLabelValues,
  formatSeries,
  DEFAULT_LABEL_LIMITS,
} from './validate.ts';
export type { ValidationFailure, ValidationCode, LabelLimits } from './validate.ts';
