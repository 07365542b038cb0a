// Series deletion in the bucket (Mimir/Thanos style): each delete_series call
// becomes <tenant>/tombstones/<id>.json (matchers + time range); readers drop
// what a request covers at query time, the compactor drops it from the blocks
// it writes. A tenant deletion is <tenant>/markers/tenant-deletion-mark.json:
// readers answer nothing for the tenant, the compactor deletes its blocks.

import { randomUUID } from 'node:crypto';
import type {
  ExemplarParams,
  ExemplarQuerier,
  ExemplarSeries,
  LabelValuesParams,
  MetadataParams,
  MetadataQuerier,
  MetricMetadataEntry,
  Querier,
  SelectParams,
  Series,
  Tombstone,
} from '@strata/model';
import { applyTombstonesAll } from '@strata/model';
import type { Bucket } from '@strata/objstore';
import { isObjectNotFound } from '@strata/objstore';
import { MARKERS_DIR } from './layout.ts';

export const TOMBSTONES_DIR = 'tombstones';
const TENANT_DELETION_MARK = 'tenant-deletion-mark.json';

/** One delete request as stored: Prometheus' matchers (type as in PromQL) and an inclusive ms range. */
export interface DeletionRequest extends Tombstone {
  id: string;
  /** Unix ms. */
  createdAt: number;
}

/** Mimir's tenant deletion mark (unix seconds). */
export interface TenantDeletionMark {
  deletion_time: number;
  finished_time?: number;
}

export function tenantDeletionMarkKey(tenant: string): string {
  return `${tenant}/${MARKERS_DIR}/${TENANT_DELETION_MARK}`;
}

async function writeDeletionRequest(bucket: Bucket, tenant: string, t: Tombstone, nowMs: number): Promise<DeletionRequest> {
  const req: DeletionRequest = { id: randomUUID(), createdAt: nowMs, matchers: t.matchers, mint: t.mint, maxt: t.maxt };
  await bucket.put(`${tenant}/${TOMBSTONES_DIR}/${req.id}.json`, new TextEncoder().encode(JSON.stringify(req) + '\n'));
  return req;
}

export async function readDeletionRequests(bucket: Bucket, tenant: string): Promise<DeletionRequest[]> {
  const out: DeletionRequest[] = [];
  for (const key of await bucket.list(`${tenant}/${TOMBSTONES_DIR}/`)) {
    if (!key.endsWith('.json')) continue;
    try {
      out.push(JSON.parse(new TextDecoder().decode(await bucket.get(key))) as DeletionRequest);
    } catch (err) {
      if (!isObjectNotFound(err)) throw err;
    }
  }
  return out.sort((a, b) => a.createdAt - b.createdAt);
}

async function markTenantForDeletion(bucket: Bucket, tenant: string, nowMs: number): Promise<TenantDeletionMark> {
  const existing = await readTenantDeletionMark(bucket, tenant);
  if (existing) return existing;
  const mark: TenantDeletionMark = { deletion_time: Math.floor(nowMs / 1000) };
  await bucket.put(tenantDeletionMarkKey(tenant), new TextEncoder().encode(JSON.stringify(mark) + '\n'));
  return mark;
}

export async function writeTenantDeletionMark(bucket: Bucket, tenant: string, mark: TenantDeletionMark): Promise<void> {
  await bucket.put(tenantDeletionMarkKey(tenant), new TextEncoder().encode(JSON.stringify(mark) + '\n'));
}

export async function readTenantDeletionMark(bucket: Bucket, tenant: string): Promise<TenantDeletionMark | null> {
  try {
    return JSON.parse(new TextDecoder().decode(await bucket.get(tenantDeletionMarkKey(tenant)))) as TenantDeletionMark;
  } catch (err) {
    if (isObjectNotFound(err)) return null;
    throw err;
  }
}

export interface DeletionsOptions {
  bucket: Bucket;
  /** How old a tenant's requests may get before they are read again (a request made through this instance is seen at once). */
  syncIntervalMs: number;
  now?: () => number;
}

