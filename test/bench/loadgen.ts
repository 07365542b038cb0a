// Remote-write load generator: node-exporter-like series sent like Prometheus'
// queue manager (fixed shard per series, one request in flight per shard,
// retries on 5xx/429), bodies encoded before the clock starts. Sample time
// follows the send schedule, so a rate R over S series is a scrape interval of
// S/R seconds: the M of M×N amplification (N widens the instance set).
//
//   node --import tsx test/bench/loadgen.ts --url http://127.0.0.1:8080/api/v1/push \
//     --series 20000 --amplify 1x1,2x1,4x1,4x2 --step 20s [--protocol v2] [--header X-Scope-OrgID=bench]

import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { WindowEncoder, type EncodedWindow, type EncoderOptions, type Protocol, type WindowSpec } from './encode.ts';
import { EncoderThread } from './encode-worker.ts';
import { RequestLog, percentile } from './latency.ts';
import { sum } from './proc-stats.ts';
import { PROMETHEUS_RETRY, Pusher, ShardQueue, newCounters, sleep, type RetryPolicy, type ShardCounters } from './sender.ts';

/**
 * A phase's windows are encoded before its clock starts up to this many samples (≈ 23 B each held,
 * ≈ 280 MB): every search step (≤ 6 M) and a 45 s ½-max phase up to ≈ 266k samples/s.
 */
const PREENCODE_MAX_SAMPLES = 12_000_000;

export interface LoadGenOptions {
  url: string;
  headers?: Record<string, string>;
  protocol: Protocol;
  /** Live series before widening. */
  series: number;
  /** N of M×N. */
  wide?: number;
  /** The nominal scrape interval the amplification M is relative to; default 15s. */
  intervalMs?: number;
  shards: number;
  samplesPerRequest: number;
  churnShare?: number;
  churnEveryMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Encode on the calling thread (tests); default: a worker thread. */
  inThread?: boolean;
}

export interface PhaseOptions {
  /** Target samples/s. */
  rate: number;
  durationMs: number;
  /**
   * Windows are encoded ahead of sending; by default the whole phase is one window,
   * encoded before the clock starts. Long phases (soak) use shorter windows,
   * the next encoded on the worker thread while the current one is sent.
   */
  windowMs?: number;
  /** Give up on requests not yet sent this long after the phase's planned end; default max(30s, duration). */
  graceMs?: number;
  /** Shards for this phase; default scales with the rate as Prometheus does (see shardsFor), at most the generator's shards. */
  shards?: number;
}

export interface PhaseResult {
  rate: number;
  roundMs: number;
  amplificationM: number;
  amplificationN: number;
  shards: number;
  series: number;
  seriesCreated: number;
  /** Date.now() of the planned start and of the last answer. */
  startedAt: number;
  endedAt: number;
  plannedSamples: number;
  okSamples: number;
  failedSamples: number;
  unsentSamples: number;
  failedRequests: number;
  okRequests: number;
  retries: number;
  statuses: Record<string, number>;
  firstError: string | undefined;
  achievedRate: number;
  maxBehindMs: number;
  /** Time spent sending (retries and backoff included) per sample sent, ms: Prometheus' timePerSample. */
  sendMsPerSample: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  encodeMs: number;
  bodyBytes: number;
  rawBytes: number;
  lastTs: number;
}

export class LoadGenerator {
  readonly log = new RequestLog();
  private readonly encoder: { encode(spec: WindowSpec): Promise<EncodedWindow>; close(): Promise<void> };
  private readonly pusher: Pusher;
  private readonly opts: LoadGenOptions;
  private readonly size: number;
  private nextRound = 0;
  private nextTs = 0;
  private created: number;

