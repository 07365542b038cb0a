// The UI's HA tracker page (Mimir's ha_tracker_http.go): the replica elected for
// each tenant's cluster, as this distributor last saw the KV store.

import type { StatusPage } from '@strata/ui';
import type { HaTracker } from './ha-tracker.ts';

const iso = (ms: number): string | null => (Number.isFinite(ms) ? new Date(ms).toISOString() : null);

/** `tracker` is undefined when -distributor.ha-tracker.enable is false: the page says so. */
export function haTrackerPage(tracker: HaTracker | undefined): StatusPage {
  return {
    id: 'ha-tracker',
    title: 'HA tracker',
    module: 'distributor',
    sections: () => [
      tracker
        ? {
            title: 'Elected replicas',
            note: 'As this distributor last saw them in the KV store.',
            rows: tracker.elections().map((e) => ({
              tenant: e.tenant,
              cluster: e.cluster,
              'elected replica': e.replica,
              'elected at': iso(e.electedAt),
              'last sample received': iso(e.receivedAt),
              'elected changes': e.electedChanges,
            })),
          }
        : { title: 'Elected replicas', note: 'The HA tracker is off (-distributor.ha-tracker.enable=false).' },
    ],
  };
}
