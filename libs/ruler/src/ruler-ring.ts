// Rule groups sharded over ruler replicas: every ruler heartbeats its entry
// under one key of the ring KV (the partition ring's store); a group belongs to
// the healthy ruler with the highest hash of (group, ruler) — rendezvous
// hashing, so a ruler that dies only gives up its own groups, and each group
// has exactly one owner among the rulers that agree on who is healthy.

import { createHash } from 'node:crypto';
import { Gauge, type Registry } from 'prom-client';
import type { KvClient } from '@strata/ring';
import type { Logger } from '@strata/service';

export const RULER_RING_KEY = 'ruler-ring';

interface RulerRingDesc {
  instances: Record<string, { heartbeat: number }>;
}

export interface RulerRingOptions {
  kv: KvClient;
  instanceId: string;
  heartbeatPeriodMs: number;
  heartbeatTimeoutMs: number;
  logger: Logger;
  /** Where strata_ruler_ring_healthy_rulers goes (optional). */
  registry?: Registry;
  /** Called when the set of healthy rulers changed (the ruler re-reads which groups it owns). */
  onChange(): void;
}

export class RulerRing {
  private desc: RulerRingDesc = { instances: {} };
  private healthyKey = '';
  private timer?: NodeJS.Timeout;
  private unwatch?: () => void;

  private readonly opts: RulerRingOptions;

  constructor(opts: RulerRingOptions) {
    this.opts = opts;
    if (opts.registry) {
      const healthy = () => this.healthy().length;
      new Gauge({
        name: 'strata_ruler_ring_healthy_rulers',
        help: 'Rulers this ruler sees as healthy in the ruler ring (itself included); rule groups are sharded over them.',
        registers: [opts.registry],
        collect() {
          this.set(healthy());
        },
      });
    }
  }

  async start(): Promise<void> {
    await this.heartbeat();
    this.unwatch = this.opts.kv.watch<RulerRingDesc>(
      RULER_RING_KEY,
      (v) => this.update(v),
      (err) => this.opts.logger.warn({ err: err.message }, 'reading the ruler ring failed'),
    );
    this.timer = setInterval(() => {
      this.heartbeat().catch((err: unknown) => this.opts.logger.warn({ err: (err as Error).message }, 'ruler ring heartbeat failed'));
      // Health expires without the key changing: look again every period.
      this.update(this.desc);
    }, this.opts.heartbeatPeriodMs);
    this.timer.unref();
  }

  /** Leaves the ring (its groups move at once). */
  async stop(): Promise<void> {
    this.halt();
    await this.opts.kv.cas<RulerRingDesc>(RULER_RING_KEY, (cur) => {
      if (!cur?.instances[this.opts.instanceId]) return undefined;
      const instances = { ...cur.instances };
      delete instances[this.opts.instanceId];
      return { value: { instances } };
    });
  }

  /** Stops heartbeating without leaving (what a crash looks like to the others); for tests and drills. */
  halt(): void {
    clearInterval(this.timer);
    this.unwatch?.();
  }

  /** Whether this ruler evaluates the group. */
  owns(tenant: string, namespace: string, group: string): boolean {
    return this.owner(`${tenant}\u0000${namespace}\u0000${group}`) === this.opts.instanceId;
  }

  healthy(): string[] {
    const now = Date.now();
    return Object.entries(this.desc.instances)
      .filter(([id, d]) => id === this.opts.instanceId || now - d.heartbeat <= this.opts.heartbeatTimeoutMs)
      .map(([id]) => id)
      .sort();
  }

  private owner(key: string): string | undefined {
    let best: string | undefined;
    let bestScore = -1n;
    for (const id of this.healthy()) {
      const score = createHash('sha256').update(key).update('\u0000').update(id).digest().readBigUInt64BE(0);
      if (score > bestScore) {
        best = id;
        bestScore = score;
      }
    }
    return best;
  }

  private async heartbeat(): Promise<void> {
    const v = await this.opts.kv.cas<RulerRingDesc>(RULER_RING_KEY, (cur) => ({
      value: { instances: { ...(cur?.instances ?? {}), [this.opts.instanceId]: { heartbeat: Date.now() } } },
    }));
    this.update(v);
  }

  private update(v: RulerRingDesc | undefined): void {
    this.desc = v ?? { instances: {} };
    const key = this.healthy().join(',');
    if (key === this.healthyKey) return;
    this.healthyKey = key;
    this.opts.logger.info({ rulers: this.healthy() }, 'healthy rulers changed');
    this.opts.onChange();
  }
}
