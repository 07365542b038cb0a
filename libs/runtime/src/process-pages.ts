// The process' own status pages: its services as the manager runs them, /ready's
// answer, its memory against the budget, and the effective flags. Presentation
// only; every value is read when the page is opened.

import { getHeapStatistics } from 'node:v8';
import { describeBudget, formatBytes, redactConfig, type MemoryBudget, type ServiceState } from '@strata/service';
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
