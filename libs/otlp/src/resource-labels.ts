// The labels an OTLP data point's series gets from its attributes, its resource and its
// scope, in the order Prometheus' OTLP translator applies them: the point's attributes,
// then promoted resource attributes where the point has no such label, then `job` and
// `instance`, then the `otel_scope_*` labels. target_info gets none of the promotions.

import type { KeyValue } from './model.ts';
import { labelName, type Naming } from './names.ts';

const SERVICE_NAME = 'service.name';
const SERVICE_NAMESPACE = 'service.namespace';
const SERVICE_INSTANCE_ID = 'service.instance.id';
const IDENTIFYING: ReadonlySet<string> = new Set([SERVICE_NAME, SERVICE_NAMESPACE, SERVICE_INSTANCE_ID]);

/** Which resource attributes become labels: the listed ones, or (`all`) every one but the listed ones. */
export interface Promotion {
  all: boolean;
  names: ReadonlySet<string>;
}

/** What one ResourceMetrics (and its current ScopeMetrics) adds to each of its series. */
export interface Resource {
  attributes: readonly KeyValue[];
  /** Attribute keys are escaped to Prometheus 2's label characters. */
  escape: boolean;
  job: string | undefined;
  instance: string | undefined;
  /** Promoted resource attributes by label name, in the order set. */
  promoted: ReadonlyMap<string, string>;
  /** The scope's `otel_scope_*` labels ('' deletes the label), when scope promotion is on and the scope has a name. */
  scope: ReadonlyMap<string, string> | undefined;
}

export function resourceOf(attributes: readonly KeyValue[], naming: Naming, promotion: Promotion | undefined): Resource {
  const get = (key: string) => attributes.find((a) => a.key === key)?.value;
  const name = get(SERVICE_NAME);
  const namespace = get(SERVICE_NAMESPACE);
  return {
    attributes,
    escape: naming.escape,
    job: name === undefined ? undefined : namespace === undefined ? name : `${namespace}/${name}`,
    instance: get(SERVICE_INSTANCE_ID),
    promoted: promotedLabels(attributes, naming.escape, promotion),
    scope: undefined,
  };
}

/** A later attribute that sanitises to the same name replaces the earlier one (no `;` join, as Prometheus). */
function promotedLabels(attributes: readonly KeyValue[], escape: boolean, promotion: Promotion | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (promotion === undefined || (!promotion.all && promotion.names.size === 0)) return out;
  for (const a of attributes) {
    if (promotion.names.has(a.key) === promotion.all) continue;
    setOrDelete(out, labelName(a.key, escape), a.value);
  }
  return out;
}

/**
 * The scope labels: each scope attribute as `otel_scope_<key>`, then `otel_scope_name`,
 * `otel_scope_version` and `otel_scope_schema_url`; none for a scope without a name.
 */
export function scopeLabels(
  scope: { name: string; version: string; attributes: readonly KeyValue[] },
  schemaUrl: string,
  escape: boolean,
): Map<string, string> | undefined {
  if (scope.name === '') return undefined;
  const out = new Map<string, string>();
  for (const a of scope.attributes) out.set(labelName('otel_scope_' + a.key, escape), a.value);
  out.set('otel_scope_name', scope.name);
  out.set('otel_scope_version', scope.version);
  out.set('otel_scope_schema_url', schemaUrl);
  return out;
}

/** A data point's labels before its name: attributes, promoted resource attributes, job and instance, scope labels. */
export function baseLabels(resource: Resource, attributes: readonly KeyValue[]): Map<string, string> {
  const labels = attributeLabels(attributes, resource.escape);
  for (const [n, v] of resource.promoted) if (!labels.has(n)) labels.set(n, v);
  setJobAndInstance(labels, resource);
  if (resource.scope !== undefined) for (const [n, v] of resource.scope) setOrDelete(labels, n, v);
  return labels;
}

/** target_info's labels: the resource's attributes but the identifying ones (unless kept), job and instance. */
export function targetInfoLabels(resource: Resource, keepIdentifying: boolean): Map<string, string> | undefined {
  if (!resource.attributes.some((a) => !IDENTIFYING.has(a.key))) return undefined;
  const labels = attributeLabels(keepIdentifying ? resource.attributes : resource.attributes.filter((a) => !IDENTIFYING.has(a.key)), resource.escape);
  setJobAndInstance(labels, resource);
  return labels.has('job') || labels.has('instance') ? labels : undefined;
}

/**
 * Labels from attributes, sorted by key, names escaped unless the strategy keeps them;
 * keys that sanitise to the same name have their values joined with `;`.
 */
function attributeLabels(attributes: readonly KeyValue[], escape: boolean): Map<string, string> {
  const sorted = attributes.slice().sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const labels = new Map<string, string>();
  for (const a of sorted) {
    const name = labelName(a.key, escape);
    const prev = labels.get(name);
    labels.set(name, prev === undefined ? a.value : `${prev};${a.value}`);
  }
  return labels;
}

function setJobAndInstance(labels: Map<string, string>, resource: Resource): void {
  if (resource.job !== undefined) labels.set('job', resource.job);
  if (resource.instance !== undefined) labels.set('instance', resource.instance);
}

/** Prometheus' labels.Builder.Set: an empty value removes the label. */
function setOrDelete(labels: Map<string, string>, name: string, value: string): void {
  if (value === '') labels.delete(name);
  else labels.set(name, value);
}
