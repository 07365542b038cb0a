// Instance ids carry the zone and the partition: ingester-zone-<zone>-<n> owns partition n.

export interface IngesterIdentity {
  id: string;
  zone: string;
  partition: number;
}

const ID = /^ingester-zone-([a-z0-9]+)-(\d+)$/;

export function parseInstanceId(id: string): IngesterIdentity {
  const m = ID.exec(id);
  if (!m) throw new Error(`invalid ingester instance id "${id}": expected ingester-zone-<zone>-<partition>, e.g. ingester-zone-a-0`);
  return { id, zone: m[1], partition: Number(m[2]) };
}
