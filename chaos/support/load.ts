// Steady remote-write load the way Prometheus' queue manager sends it: series are sharded,
// each shard sends one batch at a time (so samples stay ordered per series) and retries 5xx,
// 429 and network errors with capped exponential backoff until acknowledged. Only a 2xx puts
// samples into the ledger. Requests go round-robin over the distributors, like a Service would.

import { compressBody, encodeWriteRequest, type SeriesInput } from '@strata/remote-write';
import type { DrillSeries } from './drill-series.ts';
import { pushOnce } from './http-client.ts';
import type { Ledger, LedgerSample } from './ledger.ts';
import { sleep } from './time.ts';

export interface LoadOptions {
  series: DrillSeries;
  ledger: Ledger;
  tenant: string;
  /** Current distributor base URLs. */
  distributors: () => string[];
  /** One sample per series every intervalMs. */
  intervalMs: number;
  shards: number;
  maxSamplesPerSend: number;
  /** A shard sends a partial batch once its oldest sample waited this long (batch_send_deadline). */
  batchSendDeadlineMs: number;
  minBackoffMs: number;
  maxBackoffMs: number;
  pushTimeoutMs: number;
}

interface Pending extends LedgerSample {
  enqueuedAt: number;
}

interface Shard {
  index: number;
  queue: Pending[];
  inFlight: Pending[] | undefined;
}

export interface LoadStats {
  generated_samples: number;
  acked_samples: number;
  rejected_samples: number;
  unacked_samples: number;
  pushes_acked: number;
  push_attempts: number;
  push_errors: Record<string, number>;
  max_backlog_samples: number;
  /** Longest a successful push took (a 2xx after a slow Kafka ack). */
  max_push_latency_ms: number;
  /** Longest a sample waited from generation to acknowledgement (retries included). */
  max_sample_ack_delay_ms: number;
  /** Longest stretch with no push acknowledged at all. */
  max_ack_gap_ms: number;
  /**
   * Longest push stall: the longest one batch took from its first push attempt to its 2xx,
   * retries and backoff included (a batch still unacknowledged counts until now).
   */
  longest_push_stall_ms: number;
  /** When the longest stall's first attempt was sent (ISO), to place it among the drill's events. */
  longest_push_stall_from: string | null;
  /** What the distributors answered retried pushes with (5xx/429 bodies, digits folded to N), with counts; at most 10. */
  retry_reasons: Record<string, number>;
  rejections: string[];
  target_samples_per_second: number;
}

export class LoadGenerator {
  private readonly shards: Shard[];
  private ticker: NodeJS.Timeout | undefined;
  private tick = 0;
  private firstTickAt = 0;
  private generating = false;
  private aborted = false;
  private workers: Promise<void>[] = [];
  private generated = 0;
  private pushesAcked = 0;
  private attempts = 0;
  private maxBacklog = 0;
  private maxPushLatency = 0;
  private maxAckDelay = 0;
  private maxAckGap = 0;
  private lastAckAt = 0;
  private longestStall = 0;
  private longestStallFrom = 0;
  /** First attempt of each batch in flight, by shard. */
  private readonly inFlightSince = new Map<number, number>();
  private readonly reasons: Record<string, number> = {};
  private readonly errors: Record<string, number> = {};
  private readonly rejections: string[] = [];

  private readonly opts: LoadOptions;

  constructor(opts: LoadOptions) {
    this.opts = opts;
    this.shards = Array.from({ length: opts.shards }, (_, index) => ({ index, queue: [], inFlight: undefined }));
  }

  start(): void {
    const { intervalMs } = this.opts;
    // Timestamps on the interval grid, as a scrape would give; generation catches up if the loop lags.
    this.firstTickAt = Math.ceil(Date.now() / intervalMs) * intervalMs;
    this.generating = true;
    this.lastAckAt = Date.now();
    this.ticker = setInterval(() => this.generateDue(), Math.min(100, intervalMs));
    this.workers = this.shards.map((s) => this.runShard(s));
  }

  /** Stops producing new samples; shards keep sending what is queued. */
  stopGenerating(): void {
    this.generating = false;
    clearInterval(this.ticker);
  }

  /** Waits until everything generated was sent (acked or rejected), or gives up after timeoutMs. */
  async drain(timeoutMs: number): Promise<void> {
    this.stopGenerating();
    const deadline = Date.now() + timeoutMs;
    while (this.backlog() > 0 && Date.now() < deadline) await sleep(100);
    this.aborted = true;
    await Promise.all(this.workers);
  }

  backlog(): number {
    return this.shards.reduce((n, s) => n + s.queue.length + (s.inFlight?.length ?? 0), 0);
  }

