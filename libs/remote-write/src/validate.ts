// Series label validation with Prometheus/Mimir rules, run by the distributor on
// every series before it is routed. Returns failures as values: one bad series
// must not fail its request's valid ones. Labels sent out of order are sorted in
// place first (sortLabelsInPlace), as Prometheus and Mimir sort them.
//
// Empty label values follow Mimir (pkg/distributor/distributor.go,
// prePushSortAndFilterMiddleware, and mimirpb.PreallocTimeseries.RemoveEmptyLabelValues):
// "Prometheus strips empty values before storing; drop them now", i.e. a label
// with an empty value is the same as no label. Mimir strips them *before*
// validateLabels runs, so such a label is never rejected, whatever its name, and
// does not count toward the label limit; `__name__=""` therefore reads as a
// missing metric name. The caller drops them from what it stores and routes with
// withoutEmptyLabelValues() + replaceSeriesLabels(). An empty label *name* with a
// non-empty value is invalid (it fails the name syntax).
//
// Unsorted label names are accepted on every protocol: Prometheus' receiver sorts
// them (prompb's ToLabels) and so does Mimir's push middleware, though remote
// write 1.0 says senders MUST sort. The distributor then routes re-encoded bytes
// for such a series; sorted ones keep the sender's. Duplicate names are still
// refused. One deliberate difference from Mimir: a series left with no labels at
// all is rejected as missing its metric name, where Mimir drops it silently.

import { METRIC_NAME, type Label } from '@strata/model';
import type { ParsedSeries } from './parse-v1.ts';

export type ValidationCode =
  | 'err-strata-missing-metric-name'
  | 'err-strata-invalid-metric-name'
  | 'err-strata-max-label-names-per-series'
  | 'err-strata-invalid-label'
  | 'err-strata-label-name-too-long'
  | 'err-strata-invalid-label-value'
  | 'err-strata-label-value-too-long'
  | 'err-strata-duplicate-label-names';

export interface ValidationFailure {
  code: ValidationCode;
  /** What the request is answered as if this is its first failure: always bad-input (the edge says 400). */
  kind: 'bad-input';
  /** One line naming the series and saying what to fix. */
  message: string;
}

/**
 * Which metric and label names are valid: `legacy` is Prometheus 2's
 * `[a-zA-Z_:][a-zA-Z0-9_:]*` (labels without `:`), `utf8` is Prometheus 3's
 * any non-empty UTF-8 string (`http.server.request.duration`, `service.name`).
 */
export type NameValidationScheme = 'legacy' | 'utf8';

export interface LabelLimits {
  /** Default `legacy`. */
  nameValidationScheme?: NameValidationScheme;
  maxLabelNamesPerSeries?: number;
  /** In UTF-8 bytes, as Mimir counts. */
  maxLabelNameLength?: number;
  maxLabelValueLength?: number;
}

/** Mimir's defaults, used for any limit not given. */
export const DEFAULT_LABEL_LIMITS: Readonly<Required<LabelLimits>> = {
  nameValidationScheme: 'legacy',
  maxLabelNamesPerSeries: 30,
  maxLabelNameLength: 1024,
  maxLabelValueLength: 2048,
};

const SERIES_MAX_CHARS = 200;
const SNIPPET_MAX_CHARS = 100;

/**
 * Sorts labels by name (UTF-8 byte order, as Prometheus compares them) in place;
 * true when they were not sorted. A sorted series costs one compare per label.
 */
export function sortLabelsInPlace(labels: Label[]): boolean {
  for (let i = 1; i < labels.length; i++) {
    if (compareNames(labels[i - 1].name, labels[i].name) > 0) {
      labels.sort((a, b) => compareNames(a.name, b.name));
      return true;
    }
  }
  return false;
}

/**
 * Validates one series' labels, which must be sorted by name (sortLabelsInPlace);
 * `undefined` means valid. Labels with empty values count as absent.
 */
