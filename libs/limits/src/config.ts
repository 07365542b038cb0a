// Default per-tenant limits as flags (Mimir's names and defaults, except where
// said) and the runtime config file that overrides them per tenant. A `yaml` meta
// is the flag's key in -config.file: Mimir's `limits` block, the runtime file's names.

import { z } from 'zod';
import { boolFlag, duration } from '@strata/service';
import { NAME_VALIDATION_SCHEMES, OTEL_TRANSLATION_STRATEGIES, type TenantLimits } from './limits.ts';

const count = (fallback: number) => z.coerce.number().int().nonnegative().default(fallback);
const positive = (fallback: number) => z.coerce.number().int().positive().default(fallback);

export const limitsConfigShape = {
  'distributor.ingestion-rate-limit': z.coerce
    .number()
    .nonnegative()
    .default(10_000)
    .describe('Per-tenant samples/s each distributor admits; over it 429 (-target=all without multi-tenancy: 10000000).')
    .meta({ yaml: 'limits.ingestion_rate' }),
  'distributor.ingestion-burst-size': count(200_000)
    .describe('Per-tenant burst of samples above the rate (-target=all without multi-tenancy: 10000000).')
    .meta({ yaml: 'limits.ingestion_burst_size' }),
  'ingester.max-global-series-per-user': count(150_000)
    .describe('Per-tenant active series, split over the partitions; 0: no limit (-target=all without multi-tenancy: 0).')
    .meta({ yaml: 'limits.max_global_series_per_user' }),
  'validation.max-label-names-per-series': positive(30)
    .describe('Per-tenant label names one series may have; more: the series is rejected (400).')
    .meta({ yaml: 'limits.max_label_names_per_series' }),
  'validation.max-length-label-name': positive(1024)
    .describe('Per-tenant longest label name; longer: the series is rejected (400).')
    .meta({ yaml: 'limits.max_label_name_length' }),
  'validation.max-length-label-value': positive(2048)
    .describe('Per-tenant longest label value; longer: the series is rejected (400).')
    .meta({ yaml: 'limits.max_label_value_length' }),
  'validation.max-metadata-length': positive(1024)
    .describe('Per-tenant longest metadata name or unit (dropped, 400); HELP is truncated to it.')
    .meta({ yaml: 'limits.max_metadata_length' }),
  'validation.create-grace-period': duration('10m')
    .describe('Per-tenant: samples further in the future than this are rejected (400).')
    .meta({ yaml: 'limits.creation_grace_period' }),
  'validation.past-grace-period': duration('0s')
    .describe('Per-tenant: samples older than this are rejected (400); 0s: off.')
    .meta({ yaml: 'limits.past_grace_period' }),
  'ingester.out-of-order-time-window': duration('0s')
    .describe('Per-tenant window in which out-of-order samples are still accepted; 0s: none.')
    .meta({ yaml: 'limits.out_of_order_time_window' }),
  // Mimir's default is 0 (exemplars off); Strata keeps them by default because linking a graph
  // to a trace is a core use, and 100000 is the head's own default ring size.
  'ingester.max-global-exemplars-per-user': count(100_000)
    .describe('Per-tenant exemplars kept, split over the partitions; 0 turns exemplars off.')
    .meta({ yaml: 'limits.max_global_exemplars_per_user' }),
  'distributor.ha-tracker.enable-for-all-users': boolFlag(false)
    .describe('Per-tenant accept_ha_samples default: deduplicate HA replicas for every tenant.')
    .meta({ yaml: 'limits.accept_ha_samples' }),
  'distributor.ha-tracker.cluster': z
    .string()
    .min(1)
    .default('cluster')
    .describe('Per-tenant label naming the HA cluster a sample comes from.')
    .meta({ yaml: 'limits.ha_cluster_label' }),
  'distributor.ha-tracker.replica': z
    .string()
    .min(1)
    .default('__replica__')
    .describe('Per-tenant label naming the HA replica; removed from written series.')
    .meta({ yaml: 'limits.ha_replica_label' }),
  'distributor.ha-tracker.max-clusters': count(100)
    .describe('Per-tenant HA clusters tracked; a push from one more is 400; 0: no limit.')
    .meta({ yaml: 'limits.ha_max_clusters' }),
  'ingester.native-histograms-ingestion-enabled': boolFlag(true).describe(
    'Per-tenant: native histograms are ingested; false: they are dropped (counted as discarded).',
  ),
  'validation.name-validation-scheme': z
    .enum(NAME_VALIDATION_SCHEMES)
    .default('legacy')
    .describe('Per-tenant metric and label names accepted: legacy ([a-zA-Z_:][a-zA-Z0-9_:]*) or utf8 (any UTF-8, as Prometheus 3).'),
  'distributor.otel-translation-strategy': z
    .enum(OTEL_TRANSLATION_STRATEGIES)
    .default('UnderscoreEscapingWithSuffixes')
    .describe('Per-tenant OTLP name translation, as Prometheus names them; NoUTF8EscapingWithSuffixes and NoTranslation keep dots and need the utf8 scheme.'),
  'distributor.otel-native-delta-ingestion': boolFlag(false)
    .describe('Per-tenant: OTLP delta sums and histograms are stored as sent (query with sum_over_time); false: refused (400).')
    .meta({ yaml: 'limits.otel_native_delta_ingestion' }),
  'distributor.otel-promote-resource-attributes': z
    .string()
    .default('')
    .transform((s) =>
      s
        .split(',')
        .map((x) => x.trim())
        .filter((x) => x !== ''),
    )
    .describe('Per-tenant comma-separated OTLP resource attributes copied onto every series of the resource as labels.')
    .meta({ yaml: 'limits.promote_otel_resource_attributes' }),
  'distributor.otel-keep-identifying-resource-attributes': boolFlag(false)
    .describe('Per-tenant: target_info keeps service.name, service.namespace and service.instance.id besides job and instance.')
    .meta({ yaml: 'limits.otel_keep_identifying_resource_attributes' }),
  'distributor.otel-convert-histograms-to-nhcb': boolFlag(false)
    .describe('Per-tenant: OTLP explicit-bucket histograms become native histograms with custom buckets instead of _bucket series.')
    .meta({ yaml: 'limits.otel_convert_histograms_to_nhcb' }),
  'distributor.otel-promote-scope-metadata': boolFlag(false)
    .describe('Per-tenant: the OTLP scope name, version, schema URL and attributes become otel_scope_* labels.')
    .meta({ yaml: 'limits.otel_promote_scope_metadata' }),
  'validation.max-native-histogram-buckets': count(0).describe(
    'Per-tenant buckets one native histogram may have; more: its resolution is lowered until it fits; 0: no limit.',
  ),
  // Off by default, as Prometheus' created-timestamp-zero-ingestion feature and Mimir's OTLP flag are.
  'distributor.created-timestamp-zero-ingestion-enabled': boolFlag(false)
    .describe('Per-tenant: remote write 2.0 and OTLP start (created) timestamps become a zero sample at that time, as Prometheus does.')
    .meta({ yaml: 'limits.created_timestamp_zero_ingestion_enabled' }),
  'query-frontend.max-total-query-length': duration('0s')
    .describe('Per-tenant: a range query longer than this (end - start) is refused with 400; 0s: no limit. blocked_queries: runtime overrides only.')
    .meta({ yaml: 'limits.max_total_query_length' }),
  'querier.max-query-lookback': duration('0s')
    .describe('Per-tenant: queries read no data older than this (the start is moved up, as Mimir does; all older: empty answer); 0s: no limit.')
    .meta({ yaml: 'limits.max_query_lookback' }),
  'querier.max-query-parallelism': positive(14)
    .describe('Per-tenant: splits by interval (-query-frontend.split-queries-by-interval) of one range query that run at once.')
    .meta({ yaml: 'limits.max_query_parallelism' }),
  // Mimir's default is 2000000; Strata's memory-sized series and chunk-bytes limits already bound a query.
  'querier.max-fetched-chunks-per-query': count(0)
    .describe('Per-tenant chunks one query may fetch from ingesters and the bucket (decoded head reads: 120 samples a chunk); over it 422; 0: no limit.')
    .meta({ yaml: 'limits.max_fetched_chunks_per_query' }),
  'distributor.otel-created-timestamp-zero-ingestion-enabled': boolFlag(false)
    .describe("Per-tenant, Mimir's OTLP-only form: OTLP start times become a zero sample at that time.")
    .meta({ yaml: 'limits.otel_created_timestamp_zero_ingestion_enabled' }),
  'compactor.block-upload-enabled': boolFlag(false)
    .describe("Per-tenant: the compactor's block-upload API (mimirtool backfill) accepts the tenant's blocks; false: 400.")
    .meta({ yaml: 'limits.compactor_block_upload_enabled' }),
  'compactor.block-upload-validation-enabled': boolFlag(true)
    .describe("Per-tenant: an uploaded block's index and chunks are checked before it becomes visible.")
    .meta({ yaml: 'limits.compactor_block_upload_validation_enabled' }),
  'compactor.block-upload-verify-chunks': boolFlag(true)
    .describe('Per-tenant: block-upload validation also reads every chunk (checksum, sample order).')
    .meta({ yaml: 'limits.compactor_block_upload_verify_chunks' }),
  'compactor.block-upload-max-block-size-bytes': count(0)
    .describe('Per-tenant largest block the upload API accepts (sum of its files, bytes); 0: no limit.')
    .meta({ yaml: 'limits.compactor_block_upload_max_block_size_bytes' }),
};

