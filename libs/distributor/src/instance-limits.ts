// Per-distributor (not per-tenant) protection, Mimir's instance limits: at most
// N push requests, and at most B bytes of their bodies, in flight at once. A push
// over either is refused at once with 503 (Mimir's status for instance limits),
// before it is decoded, so an overloaded distributor sheds load instead of queueing.

import { Counter, Gauge, type Registry } from 'prom-client';
import { errors } from './errors.ts';

export interface InstanceLimits {
  /** -distributor.instance-limits.max-inflight-push-requests; 0: no limit. */
  maxInflightPushRequests: number;
  /** -distributor.instance-limits.max-inflight-push-requests-bytes (received, still compressed); 0: no limit. */
  maxInflightPushRequestsBytes: number;
}

export class InflightLimiter {
  private requests = 0;
  private bytes = 0;
  private readonly rejected: Counter<'reason'>;
  private readonly gauges: { inflight: Gauge; inflightBytes: Gauge };

  private readonly limits: InstanceLimits;

  constructor(limits: InstanceLimits, registry: Registry) {
    this.limits = limits;
    const registers = [registry];
    const inflight = new Gauge({
      name: 'strata_distributor_inflight_push_requests',
      help: 'Push requests (remote write and OTLP) being handled by this distributor.',
      registers,
    });
    const inflightBytes = new Gauge({
      name: 'strata_distributor_inflight_push_requests_bytes',
      help: 'Bytes of the bodies of the push requests being handled by this distributor.',
      registers,
    });
    this.gauges = { inflight, inflightBytes };
    const limitGauge = new Gauge({
      name: 'strata_distributor_instance_limits',
      help: 'Instance limits of this distributor (0: no limit).',
      labelNames: ['limit'],
      registers,
    });
    limitGauge.set({ limit: 'max_inflight_push_requests' }, limits.maxInflightPushRequests);
    limitGauge.set({ limit: 'max_inflight_push_requests_bytes' }, limits.maxInflightPushRequestsBytes);
    this.rejected = new Counter({
      name: 'strata_distributor_instance_rejected_requests_total',
      help: 'Push requests refused because an instance limit was reached, by limit.',
      labelNames: ['reason'],
      registers,
    });
  }

  /**
   * Throws the `unavailable` StrataError (503) if a request of `bodyBytes` would take the
   * distributor over a limit now. The HTTP layer asks before reading a body (from
   * Content-Length), so a refused push costs no body read and no decode.
   */
  check(bodyBytes: number): void {
    const { maxInflightPushRequests: maxRequests, maxInflightPushRequestsBytes: maxBytes } = this.limits;
    if (maxRequests > 0 && this.requests + 1 > maxRequests) {
      this.rejected.inc({ reason: 'max_inflight_push_requests' });
      throw errors.maxInflightPushRequests(maxRequests);
    }
    if (maxBytes > 0 && this.bytes + bodyBytes > maxBytes) {
      this.rejected.inc({ reason: 'max_inflight_push_requests_bytes' });
      throw errors.maxInflightPushRequestsBytes(maxBytes, this.bytes, bodyBytes);
    }
  }

  /** Runs `fn` counted as in flight, or throws as check() does when over a limit. */
  async run<T>(bodyBytes: number, fn: () => Promise<T>): Promise<T> {
    this.check(bodyBytes);
    this.requests++;
    this.bytes += bodyBytes;
    this.gauges.inflight.set(this.requests);
    this.gauges.inflightBytes.set(this.bytes);
    try {
      return await fn();
    } finally {
      this.requests--;
      this.bytes -= bodyBytes;
      this.gauges.inflight.set(this.requests);
      this.gauges.inflightBytes.set(this.bytes);
    }
  }
}
