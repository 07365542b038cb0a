export { OtlpError } from './errors.ts';
export type { OtlpErrorCode } from './errors.ts';
export type {
  ExportMetricsRequest,
  ResourceMetrics,
  ScopeMetrics,
  OtlpMetric,
  NumberDataPoint,
  HistogramDataPoint,
  SummaryDataPoint,
  OtlpExemplar,
  KeyValue,
  Temporality,
} from './model.ts';
export { decodeExportRequest } from './decode-proto.ts';
export { countExportRequestSeries, countRequestSeries } from './count.ts';
export { decodeExportRequestJson } from './decode-json.ts';
export { encodeExportRequest, encodeExportRequestJson } from './encode.ts';
export type {
  ExportRequestInput,
  MetricInput,
  ExponentialPointInput,
  NumberPointInput,
  HistogramPointInput,
  SummaryPointInput,
  ExemplarInput as OtlpExemplarInput,
  AttributesInput,
  AttributeInput,
  TemporalityInput,
} from './encode.ts';
export { translateMetrics } from './translate.ts';
export type { TranslateOptions, Translation } from './translate.ts';
export type { TranslationStrategy } from './names.ts';
export { metricName, labelName, prometheusUnit, formatFloatF } from './names.ts';
export type { MetricKind, NamingInput } from './names.ts';
export { otlpFormat, otlpContentType, decodeContentEncoding, decodeExportRequestBody, encodeExportResponse, encodeStatus } from './http-body.ts';
export type { OtlpFormat } from './http-body.ts';