  constructor(opts: LoadGenOptions) {
    this.opts = opts;
    const encOpts: EncoderOptions = {
      series: opts.series,
      wide: opts.wide,
      protocol: opts.protocol,
      shards: opts.shards,
      samplesPerRequest: opts.samplesPerRequest,
      churnShare: opts.churnShare,
      churnEveryMs: opts.churnEveryMs,
    };
    if (opts.inThread) {
      const enc = new WindowEncoder(encOpts);
      this.encoder = { encode: async (s) => enc.encode(s), close: async () => undefined };
    } else {
      this.encoder = new EncoderThread(encOpts);
    }
    this.size = Math.max(1, Math.floor(opts.series)) * Math.max(1, Math.floor(opts.wide ?? 1));
    this.created = this.size;
    this.pusher = new Pusher({ url: opts.url, headers: opts.headers, protocol: opts.protocol }, opts.shards, { ...PROMETHEUS_RETRY, ...opts.retry });
  }

  /** Live series (N-widened). */
  get series(): number {
    return this.size;
  }

  /** Series created so far, churned ones included. */
  get seriesCreated(): number {
    return this.created;
  }

  /**
   * Prometheus grows its shard count with throughput until the queues drain; here:
   * one full request per second per shard (so up to ~1s of push latency is absorbed),
   * at most the configured maximum.
   */
  shardsFor(rate: number): number {
    return Math.max(1, Math.min(this.opts.shards, Math.ceil(rate / this.opts.samplesPerRequest)));
  }

  /**
   * The shard count Prometheus' queue manager moves to after a phase (queue_manager.go,
   * calculateDesiredShards, every 10 s): the time spent sending per sample × (the incoming rate +
   * 5 % of the backlog per second), rounded up; no change within ±30 % of the current count.
   * Bounded by the generator's shards.
   */
  desiredShards(current: number, r: PhaseResult): number {
    const backlogSamples = (r.maxBehindMs / 1000) * r.rate;
    const desired = Math.ceil((r.sendMsPerSample / 1000) * (r.rate + 0.05 * backlogSamples));
    if (desired >= current * 0.7 && desired <= current * 1.3) return current;
    return Math.max(1, Math.min(this.opts.shards, desired));
  }

  /** The sample-time spacing of a rate: S/R seconds, whole ms. */
  roundMsFor(rate: number): number {
    return Math.max(1, Math.round((this.size * 1000) / rate));
  }