export function validateSeriesLabels(labels: readonly Label[], limits?: LabelLimits): ValidationFailure | undefined {
  const maxNames = limits?.maxLabelNamesPerSeries ?? DEFAULT_LABEL_LIMITS.maxLabelNamesPerSeries;
  const maxNameLength = limits?.maxLabelNameLength ?? DEFAULT_LABEL_LIMITS.maxLabelNameLength;
  const maxValueLength = limits?.maxLabelValueLength ?? DEFAULT_LABEL_LIMITS.maxLabelValueLength;
  const utf8 = limits?.nameValidationScheme === 'utf8';

  let metricName: string | undefined;
  let count = 0;
  for (const l of labels) {
    if (l.value === '') continue;
    count++;
    if (metricName === undefined && l.name === METRIC_NAME) metricName = l.value;
  }
  if (metricName === undefined) {
    return fail(
      'err-strata-missing-metric-name',
      `received a series with no metric name (no non-empty ${METRIC_NAME} label) ${inSeries(labels)}; add a ${METRIC_NAME} label`,
    );
  }
  if (utf8 ? !isWellFormed(metricName) : !isValidMetricName(metricName)) {
    return fail(
      'err-strata-invalid-metric-name',
      utf8
        ? `received a series whose metric name is not valid UTF-8 ${inSeries(labels)}; send names as UTF-8`
        : `received a series with invalid metric name ${snippet(metricName)} ${inSeries(labels)}; metric names must match [a-zA-Z_:][a-zA-Z0-9_:]* (or set the tenant's name_validation_scheme to utf8)`,
    );
  }
  if (count > maxNames) {
    return fail(
      'err-strata-max-label-names-per-series',
      `received a series with ${count} labels, above the limit of ${maxNames} ${inSeries(labels)}; drop labels (e.g. with relabelling) or raise -validation.max-label-names-per-series for the tenant`,
    );
  }

  let prev: string | undefined;
  for (const l of labels) {
    if (l.value === '') continue;
    const name = l.name;
    if (utf8 ? name === '' || !isWellFormed(name) : !isValidLabelName(name)) {
      return fail(
        'err-strata-invalid-label',
        utf8
          ? `received a series with a label name that is empty or not valid UTF-8 ${inSeries(labels)}; send non-empty UTF-8 names`
          : `received a series with invalid label name ${snippet(name)} ${inSeries(labels)}; label names must match [a-zA-Z_][a-zA-Z0-9_]* (or set the tenant's name_validation_scheme to utf8)`,
      );
    }
    const nameBytes = utf8Length(name, maxNameLength);
    if (nameBytes > maxNameLength) {
      return fail(
        'err-strata-label-name-too-long',
        `received a series with a label name of ${nameBytes} bytes, above the limit of ${maxNameLength} (label ${snippet(name)}) ${inSeries(labels)}; shorten it or raise -validation.max-length-label-name for the tenant`,
      );
    }
    if (!isWellFormed(l.value)) return invalidValue(name, labels);
    const valueBytes = utf8Length(l.value, maxValueLength);
    if (valueBytes > maxValueLength) {
      return fail(
        'err-strata-label-value-too-long',
        `received a series whose label ${JSON.stringify(name)} has a value of ${valueBytes} bytes, above the limit of ${maxValueLength} (value ${snippet(l.value)}) ${inSeries(labels)}; shorten it or raise -validation.max-length-label-value for the tenant`,
      );
    }
    if (name === prev) {
      return fail(
        'err-strata-duplicate-label-names',
        `received a series with duplicate label name ${JSON.stringify(name)} ${inSeries(labels)}; send each label name once`,
      );
    }
    prev = name;
  }
  return undefined;
}

/**
 * validateSeriesLabels for a parsed series, which also knows whether the sent
 * bytes were UTF-8 (the decoded strings no longer can say).
 */
