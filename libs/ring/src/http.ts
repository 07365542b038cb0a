// HTTP for the ring: the partition ring status page (HTML, or JSON with
// Accept: application/json) and the ingester's scale-down endpoints with
// Mimir's semantics. Handlers only translate; the lifecycler decides.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { asStrataError } from '@strata/errors';
import { ADMIN_HTTP_STATUS, type Logger } from '@strata/service';
import { ringErrors } from './errors.ts';
import type { PartitionInstanceLifecycler, PartitionStateInfo } from './lifecycler.ts';
import { isHealthy } from './partition-ring-desc.ts';
import type { PartitionRing } from './partition-ring.ts';
import { TOKENS_PER_PARTITION } from './tokens.ts';

export interface RingStatusSnapshot {
  /** The ring in use (possibly a fallback built from Kafka's partition count), or undefined. */
  ring: PartitionRing | undefined;
  /** Where it comes from: kv, stale (last known), kafka-fallback, none. */
  source: string;
  kv: string;
  reason?: string;
  /** The partitions writes go to right now (distributor), if the caller knows. */
  writePartitions?: readonly number[];
}

export interface RingStatusPageOptions {
  snapshot: () => RingStatusSnapshot | Promise<RingStatusSnapshot>;
  heartbeatTimeoutMs: number;
  /** Default: /ingester/partition-ring (Mimir's path). */
  paths?: string[];
  now?: () => number;
}

export interface RingStatusJson {
  source: string;
  kv: string;
  reason?: string;
  write_partitions?: readonly number[];
  partitions: {
    id: number;
    state: string;
    state_timestamp: string;
    tokens: number;
    /** Share of series this partition receives among the ACTIVE partitions (0 when not ACTIVE). */
    ownership: number;
    owners: { id: string; zone: string; addr: string; healthy: boolean; heartbeat: string; heartbeat_age_seconds: number; registered: string }[];
  }[];
}

export function ringStatusJson(s: RingStatusSnapshot, heartbeatTimeoutMs: number, now: number): RingStatusJson {
  const ring = s.ring;
  const share = ring ? ring.ownership(ring.partitionIds('ACTIVE')) : new Map<number, number>();
  return {
    source: s.source,
    kv: s.kv,
    ...(s.reason !== undefined ? { reason: s.reason } : {}),
    ...(s.writePartitions !== undefined ? { write_partitions: s.writePartitions } : {}),
    partitions: (ring?.partitions() ?? []).map((p) => ({
      id: p.id,
      state: p.state,
      state_timestamp: new Date(p.stateTimestamp).toISOString(),
      tokens: TOKENS_PER_PARTITION,
      ownership: Math.round((share.get(p.id) ?? 0) * 10_000) / 10_000,
      owners: ring!.owners(p.id).map((o) => ({
        id: o.id,
        zone: o.zone,
        addr: o.addr,
        healthy: isHealthy(o, now, heartbeatTimeoutMs),
        heartbeat: new Date(o.heartbeatTimestamp).toISOString(),
        heartbeat_age_seconds: Math.max(0, Math.round((now - o.heartbeatTimestamp) / 1000)),
        registered: new Date(o.registeredTimestamp).toISOString(),
      })),
    })),
  };
}

export function registerRingStatusPage(app: FastifyInstance, opts: RingStatusPageOptions): void {
  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    const json = ringStatusJson(await opts.snapshot(), opts.heartbeatTimeoutMs, (opts.now ?? Date.now)());
    const accept = String(req.headers.accept ?? '');
    const query = req.query as Record<string, string | undefined>;
    if (accept.includes('application/json') || query.format === 'json') return reply.type('application/json').send(json);
    return reply.type('text/html; charset=utf-8').send(renderHtml(json));
  };
  for (const path of opts.paths ?? ['/ingester/partition-ring']) app.get(path, handler);
}

