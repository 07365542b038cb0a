// The per-tenant query limits the frontend enforces before a query is queued (Mimir's query
// blocker and max-total-query-length middlewares): a blocked query or a range longer than the
// tenant's limit is a 400 naming the limit, and never reaches a querier.

import { StrataError } from '@strata/errors';
import type { BlockedQuery } from '@strata/limits';
import { compileRegex } from '@strata/model';
import { formatDuration } from '@strata/service';

export interface FrontendQueryLimits {
  /** Range queries longer than this (end - start, ms) are refused; 0: no limit. */
  maxTotalQueryLengthMs: number;
  blockedQueries: readonly BlockedQuery[];
}

/** What the limits look at: the query and, for a range query, its range and step (ms). */
export interface QueryShape {
  query: string;
  /** end - start; 0 for an instant query. */
  rangeMs: number;
  stepMs: number;
}

/** The refusal for `q` under the tenant's limits, or undefined when it may run. */
export function queryRefusal(q: QueryShape, limits: FrontendQueryLimits): StrataError | undefined {
  const blocked = limits.blockedQueries.find((b) => blocks(b, q));
  if (blocked !== undefined) {
    const reason = blocked.reason === '' ? '' : ` ${blocked.reason}`;
    return new StrataError('query-blocked', 'bad-input', `the request has been blocked by the cluster administrator${reason} (err-strata-query-blocked)`);
  }
  const max = limits.maxTotalQueryLengthMs;
  if (max > 0 && q.rangeMs > max) {
    return new StrataError(
      'max-total-query-length',
      'bad-input',
      `the total query time range exceeds the limit (query length: ${formatDuration(q.rangeMs)}, limit: ${formatDuration(max)}) (err-strata-max-total-query-length); ` +
        'query a shorter range, or ask for max_total_query_length to be raised',
    );
  }
  return undefined;
}

/** Whether rule `b` blocks `q`: its pattern matches (literally, or as a regex) and its range and step conditions hold. */
function blocks(b: BlockedQuery, q: QueryShape): boolean {
  const query = q.query.trim();
  const matches = b.pattern.trim() === query || (b.regex && compileRegex(b.pattern).matches(q.query));
  if (!matches) return false;
  if (b.timeRangeLongerThanMs > 0 && (q.rangeMs === 0 || q.rangeMs <= b.timeRangeLongerThanMs)) return false;
  if (b.stepSizeShorterThanMs > 0 && (q.stepMs === 0 || q.stepMs >= b.stepSizeShorterThanMs)) return false;
  return true;
}
