// Per-tenant limits: the set the distributor and ingesters enforce, and the
// runtime config file's schema in Mimir's format and key names
// (`overrides: { <tenant>: { ingestion_rate: ..., ... } }`), validated with zod.
// Strict: a misspelt key fails the file instead of silently doing nothing.

import { z } from 'zod';
import { relabelConfigsSchema, type RelabelRule } from '@strata/relabel';
import { compileRegex } from '@strata/model';
import { parseDuration, validateTenantId } from '@strata/service';

export const NAME_VALIDATION_SCHEMES = ['legacy', 'utf8'] as const;
/** Prometheus' OTLP translation strategies (otlptranslator), by their names there. */
export const OTEL_TRANSLATION_STRATEGIES = [
  'UnderscoreEscapingWithSuffixes',
  'UnderscoreEscapingWithoutSuffixes',
  'NoUTF8EscapingWithSuffixes',
  'NoTranslation',
] as const;

export interface TenantLimits {
  /** Samples (plus exemplars and metadata) per second, per distributor (Mimir's "local" strategy). */
  ingestionRate: number;
  ingestionBurstSize: number;
  /** Across all partitions; each ingester enforces its share. 0: no limit. */
  maxGlobalSeriesPerUser: number;
  maxLabelNamesPerSeries: number;
  maxLabelNameLength: number;
  maxLabelValueLength: number;
  /** Metric family name and unit longer than this are rejected, HELP is truncated to it. */
  maxMetadataLength: number;
  /** Samples newer than now + this are rejected. */
  creationGracePeriodMs: number;
  /** Samples older than now - this - the OOO window are rejected. 0: off. */
  pastGracePeriodMs: number;
  outOfOrderTimeWindowMs: number;
  /** Exemplars kept in memory across all partitions. 0: exemplars are not ingested. */
  maxGlobalExemplarsPerUser: number;
  acceptHaSamples: boolean;
  haClusterLabel: string;
  haReplicaLabel: string;
  /** HA clusters tracked per tenant; a push from one more is refused (400). 0: no limit. */
  haMaxClusters: number;
  /** false: native histograms are dropped (counted as discarded), the rest of a push is written. */
  nativeHistogramsIngestionEnabled: boolean;
  /** A native histogram with more buckets has its schema lowered until it fits. 0: no limit. */
  maxNativeHistogramBuckets: number;
  /** legacy: Prometheus 2's name characters; utf8: any UTF-8 name, as Prometheus 3. */
  nameValidationScheme: (typeof NAME_VALIDATION_SCHEMES)[number];
  /** How OTLP metric and attribute names become Prometheus names. */
  otelTranslationStrategy: (typeof OTEL_TRANSLATION_STRATEGIES)[number];
  /** OTLP delta sums and histograms are stored as sent (metadata type unknown) instead of refused. */
  otelNativeDeltaIngestion: boolean;
  /** OTLP resource attributes copied onto every series of the resource as labels. */
  promoteOtelResourceAttributes: readonly string[];
  /** Every OTLP resource attribute but `ignoreResourceAttributes` becomes a label (Prometheus' otlp.promote_all_resource_attributes). */
  promoteAllResourceAttributes: boolean;
  ignoreResourceAttributes: readonly string[];
  /** target_info keeps service.name, service.namespace and service.instance.id besides job and instance. */
  otelKeepIdentifyingResourceAttributes: boolean;
  /** The instrumentation scope's name, version, schema URL and attributes become `otel_scope_*` labels. */
  otelPromoteScopeMetadata: boolean;
  /** OTLP explicit-bucket histograms become native histograms with custom buckets (schema -53) instead of `_bucket` series. */
  otelConvertHistogramsToNhcb: boolean;
  /** The ruler's Alertmanager URL(s) for this tenant's alerts, comma-separated; empty: -ruler.alertmanager-url. */
  rulerAlertmanagerUrl: string;
  /** Prometheus relabel rules the distributor applies to each series before it is validated and routed. */
  metricRelabelConfigs: readonly RelabelRule[];
  /** Label names the distributor removes from each series (after the relabel rules). */
  dropLabels: readonly string[];
  /**
   * Start (created) timestamps of remote write 2.0 and OTLP samples become a zero sample at that
   * time, as Prometheus' created-timestamp-zero-ingestion does.
   */
  createdTimestampZeroIngestionEnabled: boolean;
  /** Mimir's OTLP-only form of the same: OTLP start times become zero samples. */
  otelCreatedTimestampZeroIngestionEnabled: boolean;
  /** A range query longer than this (end - start) is refused by the query-frontend; 0: no limit. */
  maxTotalQueryLengthMs: number;
  /** Queries read no data older than now - this: the start is moved up, as Mimir does; 0: no limit. */
  maxQueryLookbackMs: number;
  /** Splits (by interval) of one range query that run at once; Mimir's max_query_parallelism. */
  maxQueryParallelism: number;
  /** Chunks one query may fetch from ingesters and the bucket; over it 422; 0: no limit. */
  maxFetchedChunksPerQuery: number;
  /** Series one query may fetch; undefined: the querier's -querier.max-fetched-series-per-query (sized from the memory budget). */
  maxFetchedSeriesPerQuery: number | undefined;
  /** Chunk bytes one query may fetch; undefined: the querier's -querier.max-fetched-chunk-bytes-per-query. */
  maxFetchedChunkBytesPerQuery: number | undefined;
  /** Queries the query-frontend refuses (400, err-strata-query-blocked), as Mimir's blocked_queries. */
  blockedQueries: readonly BlockedQuery[];
  /** The compactor's block-upload API (mimirtool backfill) accepts this tenant's blocks. */
  compactorBlockUploadEnabled: boolean;
  /** An uploaded block's index and chunks are checked before it is made visible; false: finish publishes it at once. */
  compactorBlockUploadValidationEnabled: boolean;
  /** Validation decodes every chunk (checksums, sample order); false: the index alone is checked. */
  compactorBlockUploadVerifyChunks: boolean;
  /** Largest uploaded block (sum of its files); 0: no limit. */
  compactorBlockUploadMaxBlockSizeBytes: number;
}

