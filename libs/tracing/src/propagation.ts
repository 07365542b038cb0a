// W3C trace context in and out of carriers we own: HTTP request headers and Kafka record
// headers. Only `traceparent` (and `tracestate`) travel; baggage is not propagated.

import { ROOT_CONTEXT, context, type Context, type TextMapGetter, type TextMapSetter } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

const propagator = new W3CTraceContextPropagator();

type HeaderValue = string | string[] | Buffer | undefined;

const getter: TextMapGetter<Record<string, HeaderValue>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const v = carrier[key] ?? carrier[key.toLowerCase()];
    if (v === undefined) return undefined;
    if (Array.isArray(v)) return v[0];
    return typeof v === 'string' ? v : v.toString('utf8');
  },
};

const setter: TextMapSetter<Record<string, string>> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

/** The remote parent named by `traceparent` in `headers`, on top of ROOT_CONTEXT; ROOT_CONTEXT if absent or malformed. */
export function extractTraceContext(headers: Record<string, HeaderValue> | undefined): Context {
  if (headers === undefined) return ROOT_CONTEXT;
  return propagator.extract(ROOT_CONTEXT, headers, getter);
}

/** `traceparent` (and `tracestate`) for the span active in `ctx` (default: the current context); {} without one. */
export function traceContextHeaders(ctx: Context = context.active()): Record<string, string> {
  const out: Record<string, string> = {};
  propagator.inject(ctx, out, setter);
  return out;
}
