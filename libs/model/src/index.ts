export type { Label, Labels, EncodedLabels } from './labels.ts';
export {
  METRIC_NAME,
  metricName,
  labelValue,
  labelsKey,
  sortLabels,
  labelsFromRecord,
  labelsToRecord,
  compareLabels,
} from './labels.ts';
export type { MatchType, Matcher, MatcherFn } from './matchers.ts';
export { compileRegex, matcherFn, matchesEmpty, formatMatcher } from './matchers.ts';
export { compileAnchoredRe2 } from './re2.ts';
export type {
  Series,
  HistogramSpan,
  NativeHistogram,
  SelectParams,
  LabelValuesParams,
  Querier,
  Exemplar,
  ExemplarSeries,
  ExemplarParams,
  ExemplarQuerier,
  MetricMetadataEntry,
  MetadataParams,
  MetadataQuerier,
} from './querier.ts';