  async run(p: PhaseOptions): Promise<PhaseResult> {
    const roundMs = this.roundMsFor(p.rate);
    const rate = (this.size * 1000) / roundMs;
    const totalRounds = Math.max(1, Math.round(p.durationMs / roundMs));
    const perWindow = Math.max(1, Math.min(totalRounds, Math.round((p.windowMs ?? p.durationMs) / roundMs)));
    const windows = Math.ceil(totalRounds / perWindow);
    const firstRound = this.nextRound;
    const tsBase = Math.max(this.nextTs, Date.now());
    this.nextRound += totalRounds;
    this.nextTs = tsBase + totalRounds * roundMs;
    const shards = p.shards ?? this.shardsFor(rate);
    const spec = (k: number): WindowSpec => ({
      shards,
      firstRound: firstRound + k * perWindow,
      rounds: Math.min(perWindow, totalRounds - k * perWindow),
      tsStart: tsBase + k * perWindow * roundMs,
      roundMs,
    });

    // Windows are encoded before the clock starts while they fit PREENCODE_MAX_SAMPLES (every
    // search step and most ½-max phases), so the encoder's CPU does not compete with the target's
    // on a small machine; longer phases encode each further window while the one before is sent.
    const t0 = performance.now();
    const ready: EncodedWindow[] = [];
    let readySamples = 0;
    do {
      const w = await this.encoder.encode(spec(ready.length));
      ready.push(w);
      readySamples += w.totalSamples;
    } while (ready.length < windows && readySamples + spec(ready.length).rounds * this.size <= PREENCODE_MAX_SAMPLES);
    const encodeMs = performance.now() - t0;

    const queues = Array.from({ length: shards }, () => new ShardQueue());
    const counters: ShardCounters[] = Array.from({ length: shards }, () => newCounters());
    const start = performance.now() + 20;
    const startedAt = Date.now() + 20;
    const plannedEnd = start + totalRounds * roundMs;
    this.pusher.setDeadline(plannedEnd + (p.graceMs ?? Math.max(30_000, p.durationMs)));
    const logFrom = this.log.length;
    let plannedSamples = 0;
    let bodyBytes = 0;
    let rawBytes = 0;
    let lastTs = tsBase;
    const enqueue = (w: EncodedWindow, k: number): void => {
      const offset = start + k * perWindow * roundMs;
      for (let i = 0; i < w.lengths.length; i++) {
        const body = w.data.subarray(w.offsets[i], w.offsets[i] + w.lengths[i]);
        queues[w.shard[i]].push({ body, samples: w.samples[i], due: offset + w.due[i] });
      }
      plannedSamples += w.totalSamples;
      bodyBytes += w.data.length;
      rawBytes += w.rawBytes;
      lastTs = Math.max(lastTs, w.lastTs);
      this.created = w.seriesCreated;
    };
    ready.forEach(enqueue);
    const loops = queues.map((q, s) => this.pusher.runShard(q, this.log, counters[s]));
    const producer = (async () => {
      try {
        for (let k = ready.length; k < windows; k++) {
          // One window of lead: encode window k once window k-1 started sending.
          const lead = start + (k - 1) * perWindow * roundMs - performance.now();
          if (lead > 0) await sleep(lead);
          enqueue(await this.encoder.encode(spec(k)), k);
        }
      } finally {
        for (const q of queues) q.close();
      }
    })();
    await producer;
    const unsent = (await Promise.all(loops)).reduce((a, b) => a + b, 0);
    const endedAt = Date.now();

    let retries = 0;
    let maxBehindMs = 0;
    let lastSendAt = 0;
    let firstError: string | undefined;
    const statuses: Record<string, number> = {};
    for (const c of counters) {
      retries += c.retries;
      maxBehindMs = Math.max(maxBehindMs, c.maxBehindMs);
      lastSendAt = Math.max(lastSendAt, c.lastSendAt);
      firstError ??= c.firstError;
      for (const [k, v] of c.statuses) statuses[k] = (statuses[k] ?? 0) + v;
    }
    const slice = this.log.slice(-Infinity, Infinity, logFrom);
    // Throughput over the schedule, stretched when the target held the shards back (a late last send);
    // tail latency is judged by p99, not here.
    const seconds = Math.max(0.001, Math.max(plannedEnd, lastSendAt) - start) / 1000;
    return {
      rate,
      roundMs,
      amplificationM: (this.opts.intervalMs ?? 15_000) / roundMs,
      amplificationN: Math.max(1, Math.floor(this.opts.wide ?? 1)),
      shards,
      series: this.size,
      seriesCreated: this.created,
      startedAt,
      endedAt,
      plannedSamples,
      okSamples: slice.okSamples,
      failedSamples: slice.failedSamples,
      unsentSamples: unsent,
      failedRequests: slice.failedRequests,
      okRequests: slice.okRequests,
      retries,
      statuses,
      firstError,
      achievedRate: slice.okSamples / seconds,
      maxBehindMs,
      sendMsPerSample: sum(slice.latencies) / Math.max(1, slice.okSamples),
      p50: percentile(slice.latencies, 50),
      p90: percentile(slice.latencies, 90),
      p99: percentile(slice.latencies, 99),
      max: slice.latencies.length > 0 ? slice.latencies[slice.latencies.length - 1] : NaN,
      encodeMs,
      bodyBytes,
      rawBytes,
      lastTs,
    };
  }

  async close(): Promise<void> {
    this.pusher.close();
    await this.encoder.close();
  }
}

