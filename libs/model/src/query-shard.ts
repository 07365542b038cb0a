// Query shards (Mimir's `__query_shard__="<i>_of_<n>"` matcher): a select with it reads only
// the series whose label hash falls in shard i of n, so one query can be answered in parts
// that each hold a share of its series. Every storage strips the matcher before its own
// matching and keeps the series of the shard; a storage that ignored it would match nothing.

import { StrataError } from '@strata/errors';
import { hashLabels } from './labels-hash.ts';
import type { Labels } from './labels.ts';
import type { Matcher } from './matchers.ts';

export const QUERY_SHARD_LABEL = '__query_shard__';

/** Shard `index` (0-based) of `count`. */
export interface QueryShard {
  index: number;
  count: number;
}

/** The matcher selecting shard `index` (0-based) of `count`: `__query_shard__="<index+1>_of_<count>"`. */
export function queryShardMatcher(shard: QueryShard): Matcher {
  return { name: QUERY_SHARD_LABEL, type: '=', value: `${shard.index + 1}_of_${shard.count}` };
}

/** The matchers without a shard matcher, and the shard it names; a malformed one is a bad-input error. */
export function splitQueryShard(matchers: readonly Matcher[]): { matchers: Matcher[]; shard: QueryShard | undefined } {
  let shard: QueryShard | undefined;
  const rest: Matcher[] = [];
  for (const m of matchers) {
    if (m.name !== QUERY_SHARD_LABEL) {
      rest.push(m);
      continue;
    }
    const parsed = m.type === '=' ? /^(\d+)_of_(\d+)$/.exec(m.value) : null;
    const index = parsed ? Number(parsed[1]) - 1 : -1;
    const count = parsed ? Number(parsed[2]) : 0;
    if (shard !== undefined || index < 0 || index >= count) {
      throw new StrataError(
        'invalid-query-shard',
        'bad-input',
        `invalid ${QUERY_SHARD_LABEL} matcher ${m.type}"${m.value}": expected one ${QUERY_SHARD_LABEL}="<i>_of_<n>" with 1 <= i <= n`,
      );
    }
    shard = { index, count };
  }
  return { matchers: shard === undefined ? (matchers as Matcher[]) : rest, shard };
}

/** Whether a series of label hash `hash` (hashLabels) is in the shard. */
export function inQueryShard(hash: number, shard: QueryShard): boolean {
  return hash % shard.count === shard.index;
}

export function labelsInQueryShard(labels: Labels, shard: QueryShard): boolean {
  return inQueryShard(hashLabels(labels), shard);
}
