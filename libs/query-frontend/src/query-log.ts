// The queries the frontend is running and the last ones it answered, for its UI page (as
// VictoriaMetrics' active and top queries): who asked what, for how long, where it ran.

export interface LoggedQuery {
  tenant: string;
  path: string;
  query: string;
  startedAt: number;
  wallMs?: number;
  queueMs?: number;
  querier?: string;
  status?: number;
  /** What the querier fetched for it (query and query_range). */
  series?: number;
  samples?: number;
  chunks?: number;
  chunkBytes?: number;
  shards?: number;
}

/** Answered queries kept for the slowest list. */
const RECENT = 500;

export class QueryLog {
  private readonly running = new Set<LoggedQuery>();
  private readonly recent: LoggedQuery[] = [];

  begin(tenant: string, path: string, query: string, now: number): LoggedQuery {
    const q: LoggedQuery = { tenant, path, query, startedAt: now };
    this.running.add(q);
    return q;
  }

  end(
    q: LoggedQuery,
    outcome: Pick<LoggedQuery, 'wallMs' | 'queueMs' | 'querier' | 'status' | 'series' | 'samples' | 'chunks' | 'chunkBytes' | 'shards'>,
  ): void {
    this.running.delete(q);
    Object.assign(q, outcome);
    this.recent.push(q);
    if (this.recent.length > RECENT) this.recent.shift();
  }

  active(): LoggedQuery[] {
    return [...this.running].sort((a, b) => a.startedAt - b.startedAt);
  }

  /** The `n` slowest of the last RECENT answered queries, slowest first. */
  slowest(n: number): LoggedQuery[] {
    return [...this.recent].sort((a, b) => (b.wallMs ?? 0) - (a.wallMs ?? 0)).slice(0, n);
  }
}
