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
export { matcherFn, matcherSetValues, matchesEmpty, formatMatcher } from './matchers.ts';
export type { Regex, RegexGroups } from './regex.ts';
export { compileRegex, execRegex } from './regex.ts';
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
