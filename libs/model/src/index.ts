export type { Label, Labels, EncodedLabels } from './labels.ts';
export { METRIC_NAME, metricName, labelValue, labelsKey, sortLabels, labelsFromRecord, labelsToRecord, compareLabels, compareUtf8 } from './labels.ts';
export type { MatchType, Matcher, MatcherFn } from './matchers.ts';
export { matcherFn, matcherSetValues, matchesEmpty, formatMatcher } from './matchers.ts';
export type { Regex, RegexGroups } from './regex.ts';
export { compileRegex, execRegex, expandRegexTemplate } from './regex.ts';
export type {
  Series,
  SeriesChunk,
  HistogramSpan,
  NativeHistogram,
  SelectHints,
  BlockSelectParams,
  BlockLabelValuesParams,
  BlockQuerier,
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
export { mergeSeriesSets, mergeSamples, mergeStringSets } from './merge-series.ts';
export { MergeQuerier, restrictRange, tenantQuerier } from './merge-querier.ts';
export { QueryAbortedError, throwIfAborted } from './abort.ts';
export { estimatedSeriesBytes, seriesChunkBytes, seriesChunkCount, seriesFloatSamples, queryBudgetExceeded, queryBudgetMessage } from './query-budget.ts';
export type { QueryBudget } from './query-budget.ts';
export type { Tombstone } from './tombstones.ts';
export { applyTombstones, applyTombstonesAll, tombstoneIntervals } from './tombstones.ts';
export { SendingOrder } from './sending-order.ts';
export { ByteStrings, grown } from './byte-strings.ts';
export { FNV_OFFSET, FNV_PRIME, SERIES_HASH_SEED, foldHash, hashLabels, seriesKey, stringHash } from './labels-hash.ts';
export { QUERY_SHARD_LABEL, queryShardMatcher, splitQueryShard, inQueryShard, labelsInQueryShard } from './query-shard.ts';
export type { QueryShard } from './query-shard.ts';
