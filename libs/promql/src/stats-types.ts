// The shapes of a query's statistics (Prometheus' util/stats, Mimir's fetched figures), apart
// from the code that counts them so the result types can name them without an import cycle.

/** Seconds spent, by Prometheus' timers. */
export interface QueryTimings {
  evalTotalTime: number;
  resultSortTime: number;
  queryPreparationTime: number;
  innerEvalTime: number;
  execQueueTime: number;
  execTotalTime: number;
}

/** Prometheus' querySamples; the per-step lists only with stats=all. */
export interface QuerySamples {
  /** [unix seconds, samples] per step. */
  totalQueryableSamplesPerStep?: [number, number][];
  totalQueryableSamples: number;
  samplesReadPerStep?: [number, number][];
  samplesRead: number;
  seriesTouched: number;
  peakSamples: number;
}

/** What the query took from storage (Mimir's query stats: fetched series, chunks, chunk bytes, sharded queries). */
export interface FetchedStats {
  fetchedSeriesCount: number;
  fetchedChunksCount: number;
  fetchedChunkBytes: number;
  /** Samples the fetched series hold in the selectors' windows (estimated for chunks not decoded). */
  fetchedSamplesCount: number;
  /** Shards the engine answered the query in (0: unsharded). */
  shardedQueries: number;
}

export interface QueryStats {
  timings: QueryTimings;
  /** Present when sample statistics were asked for (stats=true or all). */
  samples?: QuerySamples;
  fetched: FetchedStats;
}

/** Statistics a query wants: timings and fetched figures; with Prometheus' sample counts (stats=true); and per step (stats=all). */
export type StatsLevel = 'fetched' | 'basic' | 'all';