export function formatPhase(r: PhaseResult): string {
  const ms = (v: number) => (Number.isFinite(v) ? `${v.toFixed(v < 10 ? 1 : 0)}ms` : '-');
  const parts = [
    `target ${Math.round(r.rate).toLocaleString('en-US')}/s`,
    `M×N ${r.amplificationM.toFixed(1)}×${r.amplificationN}`,
    `${r.shards} shards`,
    `achieved ${Math.round(r.achievedRate).toLocaleString('en-US')}/s`,
    `ok ${r.okSamples}/${r.plannedSamples}`,
    `failed ${r.failedSamples}`,
    `unsent ${r.unsentSamples}`,
    `retries ${r.retries}`,
    `p50 ${ms(r.p50)} p99 ${ms(r.p99)} max ${ms(r.max)}`,
    `behind ${ms(r.maxBehindMs)}`,
    `encode ${ms(r.encodeMs)}`,
    `${(r.bodyBytes / Math.max(1, r.plannedSamples)).toFixed(1)} B/sample sent`,
  ];
  return parts.join(' | ') + (r.firstError ? `\n    first error: ${r.firstError}` : '');
}

// ---- CLI ----

export function parseDuration(s: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(s.trim());
  if (!m) throw new Error(`bad duration ${s}; use e.g. 500ms, 20s, 10m, 1h`);
  const n = Number(m[1]);
  return n * ({ ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] ?? 's'] ?? 1000);
}

/** "5%/10m" → share 0.05 every 10 minutes. */
export function parseChurn(s: string): { share: number; everyMs: number } {
  const m = /^(\d+(?:\.\d+)?)%\/(.+)$/.exec(s.trim());
  if (!m) throw new Error(`bad churn ${s}; use e.g. 5%/10m`);
  return { share: Number(m[1]) / 100, everyMs: parseDuration(m[2]) };
}

async function cli(argv: string[]): Promise<void> {
  const args = new Map<string, string[]>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${a}`);
    const [k, inline] = a.slice(2).split(/=(.*)/s, 2);
    const v = inline ?? (argv[i + 1] && !argv[i + 1].startsWith('--') ? argv[++i] : 'true');
    args.set(k, [...(args.get(k) ?? []), v]);
  }
  const get = (k: string, d?: string) => args.get(k)?.at(-1) ?? d;
  const url = get('url');
  if (!url) throw new Error('--url is required (e.g. http://127.0.0.1:8080/api/v1/push)');
  const headers: Record<string, string> = {};
  for (const h of args.get('header') ?? []) {
    const [k, v] = h.split(/=(.*)/s, 2);
    headers[k] = v ?? '';
  }
  const churn = get('churn') ? parseChurn(get('churn')!) : undefined;
  const intervalMs = parseDuration(get('interval', '15s')!);
  const series = Number(get('series', '10000'));
  const steps = (get('amplify', '1x1') ?? '1x1').split(',').map((s) => {
    const m = /^(\d+(?:\.\d+)?)x(\d+)$/.exec(s.trim());
    if (!m) throw new Error(`bad --amplify ${s}; use MxN, e.g. 4x2`);
    return { m: Number(m[1]), n: Number(m[2]) };
  });
  const stepMs = parseDuration(get('step', '20s')!);
  for (const st of steps) {
    const gen = new LoadGenerator({
      url,
      headers,
      protocol: (get('protocol', 'v1') as Protocol) === 'v2' ? 'v2' : 'v1',
      series,
      wide: st.n,
      intervalMs,
      shards: Number(get('shards', '8')),
      samplesPerRequest: Number(get('samples-per-request', '2000')),
      churnShare: churn?.share,
      churnEveryMs: churn?.everyMs,
    });
    const rate = get('rate') ? Number(get('rate')) : (series * st.n * st.m * 1000) / intervalMs;
    const r = await gen.run({ rate, durationMs: stepMs });
    await gen.close();
    console.log(`${st.m}x${st.n}: ${formatPhase(r)}`);
    if (r.failedSamples + r.unsentSamples > 0 || r.achievedRate < 0.95 * r.rate) {
      console.log(`limit reached at ${st.m}x${st.n}`);
      break;
    }
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  cli(process.argv.slice(2)).catch((err: Error) => {
    console.error(`loadgen: ${err.message}`);
    process.exit(1);
  });
}
