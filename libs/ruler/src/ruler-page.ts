// The UI's ruler page: this ruler in the ruler ring and the rule groups it
// evaluates, read from the ring and the ruler when the page is opened.

import type { StatusPage } from '@strata/ui';
import type { Ruler } from './ruler.ts';
import type { RulerRing } from './ruler-ring.ts';

export function rulerPage(instanceId: string, ring: RulerRing, ruler: Ruler): StatusPage {
  return {
    id: 'ruler',
    title: 'Ruler',
    module: 'ruler',
    sections: () => [
      { title: 'This ruler', fields: { instance: instanceId, 'healthy rulers': ring.healthy().join(', ') || 'none yet' } },
      {
        title: 'Rule groups evaluated here',
        rows: ruler.allGroups().map((g) => ({
          tenant: g.tenant,
          namespace: g.namespace,
          group: g.name,
          rules: g.rules.length,
          interval: `${g.intervalMs / 1000}s`,
          'last evaluation': g.lastEvaluation > 0 ? new Date(g.lastEvaluation).toISOString() : 'not yet',
        })),
      },
    ],
  };
}