/** One rule of blocked_queries (Mimir's fields). */
export interface BlockedQuery {
  /** The query as sent (trimmed), or with `regex` a Prometheus regex over it. */
  pattern: string;
  regex: boolean;
  /** Said to the client after "blocked by the cluster administrator". */
  reason: string;
  /** Only range queries longer than this; 0: any. */
  timeRangeLongerThanMs: number;
  /** Only range queries with a step shorter than this; 0: any. */
  stepSizeShorterThanMs: number;
}

/** A duration as Mimir's YAML writes one ("10m", "1h30m", "0"); a bare number is seconds. */
const yamlDuration = z.union([z.string(), z.number()]).transform((v, ctx) => {
  try {
    return parseDuration(String(v));
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
    return z.NEVER;
  }
});
const count = z.number().int().nonnegative();
const positiveCount = z.number().int().positive();
/** A list of names, as a YAML list or as Mimir's comma-separated string (flagext.StringSliceCSV). */
const nameList = z
  .union([z.array(z.string()), z.string()])
  .transform((v) => (typeof v === 'string' ? v.split(',') : v).map((s) => s.trim()).filter((s) => s !== ''));

const blockedQueriesSchema = z.array(
  z
    .object({
      pattern: z.string().refine((p) => p.trim() !== '', 'a blocked query needs a pattern'),
      regex: z.boolean().default(false),
      reason: z.string().default(''),
      time_range_longer_than: yamlDuration.default(0),
      step_size_shorter_than: yamlDuration.default(0),
    })
    .strict()
    .superRefine((b, ctx) => {
      if (!b.regex) return;
      try {
        compileRegex(b.pattern);
      } catch (err) {
        ctx.addIssue({ code: 'custom', path: ['pattern'], message: (err as Error).message });
      }
    })
    .transform((b): BlockedQuery => ({
      pattern: b.pattern,
      regex: b.regex,
      reason: b.reason,
      timeRangeLongerThanMs: b.time_range_longer_than,
      stepSizeShorterThanMs: b.step_size_shorter_than,
    })),
);