export const runtimeConfigShape = {
  'runtime-config.file': z
    .string()
    .default('')
    .describe("Mimir's runtime config file, overrides: { <tenant>: { <limit>: value } }, re-read live; empty: flag defaults only."),
  'runtime-config.reload-period': duration('10s').describe('How often the runtime config file is re-read.').meta({ yaml: 'runtime_config.period' }),
};

export type LimitsConfig = z.infer<z.ZodObject<typeof limitsConfigShape>>;
export type RuntimeConfigFlags = z.infer<z.ZodObject<typeof runtimeConfigShape>>;

export function defaultLimitsFromFlags(c: LimitsConfig): TenantLimits {
  return {
    ingestionRate: c['distributor.ingestion-rate-limit'],
    ingestionBurstSize: c['distributor.ingestion-burst-size'],
    maxGlobalSeriesPerUser: c['ingester.max-global-series-per-user'],
    maxLabelNamesPerSeries: c['validation.max-label-names-per-series'],
    maxLabelNameLength: c['validation.max-length-label-name'],
    maxLabelValueLength: c['validation.max-length-label-value'],
    maxMetadataLength: c['validation.max-metadata-length'],
    creationGracePeriodMs: c['validation.create-grace-period'],
    pastGracePeriodMs: c['validation.past-grace-period'],
    outOfOrderTimeWindowMs: c['ingester.out-of-order-time-window'],
    maxGlobalExemplarsPerUser: c['ingester.max-global-exemplars-per-user'],
    acceptHaSamples: c['distributor.ha-tracker.enable-for-all-users'],
    haClusterLabel: c['distributor.ha-tracker.cluster'],
    haReplicaLabel: c['distributor.ha-tracker.replica'],
    haMaxClusters: c['distributor.ha-tracker.max-clusters'],
    nativeHistogramsIngestionEnabled: c['ingester.native-histograms-ingestion-enabled'],
    maxNativeHistogramBuckets: c['validation.max-native-histogram-buckets'],
    nameValidationScheme: c['validation.name-validation-scheme'],
    otelTranslationStrategy: c['distributor.otel-translation-strategy'],
    otelNativeDeltaIngestion: c['distributor.otel-native-delta-ingestion'],
    promoteOtelResourceAttributes: c['distributor.otel-promote-resource-attributes'],
    // Prometheus' otlp block settings, which Mimir has no flag for: per tenant in the runtime config only.
    promoteAllResourceAttributes: false,
    ignoreResourceAttributes: [],
    otelKeepIdentifyingResourceAttributes: c['distributor.otel-keep-identifying-resource-attributes'],
    otelPromoteScopeMetadata: c['distributor.otel-promote-scope-metadata'],
    otelConvertHistogramsToNhcb: c['distributor.otel-convert-histograms-to-nhcb'],
    // The ruler's own flag (-ruler.alertmanager-url) applies where a tenant sets none.
    rulerAlertmanagerUrl: '',
    // Per tenant in the runtime config only, as in Mimir.
    metricRelabelConfigs: [],
    dropLabels: [],
    createdTimestampZeroIngestionEnabled: c['distributor.created-timestamp-zero-ingestion-enabled'],
    otelCreatedTimestampZeroIngestionEnabled: c['distributor.otel-created-timestamp-zero-ingestion-enabled'],
    maxTotalQueryLengthMs: c['query-frontend.max-total-query-length'],
    maxQueryLookbackMs: c['querier.max-query-lookback'],
    maxQueryParallelism: c['querier.max-query-parallelism'],
    maxFetchedChunksPerQuery: c['querier.max-fetched-chunks-per-query'],
    // The querier's flags, sized from the memory budget, apply where a tenant sets none.
    maxFetchedSeriesPerQuery: undefined,
    maxFetchedChunkBytesPerQuery: undefined,
    blockedQueries: [],
    compactorBlockUploadEnabled: c['compactor.block-upload-enabled'],
    compactorBlockUploadValidationEnabled: c['compactor.block-upload-validation-enabled'],
    compactorBlockUploadVerifyChunks: c['compactor.block-upload-verify-chunks'],
    compactorBlockUploadMaxBlockSizeBytes: c['compactor.block-upload-max-block-size-bytes'],
  };
}

/** The flag defaults alone, as a parse of no flags would give. */
export const DEFAULT_LIMITS: Readonly<TenantLimits> = Object.freeze(defaultLimitsFromFlags(z.object(limitsConfigShape).parse({})));
