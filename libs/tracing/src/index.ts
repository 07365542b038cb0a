// Public surface of @strata/tracing: OpenTelemetry tracer provider per process, W3C trace
// context propagation over HTTP and Kafka record headers, span helpers.
export { Tracing, defaultTracer } from './tracing.ts';
export type { TracingOptions } from './tracing.ts';
export { tracingConfigShape, otlpTracesUrl } from './config.ts';
export type { TracingConfig } from './config.ts';
export { extractTraceContext, traceContextHeaders } from './propagation.ts';
export { inSpan, inSpanSync, markError, currentTraceIds, exemplarLabels } from './spans.ts';
export { SpanKind, SpanStatusCode } from '@opentelemetry/api';
export type { Span, Tracer, Context } from '@opentelemetry/api';
// For tests that collect spans in-process.
export { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
export type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
