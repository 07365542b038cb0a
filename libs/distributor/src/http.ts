// Push routes: remote write at POST /api/v1/push (Mimir's path) and /api/v1/write,
// OTLP metrics at POST /otlp/v1/metrics (Mimir's path). Remote-write errors are
// one line of text; OTLP errors are a google.rpc.Status, as OTLP/HTTP asks. The
// status of a failure is its kind through the tables in push-status.ts, nowhere else.

import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Registry } from 'prom-client';
import { asStrataError, type StrataError } from '@strata/errors';
import { encodeExportResponse, encodeStatus, otlpContentType, type OtlpFormat } from '@strata/otlp';
import { parseContentType } from '@strata/remote-write';
import { TenantError, tenantFromHeader, type Authenticator, type Logger } from '@strata/service';
import { SpanKind, SpanStatusCode, defaultTracer, exemplarLabels, extractTraceContext, inSpan, type Span, type Tracer } from '@strata/tracing';
import { errors } from './errors.ts';
import { PushMetrics } from './push-metrics.ts';
import type { Distributor, WrittenCounts } from './distributor.ts';
import { OTLP_STATUS, REMOTE_WRITE_STATUS } from './push-status.ts';

const NOTHING_WRITTEN: Readonly<WrittenCounts> = { samples: 0, histograms: 0, exemplars: 0 };

type PushHttpRequest = { headers: Record<string, string | string[] | undefined>; body: unknown };

export interface PushRoutesOptions {
  distributor: Distributor;
  multitenancyEnabled: boolean;
  logger: Logger;
  registry: Registry;
  maxBodyBytes: number;
  /** Per-tenant credentials (-auth.tokens-file); checked before the body is looked at. None: no auth. */
  auth?: Authenticator;
  /** The push span continues an incoming `traceparent`; default: the global (no-op) tracer. */
  tracer?: Tracer;
}

export function registerPushRoutes(app: FastifyInstance, opts: PushRoutesOptions): void {
  new PushRoutes(opts).register(app);
}

/** One handler per protocol, each in a server span, behind a check of the instance limits. */
class PushRoutes {
  private readonly opts: PushRoutesOptions;
  private readonly metrics: PushMetrics;
  private readonly tracer: Tracer;

  constructor(opts: PushRoutesOptions) {
    this.opts = opts;
    this.metrics = new PushMetrics(opts.registry);
    this.tracer = opts.tracer ?? defaultTracer();
  }

