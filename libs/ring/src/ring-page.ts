// The UI's partition-ring page: the ring as a distributor reads it (partitions,
// their states and owners), from the same JSON as /ingester/partition-ring.

import type { StatusPage } from '@strata/ui';
import { ringStatusJson, type RingStatusSnapshot } from './http.ts';

export function ringPage(snapshot: () => Promise<RingStatusSnapshot>, heartbeatTimeoutMs: number): StatusPage {
  return {
    id: 'ring',
    title: 'Partition ring',
    module: 'distributor',
    sections: async () => {
      const r = ringStatusJson(await snapshot(), heartbeatTimeoutMs, Date.now());
      return [
        {
          title: 'Ring',
          fields: { source: r.source, kv: r.kv, reason: r.reason ?? null, 'write partitions': r.write_partitions?.join(', ') ?? null },
          links: [{ label: 'Partition ring page (Mimir format, JSON with Accept: application/json)', href: '/ingester/partition-ring' }],
        },
        {
          title: 'Partitions',
          rows: r.partitions.map((p) => ({
            partition: p.id,
            state: p.state,
            since: p.state_timestamp,
            ownership: p.ownership,
            owners: p.owners.map((o) => o.id).join(', '),
          })),
        },
        {
          title: 'Owners',
          rows: r.partitions.flatMap((p) =>
            p.owners.map((o) => ({
              owner: o.id,
              partition: p.id,
              zone: o.zone,
              address: o.addr,
              healthy: o.healthy,
              'heartbeat age (s)': o.heartbeat_age_seconds,
              registered: o.registered,
            })),
          ),
        },
      ];
    },
  };
}
