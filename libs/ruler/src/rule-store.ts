// Per-tenant rule groups in the bucket: rules/<tenant>/<namespace>/<group>, one
// YAML rule group per object (namespace and group URL-encoded, so a "/" in a
// name cannot make another path). The bucket is the only state: any ruler reads it.

import { ObjectNotFoundError, type Bucket } from '@strata/objstore';
import { groupToYaml, parseRuleGroups, type RuleGroupDesc } from './rule-format.ts';

const ROOT = 'rules/';

export interface StoredGroup {
  tenant: string;
  namespace: string;
  group: RuleGroupDesc;
}

export class RuleStore {
  private readonly bucket: Bucket;

  constructor(bucket: Bucket) {
    this.bucket = bucket;
  }

  private key(tenant: string, namespace: string, group: string): string {
    return `${ROOT}${tenant}/${encodeName(namespace)}/${encodeName(group)}`;
  }

  async tenants(): Promise<string[]> {
    const entries = await this.bucket.list(ROOT);
    return entries
      .filter((e) => e.endsWith('/'))
      .map((e) => e.slice(ROOT.length, -1))
      .filter((t) => t !== '')
      .sort();
  }

  /** The tenant's groups, by namespace then group name; optionally one namespace only. */
  async list(tenant: string, namespace?: string): Promise<StoredGroup[]> {
    const prefix = namespace === undefined ? `${ROOT}${tenant}/` : `${ROOT}${tenant}/${encodeName(namespace)}/`;
    const keys = await this.bucket.list(prefix, { recursive: true });
    const out: StoredGroup[] = [];
    for (const k of keys) {
      const parts = k.slice(`${ROOT}${tenant}/`.length).split('/');
      if (parts.length !== 2) continue;
      const ns = decodeURIComponent(parts[0]);
      const g = await this.read(k);
      if (g) out.push({ tenant, namespace: ns, group: g });
    }
    return out.sort((a, b) => (a.namespace === b.namespace ? cmp(a.group.name, b.group.name) : cmp(a.namespace, b.namespace)));
  }

  async get(tenant: string, namespace: string, group: string): Promise<RuleGroupDesc | undefined> {
    return this.read(this.key(tenant, namespace, group));
  }

  async put(tenant: string, namespace: string, group: RuleGroupDesc): Promise<void> {
    await this.bucket.put(this.key(tenant, namespace, group.name), Buffer.from(groupToYaml(group)));
  }

  async delete(tenant: string, namespace: string, group: string): Promise<void> {
    await this.bucket.delete(this.key(tenant, namespace, group));
  }

  /** Deletes every group of the namespace; how many there were. */
  async deleteNamespace(tenant: string, namespace: string): Promise<number> {
    const groups = await this.list(tenant, namespace);
    for (const g of groups) await this.delete(tenant, namespace, g.group.name);
    return groups.length;
  }

  private async read(key: string): Promise<RuleGroupDesc | undefined> {
    let body: Uint8Array;
    try {
      body = await this.bucket.get(key);
    } catch (err) {
      if (err instanceof ObjectNotFoundError) return undefined;
      throw err;
    }
    return parseRuleGroups(Buffer.from(body).toString('utf8'))[0];
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** URL-encoding plus dots, so "." and ".." are names like any other, never path parts. */
function encodeName(s: string): string {
  return encodeURIComponent(s).replaceAll('.', '%2E');
}
