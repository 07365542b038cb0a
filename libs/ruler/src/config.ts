// Ruler flags (Mimir's names where Mimir has the setting).

import { hostname } from 'node:os';
import { z } from 'zod';
import { duration } from '@strata/service';

export const rulerConfigShape = {
  'ruler.evaluation-interval': duration('1m').describe('Evaluation interval of rule groups that set none.'),
  'ruler.poll-interval': duration('1m').describe(
    "How often the ruler re-reads every tenant's rule groups from the bucket (a config API change is loaded at once).",
  ),
  'ruler.alertmanager-url': z
    .string()
    .default('')
    .describe('Alertmanager base URL(s), comma-separated (alerts go to <url>/api/v2/alerts); empty: alerts are evaluated but not sent.'),
  'ruler.push-url': z
    .string()
    .default('')
    .describe('Remote-write URL for rule output when no distributor runs in this process (e.g. http://distributor:8080/api/v1/push).'),
  'ruler.external.url': z
    .string()
    .default('')
    .describe('URL of the ruler as alerts link to it (generatorURL, $externalURL).')
    .meta({ yaml: 'ruler.external_url' }),
  'ruler.resend-delay': duration('1m').describe('Minimum time before an alert still firing is sent to Alertmanager again.'),
  'ruler.for-outage-tolerance': duration('1h').describe('Max time to tolerate an outage when restoring the "for" state of alerts from ALERTS_FOR_STATE.'),
  'ruler.for-grace-period': duration('10m').describe('Minimum "for" left to an alert whose state was restored (shorter "for" is not restored).'),
  'ruler.notification-timeout': duration('10s').describe('Timeout of one request to Alertmanager.'),
  'ruler.ring.instance-id': z
    .string()
    .min(1)
    .default(hostname())
    .describe("This ruler's id in the ruler ring (rule groups are sharded over the healthy rulers in -ring.store)."),
  'ruler.ring.heartbeat-period': duration('15s').describe('How often a ruler heartbeats its ruler-ring entry.'),
  'ruler.ring.heartbeat-timeout': duration('1m').describe('A ruler whose heartbeat is older than this is unhealthy: its rule groups move to the others.'),
  'ruler.notification-queue-capacity': z.coerce
    .number()
    .int()
    .positive()
    .default(10_000)
    .describe('Alerts queued for Alertmanager per ruler; the oldest are dropped beyond it.'),
};

export type RulerConfig = z.infer<z.ZodObject<typeof rulerConfigShape>>;
