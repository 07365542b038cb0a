// The UI's status pages: each turns one part's snapshot into sections of
// fields and rows. Presentation only; every number comes from the part's own
// snapshot method, asked when the page is opened.

import type { Compactor } from '@strata/compactor';
import type { HaTracker } from '@strata/ha-tracker';
import type { Ingester } from '@strata/ingester';
import type { Overrides } from '@strata/limits';
import { ringStatusJson, type RingStatusSnapshot } from '@strata/ring';
import { describeBudget, formatBytes, redactConfig, type MemoryBudget, type ServiceState } from '@strata/service';
import { getHeapStatistics } from 'node:v8';
import type { StatusPage, StatusSection, StatusValue } from '@strata/ui';

const iso = (ms: number | undefined): string | null => (ms === undefined || !Number.isFinite(ms) ? null : new Date(ms).toISOString());

export function servicesPage(states: () => ServiceState[], notReadyReason: () => string | undefined, budget: MemoryBudget): StatusPage {
  return {
    id: 'services',
    title: 'Services',
    module: 'server',
    sections: () => {
      const reason = notReadyReason();
      return [
        { title: 'Readiness', fields: { ready: reason === undefined, reason: reason ?? null }, links: [{ label: '/ready', href: '/ready' }] },
        {
          title: 'Services',
          note: 'In start order; they stop in reverse.',
          rows: states().map((s) => ({ service: s.name, state: s.state, since: iso(s.since), failure: s.failure ?? null })),
        },
        memorySection(budget),
      ];
    },
  };
}

/** The budget (-server.memory-limit) beside what the process uses now. */
function memorySection(budget: MemoryBudget): StatusSection {
  const m = process.memoryUsage();
  const heap = getHeapStatistics();
  return {
    title: 'Memory',
    note: 'The V8 heap and the limits on pushes in flight, series per ingester and memory per query are sized from the budget (-server.memory-limit).',
    fields: {
      budget: describeBudget(budget),
      'resident (RSS)': `${formatBytes(m.rss)} (${Math.round((m.rss / budget.bytes) * 100)}% of the budget)`,
      'V8 heap in use': `${formatBytes(heap.used_heap_size)} of its ${formatBytes(heap.heap_size_limit)} limit`,
      'array buffers (off the heap)': formatBytes(m.arrayBuffers),
    },
  };
}

export function configPage(config: Readonly<Record<string, unknown>>): StatusPage {
  return {
    id: 'config',
    title: 'Configuration',
    module: 'server',
    sections: () => {
      const byPrefix = new Map<string, Record<string, StatusValue>>();
      for (const [flag, value] of Object.entries(redactConfig(config)).sort(([a], [b]) => a.localeCompare(b))) {
        const prefix = flag.includes('.') ? flag.slice(0, flag.indexOf('.')) : 'general';
        byPrefix.set(prefix, { ...byPrefix.get(prefix), [`-${flag}`]: value });
      }
      const sections: StatusSection[] = [{ title: 'Effective flags', note: 'Durations in milliseconds; secrets redacted.' }];
      for (const [prefix, fields] of byPrefix) sections.push({ title: prefix, fields });
      return sections;
    },
  };
}

export function overridesPage(overrides: Overrides): StatusPage {
  return {
    id: 'overrides',
    title: 'Runtime overrides',
    module: 'runtime-config',
    sections: () => {
      const s = overrides.snapshot();
      const rows: Record<string, StatusValue>[] = [];
      for (const [tenant, o] of Object.entries(s.overrides).sort(([a], [b]) => a.localeCompare(b))) {
        for (const [limit, value] of Object.entries(o)) rows.push({ tenant, limit, value: scalar(value) });
      }
      return [
        { title: 'Overrides in force', note: s.file ? `From ${s.file} (-runtime-config.file), reloaded on its period.` : 'No -runtime-config.file: every tenant has the defaults.', rows },
        { title: 'Defaults (from the limit flags)', fields: Object.fromEntries(Object.entries(s.defaults).map(([k, v]) => [k, scalar(v)])) },
      ];
    },
  };
}

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
          rows: r.partitions.map((p) => ({ partition: p.id, state: p.state, since: p.state_timestamp, ownership: p.ownership, owners: p.owners.map((o) => o.id).join(', ') })),
        },
        {
          title: 'Owners',
          rows: r.partitions.flatMap((p) => p.owners.map((o) => ({ owner: o.id, partition: p.id, zone: o.zone, address: o.addr, healthy: o.healthy, 'heartbeat age (s)': o.heartbeat_age_seconds, registered: o.registered }))),
        },
      ];
    },
  };
}

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

export function ingesterPage(ingester: Ingester): StatusPage {
  return {
    id: 'ingester',
    title: 'Ingester',
    module: 'ingester',
    sections: async () => {
      const s = await ingester.status();
      return [
        {
          title: `${s.id}: partition ${s.partition}`,
          fields: {
            zone: s.zone,
            partition: s.partition,
            state: s.state,
            ready: s.notReadyReason === undefined,
            'not ready because': s.notReadyReason ?? null,
            'replay progress': s.replay ? `${s.replay.consumed} of ${s.replay.end} records` : null,
            'lag (records)': s.lagRecords ?? null,
            'next offset': s.nextOffset ?? null,
            'committed offset': s.committedOffset,
            'in-memory series': s.series,
            tenants: s.tenants,
            'local blocks': s.localBlocks,
          },
        },
      ];
    },
  };
}

export function tenantsPage(ingester: Ingester): StatusPage {
  return {
    id: 'tenants',
    title: 'Tenants',
    module: 'ingester',
    sections: () => [
      {
        title: 'Tenants in this ingester',
        note: `Partition ${ingester.identity.partition} only; /api/v1/user_stats sums one ingester per partition for a tenant. Ingestion rate: samples/s, a 15s EWMA.`,
        rows: ingester.allUserStats().map((u) => ({ tenant: u.tenant, 'active series': u.numSeries, 'ingestion rate': u.ingestionRate, 'API ingestion rate': u.apiIngestionRate, 'rule ingestion rate': u.ruleIngestionRate })),
      },
    ],
  };
}

export function compactorPage(compactor: Compactor): StatusPage {
  return {
    id: 'compactor',
    title: 'Compactor',
    module: 'compactor',
    sections: async () => {
      const s = await compactor.status();
      const run = (r: typeof s.lastCompaction): Record<string, StatusValue> =>
        r ? { started: iso(r.startedAt), finished: r.finishedAt === undefined ? 'running' : iso(r.finishedAt), tenants: r.tenants, 'failed tenants': r.failedTenants } : { started: 'not yet' };
      return [
        { title: 'Last compaction', fields: run(s.lastCompaction) },
        { title: 'Last cleanup', fields: run(s.lastCleanup) },
        {
          title: 'Blocks by tenant',
          note: "From each tenant's bucket index.",
          rows: s.tenants.map((t) => ({
            tenant: t.tenant,
            blocks: t.blocks,
            'marked for deletion': t.markedForDeletion,
            'max level': t.maxCompactionLevel,
            from: iso(t.minTime),
            to: iso(t.maxTime),
            'index updated': iso(t.indexUpdatedAt),
          })),
        },
      ];
    },
  };
}

function scalar(v: unknown): StatusValue {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || v === null ? v : JSON.stringify(v);
}
