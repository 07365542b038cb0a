export type { Label, Labels } from './labels.ts';
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
export type { Series, SelectParams, LabelValuesParams, Querier } from './querier.ts';
