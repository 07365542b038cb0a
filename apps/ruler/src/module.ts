// The ruler module: rule groups from the bucket, evaluated through the querier
// module's engine, output pushed through the distributor in this process (or
// -ruler.push-url), alerts to -ruler.alertmanager-url.

import {
  AlertmanagerNotifier,
  RuleStore,
  Ruler,
  engineRuleQuerier,
  httpPush,
  registerRulerConfigApi,
  registerRulesApi,
  remoteWritePusher,
  type PushFn,
} from '@strata/ruler';
import type { Service } from '@strata/service';
import type { Strata } from '../../strata/src/strata.ts';

export function initRuler(t: Strata): Service[] {
  const { config, logger, registry } = t;
  const query = t.queryEngine;
  if (!query) throw new Error('the ruler needs the querier module in the same process');
  const pushUrl = config['ruler.push-url'];
  const distributor = t.distributor;
  let push: PushFn;
  if (pushUrl !== '') push = httpPush(pushUrl, config['ingest-storage.kafka.write-timeout'] + 5_000);
  else if (distributor) push = (tenant, body, contentType) => distributor.push({ tenant, body, contentType, contentEncoding: 'snappy' });
  else throw new Error('the ruler writes rule output through a distributor: run it in the same process (-target=ruler,distributor) or set -ruler.push-url');
  const urls = config['ruler.alertmanager-url'].split(',').map((u) => u.trim()).filter((u) => u !== '');
  const notifier = urls.length > 0
    ? new AlertmanagerNotifier({ urls, timeoutMs: config['ruler.notification-timeout'], queueCapacity: config['ruler.notification-queue-capacity'], logger, registry })
    : undefined;
  const store = new RuleStore(t.bucket);
  const ruler = new Ruler({
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
  });
  const multitenancyEnabled = config['auth.multitenancy-enabled'];
  registerRulerConfigApi(t.http, {
    store,
    multitenancyEnabled,
    auth: t.auth,
    logger,
    onChange: (tenant) => void ruler.sync(tenant).catch((err: unknown) => logger.warn({ tenant, err: (err as Error).message }, 'loading rule groups failed')),
  });
  registerRulesApi(t.http, { groups: (tenant) => ruler.groups(tenant), multitenancyEnabled, auth: t.auth });
  t.endpoints.push('ruler config $BASE/prometheus/config/v1/rules');
  return [
    {
      name: 'ruler',
      start: async () => {
        await ruler.start();
        logger.info({ alertmanagers: urls, push: pushUrl || 'distributor' }, `ruler evaluating rule groups from ${t.bucket.name}/rules`);
      },
      stop: async () => {
        await ruler.stop();
        await notifier?.flush();
      },
    },
  ];
}
