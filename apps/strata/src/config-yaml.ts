// Where each flag lives in -config.file: Mimir's YAML layout. Most YAML paths
// are the flag's dotted parts with '-' → '_' (-server.http-listen-port →
// server.http_listen_port); the table holds Mimir's exceptions, and flags
// Strata alone has follow the rule.

const MIMIR_PATHS: Readonly<Record<string, string>> = {
  'log.level': 'server.log_level',
  'log.format': 'server.log_format',
  'auth.multitenancy-enabled': 'multitenancy_enabled',
  'runtime-config.reload-period': 'runtime_config.period',
  // Per-tenant limits: Mimir's `limits` block (also the runtime config file's per-tenant keys).
  'distributor.ingestion-rate-limit': 'limits.ingestion_rate',
  'distributor.ingestion-burst-size': 'limits.ingestion_burst_size',
  'ingester.max-global-series-per-user': 'limits.max_global_series_per_user',
  'validation.max-label-names-per-series': 'limits.max_label_names_per_series',
  'validation.max-length-label-name': 'limits.max_label_name_length',
  'validation.max-length-label-value': 'limits.max_label_value_length',
  'validation.max-metadata-length': 'limits.max_metadata_length',
  'validation.create-grace-period': 'limits.creation_grace_period',
  'validation.past-grace-period': 'limits.past_grace_period',
  'ingester.out-of-order-time-window': 'limits.out_of_order_time_window',
  'ingester.max-global-exemplars-per-user': 'limits.max_global_exemplars_per_user',
  'distributor.ha-tracker.enable-for-all-users': 'limits.accept_ha_samples',
  'distributor.ha-tracker.cluster': 'limits.ha_cluster_label',
  'distributor.ha-tracker.replica': 'limits.ha_replica_label',
  'distributor.ha-tracker.max-clusters': 'limits.ha_max_clusters',
  'querier.max-fetched-series-per-query': 'limits.max_fetched_series_per_query',
  'querier.query-ingesters-within': 'limits.query_ingesters_within',
  'query-frontend.max-cache-freshness': 'limits.max_cache_freshness',
  'query-frontend.results-cache-ttl': 'limits.results_cache_ttl',
  'compactor.blocks-retention-period': 'limits.compactor_blocks_retention_period',
  'compactor.partial-block-deletion-delay': 'limits.compactor_partial_block_deletion_delay',
  // Mimir's HA tracker keys repeat the prefix.
  'distributor.ha-tracker.enable': 'distributor.ha_tracker.enable_ha_tracker',
  'distributor.ha-tracker.update-timeout': 'distributor.ha_tracker.ha_tracker_update_timeout',
  'distributor.ha-tracker.update-timeout-jitter-max': 'distributor.ha_tracker.ha_tracker_update_timeout_jitter_max',
  'distributor.ha-tracker.failover-timeout': 'distributor.ha_tracker.ha_tracker_failover_timeout',
  'blocks-storage.bucket-store.ignore-deletion-marks-delay': 'blocks_storage.bucket_store.ignore_deletion_mark_delay',
  'query-frontend.results-cache.redis.endpoint': 'query_frontend.results_cache.redis.endpoint',
  'ruler.external.url': 'ruler.external_url',
};

/** The flag's dotted YAML path in Mimir's layout. */
export function mimirYamlPath(flag: string): string {
  return MIMIR_PATHS[flag] ?? flag.replaceAll('-', '_');
}
