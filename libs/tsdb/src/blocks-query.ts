// Queries over several blocks of one tenant (an ingester's local blocks, a
// querier's bucket blocks): only blocks overlapping the time range are asked,
// and their answers are merged so zone copies and overlaps count once.

import type { Matcher, Series } from '@strata/model';
import type { BlockReader } from './block-reader.ts';
import { compareUtf8 } from './encoding.ts';
import { mergeSeriesSets } from './merge-series.ts';

/** True if the block may hold samples in [mint, maxt] (inclusive; block ranges are [minTime, maxTime)). */
export function blockOverlaps(b: BlockReader, mint: number, maxt: number): boolean {
  return b.meta === undefined || (b.meta.minTime <= maxt && mint < b.meta.maxTime);
}

export async function selectBlocks(blocks: readonly BlockReader[], matchers: Matcher[], mint: number, maxt: number): Promise<Series[]> {
  const hits = blocks.filter((b) => blockOverlaps(b, mint, maxt));
  return mergeSeriesSets(await Promise.all(hits.map((b) => b.select(matchers, mint, maxt))));
}

export async function blocksLabelNames(blocks: readonly BlockReader[], matchers: Matcher[], mint: number, maxt: number): Promise<string[]> {
  const hits = blocks.filter((b) => blockOverlaps(b, mint, maxt));
  return mergeSorted(await Promise.all(hits.map((b) => b.labelNames(matchers))));
}

export async function blocksLabelValues(
  blocks: readonly BlockReader[],
  name: string,
  matchers: Matcher[],
  mint: number,
  maxt: number,
): Promise<string[]> {
  const hits = blocks.filter((b) => blockOverlaps(b, mint, maxt));
  return mergeSorted(await Promise.all(hits.map((b) => b.labelValues(name, matchers))));
}

function mergeSorted(lists: string[][]): string[] {
  if (lists.length === 1) return lists[0];
  return [...new Set(lists.flat())].sort(compareUtf8);
}
