// The ruler module: rule groups from the bucket, evaluated through the querier
// module's engine, output pushed through the distributor in this process (or
// -ruler.push-url), alerts to -ruler.alertmanager-url.

import {
  AlertmanagerNotifier,
  RuleStore,
  Ruler,
  RulerRing,
  engineRuleQuerier,
  httpPush,
  registerRulerConfigApi,
  registerRulesApi,
  remoteWritePusher,
  rulerPage,
  type PushFn,
} from '@strata/ruler';
import type { Service } from '@strata/service';
import type { Strata } from '@strata/runtime';

export function initRuler(t: Strata): Service[] {
  const { config, logger, registry } = t;
  const query = t.queryEngine;
  if (!query) throw new Error('the ruler needs the querier module in the same process');
  const push = pushFn(t);
  const urls = splitUrls(config['ruler.alertmanager-url']);
  const notifier = alertmanagerNotifier(t, urls);
  const store = new RuleStore(t.bucket);
  // Groups are sharded over the healthy rulers in the ring KV (with the in-process KV: this ruler alone).
  let ruler: Ruler | undefined;
  const ring = new RulerRing({
    kv: t.kv,
    instanceId: config['ruler.ring.instance-id'],
    heartbeatPeriodMs: config['ruler.ring.heartbeat-period'],
    heartbeatTimeoutMs: config['ruler.ring.heartbeat-timeout'],
    logger,
    registry,
    onChange: () => void ruler?.sync().catch((err: unknown) => logger.warn({ err: (err as Error).message }, 'loading rule groups failed')),
  });
  ruler = new Ruler({
    store,
    querier: engineRuleQuerier(query),
    pusher: remoteWritePusher(push),
    sender: notifier,
    logger,
    registry,
    evaluationIntervalMs: config['ruler.evaluation-interval'],
    pollIntervalMs: config['ruler.poll-interval'],
    resendDelayMs: config['ruler.resend-delay'],
    forOutageToleranceMs: config['ruler.for-outage-tolerance'],
    forGracePeriodMs: config['ruler.for-grace-period'],
    externalURL: config['ruler.external.url'],
    owns: (tenant, namespace, group) => ring.owns(tenant, namespace, group),
  });
  const rules = ruler;
  registerApis(t, store, rules);
  t.statusPages.push(rulerPage(config['ruler.ring.instance-id'], ring, rules));
  return [
    {
      name: 'ruler',
      start: async () => {
        await ring.start();
        await rules.start();
        logger.info(
          { alertmanagers: urls, push: config['ruler.push-url'] || 'distributor', rulers: ring.healthy() },
          `ruler evaluating rule groups from ${t.bucket.name}/rules (ruler ring in ${t.kv.description})`,
        );
      },
      stop: async () => {
        await rules.stop();
        await ring.stop();
        await notifier.flush();
      },
    },
  ];
}

function splitUrls(s: string): string[] {
  return s
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u !== '');
}

/** Where rule output goes: -ruler.push-url, else the distributor in this process. */
function pushFn(t: Strata): PushFn {
  const { config } = t;
  const pushUrl = config['ruler.push-url'];
  const distributor = t.distributor;
  if (pushUrl !== '') return httpPush(pushUrl, config['ingest-storage.kafka.write-timeout'] + 5_000);
  if (distributor) return (tenant, body, contentType) => distributor.push({ tenant, body, contentType, contentEncoding: 'snappy' });
  throw new Error('the ruler writes rule output through a distributor: run it in the same process (-target=ruler,distributor) or set -ruler.push-url');
}

/**
 * Alerts to -ruler.alertmanager-url. A tenant may name its own Alertmanager in the runtime overrides
 * (ruler_alertmanager_url) even when the flag names none: the notifier always runs; with no URL for a
 * tenant its alerts go nowhere.
 */
function alertmanagerNotifier(t: Strata, urls: string[]): AlertmanagerNotifier {
  const { config } = t;
  const overrides = t.overrides;
  return new AlertmanagerNotifier({
    urls,
    urlsFor: (tenant) => {
      const own = overrides.forTenant(tenant).rulerAlertmanagerUrl;
      return own !== '' ? splitUrls(own) : undefined;
    },
    timeoutMs: config['ruler.notification-timeout'],
    queueCapacity: config['ruler.notification-queue-capacity'],
    logger: t.logger,
    registry: t.registry,
  });
}

/** Mimir's ruler config API and Prometheus' rules/alerts API. */
function registerApis(t: Strata, store: RuleStore, rules: Ruler): void {
  const { logger } = t;
  const multitenancyEnabled = t.config['auth.multitenancy-enabled'];
  registerRulerConfigApi(t.http, {
    store,
    multitenancyEnabled,
    auth: t.auth,
    logger,
    onChange: (tenant) => void rules.sync(tenant).catch((err: unknown) => logger.warn({ tenant, err: (err as Error).message }, 'loading rule groups failed')),
  });
  registerRulesApi(t.http, { groups: (tenant) => rules.groups(tenant), multitenancyEnabled, auth: t.auth });
  t.endpoints.push('ruler config $BASE/prometheus/config/v1/rules');
}