  register(app: FastifyInstance): void {
    // Any content type reaches the handler as bytes; the remote-write codec decides (415 for the wrong one).
    void app.register(async (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: this.opts.maxBodyBytes }, (_req, body, done) => done(null, body));
      const push = this.traced('distributor.push', (req, reply, span) => this.remoteWrite(req, reply, span));
      scope.post('/api/v1/push', { onRequest: this.shed(false) }, push);
      scope.post('/api/v1/write', { onRequest: this.shed(false) }, push);
      scope.post(
        '/otlp/v1/metrics',
        { onRequest: this.shed(true) },
        this.traced('distributor.push-otlp', (req, reply, span) => this.otlp(req, reply, span)),
      );
    });
  }

  /** Each push runs in a server span that continues the sender's trace, if it sent one. */
  private traced(name: string, fn: (req: PushHttpRequest, reply: FastifyReply, span: Span) => Promise<unknown>) {
    return (req: PushHttpRequest, reply: FastifyReply) =>
      inSpan(this.tracer, name, { kind: SpanKind.SERVER }, extractTraceContext(req.headers), async (span) => {
        const out = await fn(req, reply, span);
        span.setAttribute('http.response.status_code', reply.statusCode);
        if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: `HTTP ${reply.statusCode}` });
        return out;
      });
  }

  /** What both push routes check before the distributor sees a request: credentials, then a byte body. */
  private admit(req: PushHttpRequest, span: Span, tenant: string, expected: string): Buffer {
    span.setAttribute('tenant', tenant);
    this.opts.auth?.authenticate(tenant, header(req.headers.authorization));
    if (!Buffer.isBuffer(req.body)) throw errors.notAByteBody(expected);
    return req.body;
  }

  /** Remote write 1.0 or 2.0: errors are one line of text. */
  private async remoteWrite(req: PushHttpRequest, reply: FastifyReply, span: Span): Promise<FastifyReply> {
    const end = this.metrics.latency.startTimer({}, {});
    let tenant: string | undefined;
    // A 2.0 answer says what was written, failures included (nothing, when the push fails).
    let v2 = false;
    try {
      tenant = tenantFromHeader(req.headers['x-scope-orgid'], this.opts.multitenancyEnabled);
      const body = this.admit(req, span, tenant, 'a snappy-compressed protobuf body (Content-Type: application/x-protobuf)');
      const contentType = header(req.headers['content-type']);
      const contentEncoding = header(req.headers['content-encoding']);
      v2 = isRemoteWriteV2(contentType, contentEncoding);
      const result = await this.opts.distributor.push({ tenant, body, contentType, contentEncoding });
      end({ status: result.status }, exemplarLabels());
      span.setAttributes({ samples: result.samples, series: result.series });
      if (result.written) setWrittenHeaders(reply, result.written);
      if (result.message)
        return reply
          .code(result.status)
          .type('text/plain')
          .send(oneLine(result.message) + '\n');
      return reply.code(result.status).send();
    } catch (err) {
      const e = pushError(err);
      const status = REMOTE_WRITE_STATUS[e.kind];
      end({ status }, exemplarLabels());
      log(this.opts.logger, tenant, e, status);
      challenge(reply, err);
      retryAfter(reply, status, e);
      if (v2) setWrittenHeaders(reply, NOTHING_WRITTEN);
      return reply
        .code(status)
        .type('text/plain')
        .send(oneLine(e.message) + '\n');
    }
  }

  /** OTLP metrics: errors are a google.rpc.Status in the request's encoding. */
  private async otlp(req: PushHttpRequest, reply: FastifyReply, span: Span): Promise<FastifyReply> {
    const end = this.metrics.otlpLatency.startTimer({}, {});
    const contentType = header(req.headers['content-type']);
    // Errors are answered in the request's encoding when it has a known one.
    const format = otlpFormatOf(contentType);
    let tenant: string | undefined;
    try {
      tenant = tenantFromHeader(req.headers['x-scope-orgid'], this.opts.multitenancyEnabled);
      const body = this.admit(req, span, tenant, 'an OTLP ExportMetricsServiceRequest body (Content-Type: application/x-protobuf)');
      const result = await this.opts.distributor.pushOtlp({
        tenant,
        body,
        contentType,
        contentEncoding: header(req.headers['content-encoding']),
      });
      end({ status: result.status }, exemplarLabels());
      reply.code(result.status).type(otlpContentType(format));
      // Some data was refused (the rest written): the sender's bad data, in the Status body too.
      if (result.message) return reply.send(encodeStatus(format, OTLP_STATUS['bad-input'].grpc, oneLine(result.message)));
      return reply.send(encodeExportResponse(format));
    } catch (err) {
      const e = pushError(err);
      const { http, grpc } = OTLP_STATUS[e.kind];
      end({ status: http }, exemplarLabels());
      log(this.opts.logger, tenant, e, http);
      challenge(reply, err);
      retryAfter(reply, http, e);
      return reply
        .code(http)
        .type(otlpContentType(format))
        .send(encodeStatus(format, grpc, oneLine(e.message)));
    }
  }

  /** Over an instance limit, refuse before the body is read (the handler checks again, exactly, with the body). */
  private shed(otlp: boolean) {
    return async (req: { headers: PushHttpRequest['headers'] }, reply: FastifyReply) => {
      try {
        this.opts.distributor.checkInstanceLimits(Number(header(req.headers['content-length'])) || 0);
      } catch (err) {
        const e = pushError(err);
        const status = otlp ? OTLP_STATUS[e.kind].http : REMOTE_WRITE_STATUS[e.kind];
        // With exemplars on, prom-client's histograms take only the object form of observe.
        (otlp ? this.metrics.otlpLatency : this.metrics.latency).startTimer({}, {})({ status }, exemplarLabels());
        retryAfter(reply, status, e);
        if (!otlp)
          return reply
            .code(status)
            .type('text/plain')
            .send(oneLine(e.message) + '\n');
        const format = otlpFormatOf(header(req.headers['content-type']));
        return reply
          .code(status)
          .type(otlpContentType(format))
          .send(encodeStatus(format, OTLP_STATUS[e.kind].grpc, oneLine(e.message)));
      }
    };
  }
}

function otlpFormatOf(contentType: string | undefined): OtlpFormat {
  return /^\s*application\/json\s*(;|$)/i.test(contentType ?? '') ? 'json' : 'protobuf';
}

/** Every lib's errors carry their kind already; anything else is a bug, and the sender is told so. */
function pushError(err: unknown): StrataError {
  return asStrataError(err, 'internal error: ');
}

/** Whether the push is remote write 2.0 (false when its headers are refused: nothing is decoded then). */
function isRemoteWriteV2(contentType: string | undefined, contentEncoding: string | undefined): boolean {
  try {
    return parseContentType(contentType, contentEncoding) === 'v2';
  } catch {
    return false;
  }
}

/** A 401 for credentials names the schemes the server takes (RFC 9110 asks for it). */
function challenge(reply: FastifyReply, err: unknown): void {
  if (err instanceof TenantError && err.challenge !== undefined) reply.header('WWW-Authenticate', err.challenge);
}

function log(logger: Logger, tenant: string | undefined, e: StrataError, status: number): void {
  const fn = status >= 500 ? logger.warn.bind(logger) : logger.debug.bind(logger);
  fn({ tenant, code: e.code, status }, e.message);
}

/** 429 and 503 say when to come back (Prometheus and OTLP exporters honour Retry-After). */
function retryAfter(reply: FastifyReply, status: number, e: StrataError): void {
  if (status === 429 || status === 503) reply.header('Retry-After', String(e.retryAfterSeconds ?? 1));
}

/** Remote write 2.0's required response headers: what was written, also on failure. */
function setWrittenHeaders(reply: FastifyReply, w: WrittenCounts): void {
  reply.header('X-Prometheus-Remote-Write-Samples-Written', String(w.samples));
  reply.header('X-Prometheus-Remote-Write-Histograms-Written', String(w.histograms));
  reply.header('X-Prometheus-Remote-Write-Exemplars-Written', String(w.exemplars));
}

/**
 * A reason is one line of text: senders log it as one. Control characters (from
 * label values or a quoted body) are escaped as JSON would.
 */
function oneLine(message: string): string {
  return message.replace(/[\u0000-\u001f\u007f]/g, (c) => JSON.stringify(c).slice(1, -1));
}

function header(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
