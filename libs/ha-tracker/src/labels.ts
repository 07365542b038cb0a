// The HA labels of a request: Mimir reads them from its first series only,
// and strips the replica label from every accepted series so both replicas
// write the same series.

import type { Label } from '@strata/model';

/** The cluster and replica label values of `labels` ("" when absent). */
export function findHaLabels(labels: readonly Label[], clusterLabel: string, replicaLabel: string): { cluster: string; replica: string } {
  let cluster = '';
  let replica = '';
  for (const l of labels) {
    if (l.name === clusterLabel) cluster = l.value;
    else if (l.name === replicaLabel) replica = l.value;
  }
  return { cluster, replica };
}

/** `labels` without `name`; the same array when it has no such label (callers compare identity). */
export function withoutLabel(labels: Label[], name: string): Label[] {
  const i = labels.findIndex((l) => l.name === name);
  if (i < 0) return labels;
  return labels.filter((l) => l.name !== name);
}
