// Small helpers every component uses around its spans: run a function in an active span that
// records failures, and read the current trace id for logs and exemplars.

import { SpanStatusCode, TraceFlags, context, isSpanContextValid, trace, type Context, type Span, type SpanOptions, type Tracer } from '@opentelemetry/api';

/**
 * Runs `fn` inside a new active span (child of `parent`, default the current context) and ends
 * it. A throw marks the span as an error and is rethrown; `fn` may set its own status first.
 */
export async function inSpan<T>(tracer: Tracer, name: string, options: SpanOptions, parent: Context | undefined, fn: (span: Span) => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, options, parent ?? context.active(), async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      markError(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

/** Synchronous form of inSpan, for hot loops that must not yield (the ingester's append). */
export function inSpanSync<T>(tracer: Tracer, name: string, options: SpanOptions, parent: Context | undefined, fn: (span: Span) => T): T {
  return tracer.startActiveSpan(name, options, parent ?? context.active(), (span) => {
    try {
      return fn(span);
    } catch (err) {
      markError(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

export function markError(span: Span, err: unknown): void {
  const message = err instanceof Error ? err.message : String(err);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
  if (err instanceof Error) span.recordException(err);
}

/** Trace and span id of the current span, whether sampled or not (logs correlate with the caller's trace either way). */
export function currentTraceIds(): { trace_id: string; span_id: string } | undefined {
  const sc = trace.getActiveSpan()?.spanContext();
  if (sc === undefined || !isSpanContextValid(sc)) return undefined;
  return { trace_id: sc.traceId, span_id: sc.spanId };
}

/**
 * Exemplar labels for a latency observation: the trace id of `span` (default: the current one)
 * when it is sampled, so the exemplar points at a trace that was actually kept.
 */
export function exemplarLabels(span: Span | undefined = trace.getActiveSpan()): Record<string, string> {
  const sc = span?.spanContext();
  if (sc === undefined || !isSpanContextValid(sc) || (sc.traceFlags & TraceFlags.SAMPLED) === 0) return {};
  return { trace_id: sc.traceId };
}