  stats(): LoadStats {
    const { ledger } = this.opts;
    return {
      generated_samples: this.generated,
      acked_samples: ledger.acked,
      rejected_samples: ledger.rejected,
      unacked_samples: this.generated - ledger.acked - ledger.rejected,
      pushes_acked: this.pushesAcked,
      push_attempts: this.attempts,
      push_errors: { ...this.errors },
      max_backlog_samples: this.maxBacklog,
      max_push_latency_ms: this.maxPushLatency,
      max_sample_ack_delay_ms: this.maxAckDelay,
      max_ack_gap_ms: Math.max(this.maxAckGap, this.generating ? Date.now() - this.lastAckAt : 0),
      ...this.longestStallNow(),
      retry_reasons: { ...this.reasons },
      rejections: [...this.rejections],
      target_samples_per_second: Math.round((this.opts.series.count * 1000) / this.opts.intervalMs),
    };
  }

  /** The longest stall so far, counting batches still unacknowledged until now. */
  private longestStallNow(): { longest_push_stall_ms: number; longest_push_stall_from: string | null } {
    let ms = this.longestStall;
    let from = this.longestStallFrom;
    for (const t of this.inFlightSince.values()) {
      if (Date.now() - t > ms) [ms, from] = [Date.now() - t, t];
    }
    return { longest_push_stall_ms: ms, longest_push_stall_from: from === 0 ? null : new Date(from).toISOString() };
  }

  private generateDue(): void {
    if (!this.generating) return;
    const { series, intervalMs, shards } = this.opts;
    const now = Date.now();
    for (;;) {
      const t = this.firstTickAt + this.tick * intervalMs;
      if (t > now) break;
      for (let i = 0; i < series.count; i++) {
        this.shards[i % shards].queue.push({ series: i, t, v: series.value(i, this.tick), enqueuedAt: now });
      }
      this.generated += series.count;
      this.tick++;
    }
    this.maxBacklog = Math.max(this.maxBacklog, this.backlog());
  }

  private async runShard(shard: Shard): Promise<void> {
    const { maxSamplesPerSend, batchSendDeadlineMs } = this.opts;
    while (!this.aborted) {
      const q = shard.queue;
      const due = q.length >= maxSamplesPerSend || (q.length > 0 && (!this.generating || Date.now() - q[0].enqueuedAt >= batchSendDeadlineMs));
      if (!due) {
        await sleep(25);
        continue;
      }
      shard.inFlight = q.splice(0, maxSamplesPerSend);
      await this.send(shard, shard.inFlight);
      shard.inFlight = undefined;
    }
  }

  private async send(shard: Shard, batch: Pending[]): Promise<void> {
    const firstAttemptAt = Date.now();
    this.inFlightSince.set(shard.index, firstAttemptAt);
    try {
      await this.sendUntilAnswered(shard, batch, firstAttemptAt);
    } finally {
      this.inFlightSince.delete(shard.index);
    }
  }

  private async sendUntilAnswered(shard: Shard, batch: Pending[], firstAttemptAt: number): Promise<void> {
    const { ledger, tenant, minBackoffMs, maxBackoffMs, pushTimeoutMs } = this.opts;
    const body = compressBody(encodeWriteRequest({ timeseries: this.toSeries(batch) }));
    let backoff = minBackoffMs;
    for (let attempt = 0; !this.aborted; attempt++) {
      const urls = this.opts.distributors();
      const url = urls[(shard.index + attempt) % urls.length];
      this.attempts++;
      const sentAt = Date.now();
      const outcome = await pushOnce(url, body, tenant, pushTimeoutMs);
      if (outcome.kind === 'acked') {
        const now = Date.now();
        ledger.ack(batch, now);
        this.pushesAcked++;
        this.maxPushLatency = Math.max(this.maxPushLatency, now - sentAt);
        this.maxAckDelay = Math.max(this.maxAckDelay, now - batch[0].enqueuedAt);
        this.maxAckGap = Math.max(this.maxAckGap, now - this.lastAckAt);
        if (now - firstAttemptAt > this.longestStall) {
          this.longestStall = now - firstAttemptAt;
          this.longestStallFrom = firstAttemptAt;
        }
        this.lastAckAt = now;
        return;
      }
      this.errors[outcome.reason] = (this.errors[outcome.reason] ?? 0) + 1;
      if (outcome.kind === 'retry' && outcome.body) {
        const key = `${outcome.reason}: ${outcome.body.replace(/\d+/g, 'N')}`;
        if (key in this.reasons || Object.keys(this.reasons).length < 10) this.reasons[key] = (this.reasons[key] ?? 0) + 1;
      }
      if (outcome.kind === 'rejected') {
        ledger.reject(batch);
        if (this.rejections.length < 10) this.rejections.push(`${outcome.reason}: ${outcome.body}`);
        return;
      }
      await sleep(backoff);
      backoff = Math.min(backoff * 2, maxBackoffMs);
    }
    // Aborted at the end of the drill: the batch stays unacked (counted in unacked_samples).
  }

  private toSeries(batch: Pending[]): SeriesInput[] {
    const bySeries = new Map<number, SeriesInput>();
    for (const s of batch) {
      let ts = bySeries.get(s.series);
      if (!ts) bySeries.set(s.series, (ts = { labels: this.opts.series.labels(s.series), samples: [] }));
      ts.samples.push({ value: s.v, timestamp: s.t });
    }
    return [...bySeries.values()];
  }
}
