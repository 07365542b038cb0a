// Alerts to Alertmanager's v2 API (POST <url>/api/v2/alerts), as Prometheus'
// notifier sends them: a bounded queue (oldest dropped when full), batches of
// 64, every Alertmanager gets every alert (a tenant's
// own Alertmanagers, from the runtime overrides, instead of the flag's). Sending never blocks an evaluation.

import { Counter, type Registry } from 'prom-client';
import type { Logger } from '@strata/service';
import type { AlertSender } from './group.ts';
import type { NotifiedAlert } from './rules.ts';

const MAX_BATCH = 64;

export interface AlertmanagerNotifierOptions {
  /** Alertmanager base URLs. */
  urls: string[];
  /** A tenant's own Alertmanager URLs (the runtime overrides' ruler_alertmanager_url); undefined: `urls`. */
  urlsFor?: (tenant: string) => string[] | undefined;
  timeoutMs: number;
  queueCapacity: number;
  logger: Logger;
  registry: Registry;
  /** Added to every alert (Prometheus' external labels). */
  externalLabels?: Record<string, string>;
}

export class AlertmanagerNotifier implements AlertSender {
  private queue: { tenant: string; alert: NotifiedAlert }[] = [];
  private draining: Promise<void> | undefined;
  private readonly sent: Counter;
  private readonly errors: Counter;
  private readonly dropped: Counter;

  private readonly opts: AlertmanagerNotifierOptions;

  constructor(opts: AlertmanagerNotifierOptions) {
    this.opts = opts;
    this.sent = new Counter({
      name: 'strata_ruler_notifications_sent_total',
      help: 'Alerts sent to Alertmanager, by Alertmanager.',
      labelNames: ['alertmanager'],
      registers: [opts.registry],
    });
    this.errors = new Counter({
      name: 'strata_ruler_notifications_errors_total',
      help: 'Alerts whose sending to Alertmanager failed, by Alertmanager.',
      labelNames: ['alertmanager'],
      registers: [opts.registry],
    });
    this.dropped = new Counter({
      name: 'strata_ruler_notifications_dropped_total',
      help: 'Alerts dropped because the notification queue was full.',
      registers: [opts.registry],
    });
  }

  send(tenant: string, alerts: NotifiedAlert[]): void {
    for (const alert of alerts) this.queue.push({ tenant, alert });
    const over = this.queue.length - this.opts.queueCapacity;
    if (over > 0) {
      this.queue.splice(0, over);
      this.dropped.inc(over);
    }
    this.draining ??= this.drain().finally(() => (this.draining = undefined));
  }

  /** Waits until the queue is empty (for shutdown and tests). */
  async flush(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const tenant = this.queue[0].tenant;
      let n = 0;
      while (n < this.queue.length && n < MAX_BATCH && this.queue[n].tenant === tenant) n++;
      const batch = this.queue.splice(0, n).map((q) => q.alert);
      const urls = this.opts.urlsFor?.(tenant) ?? this.opts.urls;
      await Promise.all(urls.map((url) => this.post(url, tenant, batch)));
    }
  }

  private async post(url: string, tenant: string, alerts: NotifiedAlert[]): Promise<void> {
    const body = alerts.map((a) => ({
      labels: { ...this.opts.externalLabels, ...a.labels },
      annotations: a.annotations,
      startsAt: new Date(a.startsAt).toISOString(),
      endsAt: new Date(a.endsAt).toISOString(),
      generatorURL: a.generatorURL,
    }));
    try {
      const res = await fetch(`${url.replace(/\/$/, '')}/api/v2/alerts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-scope-orgid': tenant },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.opts.timeoutMs),
      });
      if (!res.ok) throw new Error(`HTTP ${res.status}: ${(await res.text()).slice(0, 200)}`);
      await res.arrayBuffer().catch(() => undefined);
      this.sent.inc({ alertmanager: url }, alerts.length);
    } catch (err) {
      this.errors.inc({ alertmanager: url }, alerts.length);
      this.opts.logger.warn({ alertmanager: url, tenant, alerts: alerts.length, err: (err as Error).message }, 'sending alerts to Alertmanager failed');
    }
  }
}
