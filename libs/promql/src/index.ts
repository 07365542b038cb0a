// @strata/promql: PromQL parsing and evaluation with Prometheus 3 semantics.
export { Engine, checkRangeResolution } from './engine.ts';
export type { EngineOptions, InstantQueryParams, RangeQueryParams, TenantFetchLimits } from './engine.ts';
export type { FetchedStats, QuerySamples, QueryStats, QueryTimings, StatsLevel } from './stats-types.ts';
export { parseExpr, parseSelector } from './parser.ts';
export type { ParseOptions } from './parser.ts';
export { lex, describeToken } from './lexer.ts';
export type { Token, TokenType } from './lexer.ts';
export { exprType, documentedType, formatExpr, formatDurationExpr, walk, children, unwrapParens, isComparisonOp, isSetOp } from './ast.ts';
export type {
  Expr,
  ValueType,
  NumberLiteral,
  StringLiteral,
  VectorSelector,
  MatrixSelector,
  SubqueryExpr,
  AggregateExpr,
  AggregateOp,
  BinaryExpr,
  BinaryOp,
  ArithmeticOp,
  ComparisonOp,
  SetOp,
  UnaryExpr,
  ParenExpr,
  Call,
  VectorMatching,
  Cardinality,
  FunctionSignature,
  DurationExpr,
} from './ast.ts';
export { parseDuration, formatDuration } from './durations.ts';
export { FUNCTIONS } from './functions.ts';
export type { FunctionDef } from './function-types.ts';
export { PromQLError, PromQLParseError, PromQLBadDataError, PromQLExecutionError, PromQLTimeoutError } from './errors.ts';
export type { PositionRange } from './errors.ts';
export { toPrometheusData, formatValue, formatTimestamp } from './format.ts';
export { prettyExpr } from './pretty.ts';
export { FloatHistogram } from './histogram/float-histogram.ts';
export type { CounterResetHint, Bucket as HistogramBucket } from './histogram/float-histogram.ts';
export { parseHistogramNotation } from './histogram/notation.ts';
export { spansMatch as histogramSpansMatch } from './histogram/buckets.ts';
export { formatHistogram } from './format.ts';
export type { PrometheusHistogram } from './format.ts';
export type { PrometheusData, PrometheusPoint } from './format.ts';
export { staleMarkers, writeStaleMarker } from './values.ts';
export type { FPoint, HPoint, Sample, MatrixSeries, QueryValue, QueryResult } from './values.ts';