interface TenantState {
  fetchedAt: number;
  requests: DeletionRequest[];
  deleted: boolean;
  refreshing?: Promise<void>;
}

/** Every tenant's deletion requests and deletion mark, cached per tenant; what readers filter with. */
export class Deletions {
  private readonly tenants = new Map<string, TenantState>();
  private readonly now: () => number;

  private readonly opts: DeletionsOptions;

  constructor(opts: DeletionsOptions) {
    this.opts = opts;
    this.now = opts.now ?? Date.now;
  }

  /** Records a delete request (one per selector) and applies it here at once. */
  async deleteSeries(tenant: string, tombstones: Tombstone[]): Promise<DeletionRequest[]> {
    const out: DeletionRequest[] = [];
    for (const t of tombstones) out.push(await writeDeletionRequest(this.opts.bucket, tenant, t, this.now()));
    const state = await this.state(tenant);
    state.requests.push(...out);
    return out;
  }

  async deleteTenant(tenant: string): Promise<TenantDeletionMark> {
    const mark = await markTenantForDeletion(this.opts.bucket, tenant, this.now());
    (await this.state(tenant)).deleted = true;
    return mark;
  }

  async tombstones(tenant: string): Promise<DeletionRequest[]> {
    return (await this.state(tenant)).requests;
  }

  async tenantDeleted(tenant: string): Promise<boolean> {
    return (await this.state(tenant)).deleted;
  }

  private async state(tenant: string): Promise<TenantState> {
    let t = this.tenants.get(tenant);
    if (!t || this.now() - t.fetchedAt >= this.opts.syncIntervalMs) {
      if (!t) this.tenants.set(tenant, (t = { fetchedAt: -Infinity, requests: [], deleted: false }));
      const state = t;
      state.refreshing ??= (async () => {
        const [requests, mark] = await Promise.all([readDeletionRequests(this.opts.bucket, tenant), readTenantDeletionMark(this.opts.bucket, tenant)]);
        state.requests = requests;
        state.deleted = mark !== null;
        state.fetchedAt = this.now();
      })().finally(() => (state.refreshing = undefined));
      await state.refreshing;
    }
    return t;
  }
}

/**
 * A Querier that answers as if deleted data were gone: nothing for a tenant
 * marked for deletion, and no sample a delete request covers. Label names and
 * values still list series whose samples are all deleted until the compactor
 * rewrites their blocks, as Prometheus' do until tombstones are cleaned.
 */
export class DeletionFilterQuerier implements Querier, ExemplarQuerier, MetadataQuerier {
  private readonly inner: Querier & Partial<ExemplarQuerier & MetadataQuerier>;
  private readonly deletions: Deletions;

  constructor(inner: Querier & Partial<ExemplarQuerier & MetadataQuerier>, deletions: Deletions) {
    this.inner = inner;
    this.deletions = deletions;
  }

  async select(p: SelectParams): Promise<Series[]> {
    if (await this.deletions.tenantDeleted(p.tenant)) return [];
    const [series, tombstones] = await Promise.all([this.inner.select(p), this.deletions.tombstones(p.tenant)]);
    return applyTombstonesAll(series, tombstones);
  }

  async labelNames(p: SelectParams): Promise<string[]> {
    return (await this.deletions.tenantDeleted(p.tenant)) ? [] : this.inner.labelNames(p);
  }

  async labelValues(p: LabelValuesParams): Promise<string[]> {
    return (await this.deletions.tenantDeleted(p.tenant)) ? [] : this.inner.labelValues(p);
  }

  async exemplars(p: ExemplarParams): Promise<ExemplarSeries[]> {
    if (!this.inner.exemplars || (await this.deletions.tenantDeleted(p.tenant))) return [];
    return this.inner.exemplars(p);
  }

  async metadata(p: MetadataParams): Promise<MetricMetadataEntry[]> {
    if (!this.inner.metadata || (await this.deletions.tenantDeleted(p.tenant))) return [];
    return this.inner.metadata(p);
  }
}