/** YAML key (Mimir's) → its schema and the TenantLimits field it sets. */
const FIELDS = {
  ingestion_rate: [z.number().nonnegative(), 'ingestionRate'],
  ingestion_burst_size: [count, 'ingestionBurstSize'],
  max_global_series_per_user: [count, 'maxGlobalSeriesPerUser'],
  max_label_names_per_series: [positiveCount, 'maxLabelNamesPerSeries'],
  max_label_name_length: [positiveCount, 'maxLabelNameLength'],
  max_label_value_length: [positiveCount, 'maxLabelValueLength'],
  max_metadata_length: [positiveCount, 'maxMetadataLength'],
  creation_grace_period: [yamlDuration, 'creationGracePeriodMs'],
  past_grace_period: [yamlDuration, 'pastGracePeriodMs'],
  out_of_order_time_window: [yamlDuration, 'outOfOrderTimeWindowMs'],
  max_global_exemplars_per_user: [count, 'maxGlobalExemplarsPerUser'],
  accept_ha_samples: [z.boolean(), 'acceptHaSamples'],
  ha_cluster_label: [z.string().min(1), 'haClusterLabel'],
  ha_replica_label: [z.string().min(1), 'haReplicaLabel'],
  ha_max_clusters: [count, 'haMaxClusters'],
  native_histograms_ingestion_enabled: [z.boolean(), 'nativeHistogramsIngestionEnabled'],
  max_native_histogram_buckets: [count, 'maxNativeHistogramBuckets'],
  name_validation_scheme: [z.enum(NAME_VALIDATION_SCHEMES), 'nameValidationScheme'],
  otel_translation_strategy: [z.enum(OTEL_TRANSLATION_STRATEGIES), 'otelTranslationStrategy'],
  otel_native_delta_ingestion: [z.boolean(), 'otelNativeDeltaIngestion'],
  promote_otel_resource_attributes: [nameList, 'promoteOtelResourceAttributes'],
  // Prometheus' otlp block names: Mimir has no promote-all.
  promote_all_resource_attributes: [z.boolean(), 'promoteAllResourceAttributes'],
  ignore_resource_attributes: [nameList, 'ignoreResourceAttributes'],
  otel_keep_identifying_resource_attributes: [z.boolean(), 'otelKeepIdentifyingResourceAttributes'],
  otel_promote_scope_metadata: [z.boolean(), 'otelPromoteScopeMetadata'],
  otel_convert_histograms_to_nhcb: [z.boolean(), 'otelConvertHistogramsToNhcb'],
  ruler_alertmanager_url: [z.string(), 'rulerAlertmanagerUrl'],
  metric_relabel_configs: [relabelConfigsSchema, 'metricRelabelConfigs'],
  drop_labels: [z.array(z.string().min(1)), 'dropLabels'],
  created_timestamp_zero_ingestion_enabled: [z.boolean(), 'createdTimestampZeroIngestionEnabled'],
  otel_created_timestamp_zero_ingestion_enabled: [z.boolean(), 'otelCreatedTimestampZeroIngestionEnabled'],
  max_total_query_length: [yamlDuration, 'maxTotalQueryLengthMs'],
  max_query_lookback: [yamlDuration, 'maxQueryLookbackMs'],
  max_query_parallelism: [positiveCount, 'maxQueryParallelism'],
  max_fetched_chunks_per_query: [count, 'maxFetchedChunksPerQuery'],
  max_fetched_series_per_query: [count, 'maxFetchedSeriesPerQuery'],
  max_fetched_chunk_bytes_per_query: [count, 'maxFetchedChunkBytesPerQuery'],
  blocked_queries: [blockedQueriesSchema, 'blockedQueries'],
  compactor_block_upload_enabled: [z.boolean(), 'compactorBlockUploadEnabled'],
  compactor_block_upload_validation_enabled: [z.boolean(), 'compactorBlockUploadValidationEnabled'],
  compactor_block_upload_verify_chunks: [z.boolean(), 'compactorBlockUploadVerifyChunks'],
  compactor_block_upload_max_block_size_bytes: [count, 'compactorBlockUploadMaxBlockSizeBytes'],
} as const satisfies Record<string, readonly [z.ZodType, keyof TenantLimits]>;

type YamlKey = keyof typeof FIELDS;

const tenantOverridesShape = Object.fromEntries(Object.entries(FIELDS).map(([k, [schema]]) => [k, schema.optional()])) as {
  [K in YamlKey]: z.ZodOptional<(typeof FIELDS)[K][0]>;
};

/** Prometheus refuses these combinations in its otlp block; a tenant's overrides are refused the same way. */
export const tenantOverridesSchema = z
  .object(tenantOverridesShape)
  .strict()
  .superRefine((o, ctx) => {
    if (o.promote_all_resource_attributes === true && (o.promote_otel_resource_attributes?.length ?? 0) > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['promote_otel_resource_attributes'],
        message: 'promote_all_resource_attributes and promote_otel_resource_attributes cannot both be set; list exceptions in ignore_resource_attributes',
      });
    }
    if (o.promote_all_resource_attributes !== true && (o.ignore_resource_attributes?.length ?? 0) > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['ignore_resource_attributes'],
        message: 'ignore_resource_attributes needs promote_all_resource_attributes: true',
      });
    }
  });
export type TenantOverrides = z.infer<typeof tenantOverridesSchema>;

export const runtimeConfigSchema = z
  .object({
    overrides: z.record(z.string(), tenantOverridesSchema.nullable()).nullable().optional(),
  })
  .strict()
  .superRefine((c, ctx) => {
    for (const tenant of Object.keys(c.overrides ?? {})) {
      try {
        validateTenantId(tenant);
      } catch (err) {
        ctx.addIssue({ code: 'custom', path: ['overrides', tenant], message: (err as Error).message });
      }
    }
  });

export type RuntimeConfig = z.infer<typeof runtimeConfigSchema>;

/** The defaults with a tenant's overrides applied. */
export function applyOverrides(defaults: Readonly<TenantLimits>, o: TenantOverrides | null | undefined): TenantLimits {
  const out: TenantLimits = { ...defaults };
  if (!o) return out;
  const set = out as unknown as Record<string, unknown>;
  for (const [key, value] of Object.entries(o)) {
    if (value !== undefined) set[FIELDS[key as YamlKey][1]] = value;
  }
  return out;
}

/** A global limit's share on one of `partitions` ingesters (Mimir's partition limiter strategy). 0 stays 0 (no limit / disabled). */
export function localLimit(global: number, partitions: number): number {
  if (global <= 0) return 0;
  return Math.max(1, Math.floor(global / Math.max(1, partitions)));
}
