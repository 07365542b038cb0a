// One push request on its way through the distributor's steps: the tenant's limits as read
// for it, the series accepted so far by partition, and what was rejected. It never awaits:
// pair ids the known-series table hands out stay valid only until the records exist.

import type { Label } from '@strata/model';
import type { PartitionLookup } from '@strata/ring';
import type { TenantLimits } from '@strata/limits';
import { relabel } from '@strata/relabel';
import { withoutLabel } from '@strata/ha-tracker';
import { withoutEmptyLabelValues, type LabelLimits } from '@strata/remote-write';
import { tenantSeed } from './sharding.ts';

/** What the routing loop needs of a series, whatever protocol it came in. */
export interface Routable {
  labels: Label[];
  samples: number;
  exemplars: number;
  histograms: number;
  invalidUtf8: boolean;
}

/** Sample time bounds, as both protocols' parsers give them. */
export interface TimeBounds {
  minTimestamp: number;
  maxTimestamp: number;
}

export interface RouteOutcome {
  series: number;
  samples: number;
  histograms: number;
  exemplars: number;
  /** One line for the sender: the first rejection and how much was rejected; undefined if nothing was. */
  rejection?: string;
}

/** A partition's series bodies, each with its run of label pair ids (or -1: look its labels up). */
export interface PartitionSeries {
  bodies: Uint8Array[];
  runs: number[];
}

export interface Failure {
  code: string;
  message: string;
}

export class PushBatch {
  readonly tenant: string;
  readonly limits: Readonly<TenantLimits>;
  readonly labelLimits: Required<LabelLimits>;
  readonly now: number;
  readonly exemplarsEnabled: boolean;
  readonly histogramLimits: { enabled: boolean; maxBuckets: number };
  /** The tenant has metric_relabel_configs or drop_labels. */
  readonly relabelling: boolean;
  readonly seed: number;
  readonly partitions: PartitionLookup;
  /** The HA replica label to drop from every series, when the HA check elected this replica. */
  readonly haReplicaLabel: string | undefined;

  readonly byPartition = new Map<number, PartitionSeries>();
  readonly out: RouteOutcome = { series: 0, samples: 0, histograms: 0, exemplars: 0 };
  private firstRejection: string | undefined;
  private rejectedSeries = 0;
  private rejectedSamples = 0;
  private metadataRejection: string | undefined;
  private rejectedMetadata = 0;

  constructor(tenant: string, limits: Readonly<TenantLimits>, now: number, partitions: PartitionLookup, haReplicaLabel: string | undefined) {
    this.tenant = tenant;
    this.limits = limits;
    this.labelLimits = {
      nameValidationScheme: limits.nameValidationScheme,
      maxLabelNamesPerSeries: limits.maxLabelNamesPerSeries,
      maxLabelNameLength: limits.maxLabelNameLength,
      maxLabelValueLength: limits.maxLabelValueLength,
    };
    this.now = now;
    this.exemplarsEnabled = limits.maxGlobalExemplarsPerUser > 0;
    this.histogramLimits = { enabled: limits.nativeHistogramsIngestionEnabled, maxBuckets: limits.maxNativeHistogramBuckets };
    this.relabelling = limits.metricRelabelConfigs.length > 0 || limits.dropLabels.length > 0;
    this.seed = tenantSeed(tenant);
    this.partitions = partitions;
    this.haReplicaLabel = haReplicaLabel;
  }

  /** A series' body for `partition` (`run`: its label pair ids, or -1). */
  add(partition: number, body: Uint8Array, run: number): void {
    let list = this.byPartition.get(partition);
    if (!list) this.byPartition.set(partition, (list = { bodies: [], runs: [] }));
    list.bodies.push(body);
    list.runs.push(run);
  }

  /** Counts a series left out; the first failure's message is what the sender reads. */
  rejectSeries(s: Routable, f: Failure): void {
    this.firstRejection ??= f.message;
    this.rejectedSeries++;
    this.rejectedSamples += s.samples + s.histograms;
  }

  rejectMetadata(f: Failure): void {
    this.metadataRejection ??= f.message;
    this.rejectedMetadata++;
  }

  /** Metadata has no series to shard by; it travels with partition 0's record. */
  makeRoomForMetadata(): void {
    if (!this.byPartition.has(0)) this.byPartition.set(0, { bodies: [], runs: [] });
  }

  /** One line naming the first series and metadata rejected and how many were, or undefined. */
  rejection(seriesSent: number, metadataSent: number): string | undefined {
    let series: string | undefined;
    if (this.firstRejection !== undefined) {
      series =
        this.rejectedSeries > 1
          ? `${this.firstRejection} (${this.rejectedSeries} of ${seriesSent} series rejected, ${this.rejectedSamples} samples)`
          : this.firstRejection;
    }
    let metadata = this.metadataRejection;
    if (metadata !== undefined && this.rejectedMetadata > 1) metadata += ` (${this.rejectedMetadata} of ${metadataSent} metadata rejected)`;
    if (metadata === undefined) return series;
    return series === undefined ? metadata : `${series}; ${metadata}`;
  }
}

/** A series' labels to check and store (decoded, relabelled when the tenant has rules); null when a rule dropped it. */
export function ownLabels(b: PushBatch, s: Routable): Label[] | null {
  return b.relabelling ? (relabelled(s.labels, b.limits) ?? null) : s.labels;
}

/** The labels the tenant's metric_relabel_configs and drop_labels leave (sorted); undefined when a rule dropped the series. */
function relabelled(labels: Label[], limits: Readonly<TenantLimits>): Label[] | undefined {
  const out = relabel(labels, limits.metricRelabelConfigs);
  if (out === undefined || limits.dropLabels.length === 0) return out;
  const kept = out.filter((l) => !limits.dropLabels.includes(l.name));
  return kept.length === 0 ? undefined : kept;
}

/**
 * The labels to store when they differ from the labels as sent: without empty values (Prometheus
 * treats an empty value as no label) and without the HA replica label; undefined: store them as
 * sent (`own` undefined: they were never decoded).
 */
export function labelsToStore(s: Routable, own: Label[] | undefined, resorted: boolean, haReplicaLabel: string | undefined): Label[] | undefined {
  let labels: Label[] | undefined;
  if (own !== undefined) labels = withoutEmptyLabelValues(own);
  if (haReplicaLabel !== undefined) labels = withoutLabel(labels ?? s.labels, haReplicaLabel);
  if (labels !== undefined && labels === s.labels && !resorted) labels = undefined;
  return labels;
}