function renderHtml(j: RingStatusJson): string {
  const rows = j.partitions
    .map((p) => {
      const owners =
        p.owners.length === 0
          ? '<em>none</em>'
          : p.owners
              .map(
                (o) =>
                  `${esc(o.id)} (zone ${esc(o.zone)}, ${esc(o.addr)}) <span class="${o.healthy ? 'ok' : 'bad'}">${o.healthy ? 'healthy' : 'UNHEALTHY'}</span>, heartbeat ${o.heartbeat_age_seconds}s ago`,
              )
              .join('<br>');
      return `<tr><td>${p.id}</td><td class="${p.state}">${p.state}</td><td>${esc(p.state_timestamp)}</td><td>${owners}</td><td>${p.tokens}</td><td>${(p.ownership * 100).toFixed(1)}%</td></tr>`;
    })
    .join('\n');
  const writes = j.write_partitions ? `<p>Writes go to partitions: ${j.write_partitions.join(', ') || '<em>none</em>'}</p>` : '';
  return `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Strata partition ring</title>
<style>body{font-family:sans-serif}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}
.ACTIVE{color:#080}.PENDING{color:#a60}.INACTIVE{color:#888}.ok{color:#080}.bad{color:#c00;font-weight:bold}</style></head>
<body><h1>Partition ring</h1>
<p>Source: <b>${esc(j.source)}</b> (KV: ${esc(j.kv)})${j.reason ? ` — ${esc(j.reason)}` : ''}</p>
${writes}
<table><thead><tr><th>Partition</th><th>State</th><th>State since</th><th>Owners</th><th>Tokens</th><th>Series share</th></tr></thead>
<tbody>
${rows}
</tbody></table>
<p>JSON: send <code>Accept: application/json</code>.</p>
</body></html>
`;
}

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export interface IngesterRingRoutesOptions {
  lifecycler: PartitionInstanceLifecycler;
  logger: Logger;
}

/**
 * /ingester/prepare-partition-downscale (GET state, POST → INACTIVE, DELETE → back to ACTIVE;
 * answers {"timestamp": <unix seconds it became INACTIVE, or 0>, "state": ...}) and
 * /ingester/prepare-shutdown (GET "set"/"unset", POST/DELETE 204: leave the ring on the next shutdown or not).
 */
export function registerIngesterRingRoutes(app: FastifyInstance, opts: IngesterRingRoutesOptions): void {
  const l = opts.lifecycler;
  const downscale = async (method: string): Promise<PartitionStateInfo> => {
    if (!l.isRunning) throw ringErrors.notRunning();
    if (method === 'POST') return l.prepareDownscale();
    if (method === 'DELETE') return l.cancelDownscale();
    return l.partitionState();
  };
  const downscaleHandler = async (req: FastifyRequest, reply: FastifyReply) => {
    try {
      const s = await downscale(req.method);
      return reply.type('application/json').send({ timestamp: s.state === 'INACTIVE' ? Math.floor(s.timestamp / 1000) : 0, state: s.state });
    } catch (err) {
      return sendError(reply, opts.logger, err);
    }
  };
  for (const method of ['GET', 'POST', 'DELETE'] as const) app.route({ method, url: '/ingester/prepare-partition-downscale', handler: downscaleHandler });

  app.get('/ingester/prepare-shutdown', async (_req, reply) => reply.type('text/plain').send(l.removesOwnerOnShutdown ? 'set\n' : 'unset\n'));
  app.post('/ingester/prepare-shutdown', async (_req, reply) => {
    if (!l.isRunning) return sendError(reply, opts.logger, ringErrors.notRunning());
    l.setRemoveOwnerOnShutdown(true);
    return reply.code(204).send();
  });
  app.delete('/ingester/prepare-shutdown', async (_req, reply) => {
    if (!l.isRunning) return sendError(reply, opts.logger, ringErrors.notRunning());
    l.setRemoveOwnerOnShutdown(false);
    return reply.code(204).send();
  });
}

/** One line of text with the status the admin endpoints' table gives the error's kind. */
function sendError(reply: FastifyReply, logger: Logger, err: unknown) {
  const e = asStrataError(err);
  const status = ADMIN_HTTP_STATUS[e.kind];
  (status >= 500 ? logger.warn.bind(logger) : logger.debug.bind(logger))({ code: e.code, status }, e.message);
  return reply
    .code(status)
    .type('text/plain')
    .send(e.message + '\n');
}
