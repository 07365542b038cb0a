// max_query_lookback (Mimir's): a tenant's queries read no data older than now minus its
// lookback. As Mimir does, a request reaching further back is not refused: its start is moved up.

import type { ExemplarQuerier, LabelValuesParams, MetadataQuerier, Querier, SelectParams } from '@strata/model';

/** The API's querier (api.ts' ApiQuerier). */
type ApiQuerier = Querier & Partial<ExemplarQuerier & MetadataQuerier>;

/** `q` with every read's start moved up to `minTime` (a read wholly before it finds nothing). */
export function clampToLookback(q: ApiQuerier, minTime: number): ApiQuerier {
  const clamp = <P extends SelectParams>(p: P): P => (p.mint < minTime ? { ...p, mint: minTime } : p);
  const out: ApiQuerier = {
    select: async (p: SelectParams) => (p.maxt < minTime ? [] : q.select(clamp(p))),
    labelNames: async (p: SelectParams) => (p.maxt < minTime ? [] : q.labelNames(clamp(p))),
    labelValues: async (p: LabelValuesParams) => (p.maxt < minTime ? [] : q.labelValues(clamp(p))),
  };
  if (q.exemplars) {
    const exemplars = q.exemplars.bind(q);
    out.exemplars = async (p) => (p.maxt < minTime ? [] : exemplars(p.mint < minTime ? { ...p, mint: minTime } : p));
  }
  if (q.metadata) out.metadata = q.metadata.bind(q);
  return out;
}

/**
 * A range query's start moved up to the first step at or after `minTime` (the steps stay on the
 * query's grid); undefined when the whole range is older (Mimir answers that with no series).
 */
export function clampRangeStart(start: number, end: number, step: number, minTime: number): number | undefined {
  if (end < minTime) return undefined;
  if (start >= minTime) return start;
  const moved = start + Math.ceil((minTime - start) / step) * step;
  return moved > end ? undefined : moved;
}
