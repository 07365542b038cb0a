// The UI's runtime-overrides page: the per-tenant limits in force and the flag
// defaults under them, read from the Overrides snapshot when the page is opened.

import type { StatusPage, StatusValue } from '@strata/ui';
import type { Overrides } from './overrides.ts';

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
        {
          title: 'Overrides in force',
          note: s.file ? `From ${s.file} (-runtime-config.file), reloaded on its period.` : 'No -runtime-config.file: every tenant has the defaults.',
          rows,
        },
        { title: 'Defaults (from the limit flags)', fields: Object.fromEntries(Object.entries(s.defaults).map(([k, v]) => [k, scalar(v)])) },
      ];
    },
  };
}

/** A limit as the page shows it: lists and objects (relabel configs, spans) as JSON; unset (a flag of another module applies) as that. */
function scalar(v: unknown): StatusValue {
  if (v === undefined) return '(the querier flag)';
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || v === null ? v : JSON.stringify(v);
}
