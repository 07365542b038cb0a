// One tracer provider per process, named for the app (service.name). It always creates spans,
// so trace ids reach logs and Kafka records, but records and exports them only when an OTLP
// endpoint is configured (or a test hands in its own exporter). Never installs a global tracer
// provider: components get their Tracer passed in.

import { DiagLogLevel, context, diag, trace, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
  type Sampler,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { otlpTracesUrl, type TracingConfig } from './config.ts';

export interface TracingOptions {
  /** service.name of every span: the app, e.g. "distributor". */
  serviceName: string;
  config?: Partial<TracingConfig>;
  /** service.instance.id, e.g. the ingester's instance id. */
  instanceId?: string;
  /** Spans also go here, synchronously as they end (tests: an InMemorySpanExporter). */
  exporter?: SpanExporter;
  env?: NodeJS.ProcessEnv;
  /** Where the SDK's own warnings and errors go (a failing export, say); default: nowhere. */
  logger?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

let contextManagerInstalled = false;

/** Context follows async calls (AsyncLocalStorage); the API allows one manager per process, so install it once. */
function installContextManager(): void {
  if (contextManagerInstalled) return;
  contextManagerInstalled = true;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
}

export class Tracing {
  readonly tracer: Tracer;
  /** Where spans are exported over OTLP/HTTP, if anywhere. */
  readonly otlpUrl: string | undefined;
  private readonly provider: BasicTracerProvider;

  constructor(opts: TracingOptions) {
    installContextManager();
    if (opts.logger !== undefined) {
      const logger = opts.logger;
      // The SDK reports through the process-wide diag logger; the last Tracing given a logger owns it.
      diag.setLogger(
        {
          error: (msg, ...args) => logger.error({ source: 'opentelemetry', args: args.map(String) }, `tracing: ${msg}`),
          warn: (msg, ...args) => logger.warn({ source: 'opentelemetry', args: args.map(String) }, `tracing: ${msg}`),
          info: () => undefined,
          debug: () => undefined,
          verbose: () => undefined,
        },
        { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
      );
    }
    this.otlpUrl = otlpTracesUrl({ 'tracing.otlp-endpoint': opts.config?.['tracing.otlp-endpoint'] ?? '' }, opts.env ?? process.env);
    const processors: SpanProcessor[] = [];
    if (this.otlpUrl !== undefined) processors.push(new BatchSpanProcessor(new OTLPTraceExporter({ url: this.otlpUrl })));
    if (opts.exporter !== undefined) processors.push(new SimpleSpanProcessor(opts.exporter));
    // Nothing to export to: keep ids and propagation, skip recording.
    const sampler: Sampler =
      processors.length === 0
        ? new AlwaysOffSampler()
        : new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(opts.config?.['tracing.sample-ratio'] ?? 1) });
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({
        'service.name': opts.serviceName,
        ...(opts.instanceId !== undefined ? { 'service.instance.id': opts.instanceId } : {}),
      }),
      sampler,
      spanProcessors: processors,
    });
    this.tracer = this.provider.getTracer('strata');
  }

  get exporting(): boolean {
    return this.otlpUrl !== undefined;
  }

  /** Nothing to start; present so apps list tracing with their other services. */
  async start(): Promise<void> {}

  /** Exports what is buffered and shuts the provider down. */
  async stop(): Promise<void> {
    await this.provider.shutdown();
  }
}

/** The tracer of whatever provider is registered globally (none: spans are no-ops that still carry a remote parent). */
export function defaultTracer(): Tracer {
  return trace.getTracer('strata');
}
