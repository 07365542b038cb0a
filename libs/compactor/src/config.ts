// Compactor flags (Mimir's -compactor.* names). Defaults live here.

import { z } from 'zod';
import { duration, parseDuration } from '@strata/service';

export const compactorConfigShape = {
  /** Comma-separated block ranges, the first being the ingesters' (-blocks-storage.tsdb.block-ranges-period); yields ms. */
  'compactor.block-ranges': z
    .string()
    .default('2h,12h,24h')
    .transform((s, ctx) => {
      try {
        const out = s.split(',').map((x) => parseDuration(x.trim()));
        if (out.length === 0 || out.some((x, i) => x <= 0 || (i > 0 && x <= out[i - 1]))) throw new Error('ranges must be positive and ascending');
        return out;
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    }),
  /** Local scratch space: source blocks are downloaded and the new block written here. */
  'compactor.data-dir': z.string().min(1).default('./data/compactor'),
  /** How often tenants are compacted; yields ms. */
  'compactor.compaction-interval': duration('1h'),
  /** How often bucket indexes are rewritten and retention and deletions applied; yields ms. */
  'compactor.cleanup-interval': duration('15m'),
  /** Blocks marked for deletion are deleted this long after the mark (queriers stop reading them before); yields ms. */
  'compactor.deletion-delay': duration('12h'),
  /** Level-1 blocks (from the ingesters) younger than this are not compacted yet, so both zones' copies are in; yields ms. */
  'compactor.first-level-compaction-wait-period': duration('25m'),
  /** Blocks whose newest sample is older than this are marked for deletion (0s: keep forever); yields ms. */
  'compactor.blocks-retention-period': duration('0s'),
  /** Per-tenant retention, overriding the default: tenant=duration,... */
  'compactor.tenant-blocks-retention-periods': z.string().default(''),
  /** A block without meta.json whose files are older than this is a failed upload and is deleted (0s: never); yields ms. */
  'compactor.partial-block-deletion-delay': duration('1d'),
  /** Only these tenants (comma-separated) are compacted; empty: every tenant found in the bucket. */
  'compactor.enabled-tenants': z.string().default(''),
};

export type CompactorConfig = z.infer<z.ZodObject<typeof compactorConfigShape>>;

/** tenant=duration,... into a lookup with the default for tenants not listed. */
export function retentionByTenant(defaultMs: number, perTenant: string): (tenant: string) => number {
  const m = new Map<string, number>();
  for (const entry of perTenant.split(',').map((e) => e.trim()).filter((e) => e !== '')) {
    const eq = entry.indexOf('=');
    if (eq <= 0) throw new Error(`invalid -compactor.tenant-blocks-retention-periods entry "${entry}": expected tenant=duration`);
    m.set(entry.slice(0, eq), parseDuration(entry.slice(eq + 1)));
  }
  return (tenant) => m.get(tenant) ?? defaultMs;
}
