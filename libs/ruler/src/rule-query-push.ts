// How rules reach the query path and the write path: an instant query through
// the querier's Engine (strong reads when a rule reads an earlier rule's
// output), and rule output as a remote-write 1.0 body through the
// distributor's push (in-process) or a remote-write URL.

import type { Querier } from '@strata/model';
import type { Engine } from '@strata/promql';
import { compressBody, encodeWriteRequest, type SeriesInput } from '@strata/remote-write';
import { RulerError } from './errors.ts';
import type { RulePusher, RuleQuerier } from './group.ts';

export interface EngineRuleQuerierOptions {
  engine: Engine;
  /** The querier a rule reads through: `strong` sees every write acknowledged before the call. */
  querier(strong: boolean): Promise<Querier>;
}

export function engineRuleQuerier(opts: EngineRuleQuerierOptions): RuleQuerier {
  return {
    query: async ({ tenant, expr, time, strong }) => opts.engine.instantQuery({ tenant, query: expr, time, querier: await opts.querier(strong) }),
  };
}

/** A remote-write push as the distributor answers it. */
export type PushFn = (tenant: string, body: Buffer, contentType: string) => Promise<{ status: number; message?: string }>;

/** Rule output as a snappy remote-write 1.0 body; anything but 2xx is a failure of the rules that wrote it. */
export function remoteWritePusher(push: PushFn): RulePusher {
  return {
    push: async (tenant: string, series: SeriesInput[]) => {
      const body = compressBody(encodeWriteRequest({ timeseries: series }));
      const res = await push(tenant, body, 'application/x-protobuf');
      if (res.status < 200 || res.status >= 300) {
        throw new RulerError(
          'rule-write-failed',
          res.status >= 500 || res.status === 429 ? 'unavailable' : 'bad-input',
          `writing rule output failed (${res.status}): ${res.message ?? ''}`,
        );
      }
    },
  };
}

/** A remote-write endpoint over HTTP (-ruler.push-url), tenant in X-Scope-OrgID. */
export function httpPush(url: string, timeoutMs: number): PushFn {
  return async (tenant, body, contentType) => {
    const res = await fetch(url, {
      method: 'POST',
      body,
      headers: { 'content-type': contentType, 'content-encoding': 'snappy', 'x-prometheus-remote-write-version': '0.1.0', 'x-scope-orgid': tenant },
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { status: res.status, message: (await res.text()).slice(0, 500) };
  };
}