export function validateParsedSeries(series: Pick<ParsedSeries, 'labels' | 'invalidUtf8'>, limits?: LabelLimits): ValidationFailure | undefined {
  const failure = validateSeriesLabels(series.labels, limits);
  if (failure !== undefined || !series.invalidUtf8) return failure;
  for (const l of series.labels) {
    // Only a utf8 scheme lets a non-ASCII name this far.
    if (l.name.includes('\ufffd'))
      return fail('err-strata-invalid-label', `received a series with a label name that is not valid UTF-8 ${inSeries(series.labels)}; send names as UTF-8`);
    if (l.value.includes('\ufffd')) return invalidValue(l.name, series.labels);
  }
  return undefined;
}

/** The labels without empty-valued ones; the same array when there are none (the common case). */
export function withoutEmptyLabelValues(labels: Label[]): Label[] {
  let i = 0;
  while (i < labels.length && labels[i].value !== '') i++;
  if (i === labels.length) return labels;
  const out = labels.slice(0, i);
  for (i++; i < labels.length; i++) if (labels[i].value !== '') out.push(labels[i]);
  return out;
}

/** `{__name__="up", job="api"}`, cut at about 200 characters. */
export function formatSeries(labels: readonly Label[]): string {
  let s = '{';
  for (let i = 0; i < labels.length; i++) {
    if (i > 0) s += ', ';
    // A name that is not a valid label name is quoted too, so control characters never reach the one-line reason.
    const name = labels[i].name;
    s += (isValidLabelName(name) ? name : JSON.stringify(name)) + '=' + JSON.stringify(labels[i].value);
    if (s.length > SERIES_MAX_CHARS) return s.slice(0, SERIES_MAX_CHARS) + '…}';
  }
  return s + '}';
}

function isValidMetricName(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ok = (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c === 58 || (i > 0 && c >= 48 && c <= 57);
    if (!ok) return false;
  }
  return true;
}

function isValidLabelName(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ok = (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || (i > 0 && c >= 48 && c <= 57);
    if (!ok) return false;
  }
  return true;
}

function invalidValue(name: string, labels: readonly Label[]): ValidationFailure {
  return fail(
    'err-strata-invalid-label-value',
    `received a series whose label ${JSON.stringify(name)} has a value that is not valid UTF-8 ${inSeries(labels)}; send label values as UTF-8`,
  );
}

function fail(code: ValidationCode, message: string): ValidationFailure {
  return { code, kind: 'bad-input', message };
}

function inSeries(labels: readonly Label[]): string {
  return 'in series ' + formatSeries(labels);
}

function snippet(s: string): string {
  return JSON.stringify(s.length > SNIPPET_MAX_CHARS ? s.slice(0, SNIPPET_MAX_CHARS) + '…' : s);
}

/** Byte order of the UTF-8 encodings, which UTF-16 order is too unless a surrogate pair meets U+E000..U+FFFF. */
function compareNames(a: string, b: string): number {
  if (hasHighUnits(a) || hasHighUnits(b)) return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
  return a < b ? -1 : a > b ? 1 : 0;
}

function hasHighUnits(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 0xd800) return true;
  return false;
}

/** UTF-8 length of `s`, counted exactly only when it could exceed `limit`. */
function utf8Length(s: string, limit: number): number {
  // Each UTF-16 unit is 1 to 3 UTF-8 bytes.
  if (s.length * 3 <= limit) return s.length;
  return Buffer.byteLength(s, 'utf8');
}

type WellFormed = (this: string) => boolean;
const nativeIsWellFormed = (String.prototype as unknown as { isWellFormed?: WellFormed }).isWellFormed;

/** No lone surrogates, i.e. the string has a UTF-8 encoding. */
function isWellFormed(s: string): boolean {
  if (nativeIsWellFormed !== undefined) return nativeIsWellFormed.call(s);
  return Buffer.from(s, 'utf8').toString('utf8') === s;
}
