// Tracing flags. Spans leave the process only when an OTLP endpoint is set (the flag, or the
// standard OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT variables).

import { z } from 'zod';

export const tracingConfigShape = {
  'tracing.otlp-endpoint': z
    .string()
    .default('')
    .refine((s) => s === '' || /^https?:\/\/[^/]+/.test(s), { message: 'must be an http:// or https:// URL, e.g. http://otel-collector:4318' })
    .describe('Base URL of an OTLP/HTTP receiver for spans (e.g. http://otel-collector:4318); empty: OTEL_EXPORTER_OTLP_* or none.'),
  'tracing.sample-ratio': z.coerce.number().min(0).max(1).default(1).describe('Share of new traces (no sampled parent) recorded and exported, 0..1.'),
};

export type TracingConfig = z.infer<z.ZodObject<typeof tracingConfigShape>>;

/**
 * Where spans are exported, or undefined for nowhere. The flag wins; then the OpenTelemetry
 * variables, with the traces-specific one used as-is and the generic one getting /v1/traces.
 */
export function otlpTracesUrl(config: Pick<TracingConfig, 'tracing.otlp-endpoint'>, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const flag = config['tracing.otlp-endpoint'];
  if (flag !== '') return withTracesPath(flag);
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (base) return withTracesPath(base);
  return undefined;
}

function withTracesPath(base: string): string {
  const trimmed = base.replace(/\/+$/, '');
  return trimmed.endsWith('/v1/traces') ? trimmed : `${trimmed}/v1/traces`;
}
