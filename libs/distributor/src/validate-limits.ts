// The distributor's per-tenant checks beyond label syntax: sample timestamps
// against the creation and past grace periods, and metric metadata against
// max_metadata_length (Mimir's pkg/distributor/validate.go rules). Failures are
// values with a stable code and a one-line message that says what to do.

import type { TenantLimits } from '@strata/limits';
import type { Label } from '@strata/model';
import { formatSeries, type MetricMetadata } from '@strata/remote-write';
import { formatDuration } from '@strata/service';

export interface LimitFailure {
  code: string;
  message: string;
}

/**
 * A series with any sample newer than now + creation grace, or (with a past
 * grace period) older than now - past grace - OOO window, is rejected whole, as
 * Mimir rejects a series on its first invalid sample.
 */
export function checkSampleTimes(
  s: { labels: readonly Label[]; minTimestamp: number; maxTimestamp: number },
  now: number,
  limits: Readonly<TenantLimits>,
): LimitFailure | undefined {
  if (s.maxTimestamp > now + limits.creationGracePeriodMs) {
    return {
      code: 'err-strata-sample-too-far-in-future',
      message:
        `received a sample whose timestamp ${timestamp(s.maxTimestamp)} is too far in the future (more than ${formatDuration(limits.creationGracePeriodMs)} ` +
        `ahead of the server's clock) in series ${formatSeries(s.labels)} (err-strata-sample-too-far-in-future); check the sender's clock, ` +
        `or raise creation_grace_period for the tenant (-validation.create-grace-period)`,
    };
  }
  if (limits.pastGracePeriodMs > 0 && s.minTimestamp < now - limits.pastGracePeriodMs - limits.outOfOrderTimeWindowMs) {
    return {
      code: 'err-strata-sample-too-far-in-past',
      message:
        `received a sample whose timestamp ${timestamp(s.minTimestamp)} is too far in the past (older than ` +
        `${formatDuration(limits.pastGracePeriodMs + limits.outOfOrderTimeWindowMs)}) in series ${formatSeries(s.labels)} (err-strata-sample-too-far-in-past); ` +
        `stop sending old data, or raise past_grace_period for the tenant (-validation.past-grace-period)`,
    };
  }
  return undefined;
}

/**
 * Metadata whose family name or unit is longer than max_metadata_length (UTF-8
 * bytes) is rejected; a longer HELP is cut to the limit at a character boundary.
 * Returns the metadata to route (the same object when unchanged).
 */
export function checkMetadata<M extends MetricMetadata>(m: M, limits: Readonly<TenantLimits>): { metadata: MetricMetadata } | LimitFailure {
  const max = limits.maxMetadataLength;
  const nameBytes = Buffer.byteLength(m.metricFamilyName, 'utf8');
  if (nameBytes > max) {
    return {
      code: 'err-strata-metadata-metric-name-too-long',
      message:
        `received metric metadata whose metric family name is ${nameBytes} bytes, above the limit of ${max} (name ${snippet(m.metricFamilyName)}) ` +
        `(err-strata-metadata-metric-name-too-long); shorten it or raise max_metadata_length for the tenant (-validation.max-metadata-length)`,
    };
  }
  const unitBytes = Buffer.byteLength(m.unit, 'utf8');
  if (unitBytes > max) {
    return {
      code: 'err-strata-metadata-unit-too-long',
      message:
        `received metric metadata for ${JSON.stringify(m.metricFamilyName)} whose unit is ${unitBytes} bytes, above the limit of ${max} ` +
        `(err-strata-metadata-unit-too-long); shorten it or raise max_metadata_length for the tenant (-validation.max-metadata-length)`,
    };
  }
  if (m.help.length > max / 3 && Buffer.byteLength(m.help, 'utf8') > max) {
    return { metadata: { type: m.type, metricFamilyName: m.metricFamilyName, help: truncateUtf8(m.help, max), unit: m.unit } };
  }
  return { metadata: m };
}

/** The longest prefix of `s` of at most `max` UTF-8 bytes that ends on a character boundary. */
function truncateUtf8(s: string, max: number): string {
  const b = Buffer.from(s, 'utf8');
  if (b.length <= max) return s;
  let end = max;
  while (end > 0 && (b[end] & 0xc0) === 0x80) end--;
  return b.subarray(0, end).toString('utf8');
}

function timestamp(ms: number): string {
  return Math.abs(ms) <= 8.64e15 ? `${ms} (${new Date(ms).toISOString()})` : String(ms);
}

function snippet(s: string): string {
  return JSON.stringify(s.length > 100 ? s.slice(0, 100) + '…' : s);
}
