// Compactor flags (Mimir's -compactor.* names). Defaults live here.

import { z } from 'zod';
import { duration, parseDuration } from '@strata/service';

export const compactorConfigShape = {
  // Yields ms.
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
    })
    .describe("Comma-separated compaction levels, ascending; the first is the ingesters' -blocks-storage.tsdb.block-ranges-period."),
  'compactor.data-dir': z
    .string()
    .min(1)
    .default('./data/compactor')
    .describe('Scratch space: source blocks are downloaded and the new block written here (default <data-dir>/compactor).'),
  // Durations yield ms.
  'compactor.compaction-interval': duration('1h').describe('How often tenants are compacted.'),
  'compactor.cleanup-interval': duration('15m').describe('How often bucket indexes are rewritten and retention and deletions applied.'),
  'compactor.deletion-delay': duration('12h').describe('Blocks marked for deletion are deleted this long after the mark (queriers stop reading them first).'),
  'compactor.first-level-compaction-wait-period': duration('25m').describe(
    "Ingesters' blocks younger than this are not compacted yet, so both zones' copies are in.",
  ),
  'compactor.blocks-retention-period': duration('0s')
    .describe('Blocks whose newest sample is older than this are deleted (0s: keep forever).')
    .meta({ yaml: 'limits.compactor_blocks_retention_period' }),
  'compactor.tenant-blocks-retention-periods': z.string().default('').describe('Per-tenant retention overriding the default, as tenant=duration,...'),
  'compactor.partial-block-deletion-delay': duration('1d')
    .describe('A block without meta.json whose files are older than this is a failed upload and is deleted (0s: never).')
    .meta({ yaml: 'limits.compactor_partial_block_deletion_delay' }),
  'compactor.max-block-upload-validation-concurrency': z.coerce
    .number()
    .int()
    .nonnegative()
    .default(1)
    .describe('Uploaded blocks (block-upload API) validated at once; one more /finish is 429 and mimirtool retries. 0: no limit.'),
  'compactor.enabled-tenants': z.string().default('').describe('Only these tenants (comma-separated) are compacted; empty: every tenant in the bucket.'),
};

export type CompactorConfig = z.infer<z.ZodObject<typeof compactorConfigShape>>;

/** tenant=duration,... into a lookup with the default for tenants not listed. */
export function retentionByTenant(defaultMs: number, perTenant: string): (tenant: string) => number {
  const m = new Map<string, number>();
  for (const entry of perTenant
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '')) {
    const eq = entry.indexOf('=');
    if (eq <= 0) throw new Error(`invalid -compactor.tenant-blocks-retention-periods entry "${entry}": expected tenant=duration`);
    m.set(entry.slice(0, eq), parseDuration(entry.slice(eq + 1)));
  }
  return (tenant) => m.get(tenant) ?? defaultMs;
}
