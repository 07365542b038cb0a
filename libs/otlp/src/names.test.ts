import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatFloatF, labelName, metricName, prometheusUnit, type MetricKind } from './index.ts';
import { namingOf } from './names.ts';

const m = (name: string, unit: string, kind: MetricKind, monotonic = false) => ({ name, unit, kind, monotonic });

test('metric names: tokens, unit suffixes, _total for monotonic sums, _ratio for unit-1 gauges', () => {
  const cases: [ReturnType<typeof m>, string][] = [
    [m('system.filesystem.usage', 'By', 'gauge'), 'system_filesystem_usage_bytes'],
    [m('http.server.request.duration', 's', 'histogram'), 'http_server_request_duration_seconds'],
    [m('http.server.duration', 'ms', 'histogram'), 'http_server_duration_milliseconds'],
    [m('http.server.requests', '{request}', 'sum', true), 'http_server_requests_total'],
    [m('requests_total', '1', 'sum', true), 'requests_total'],
    [m('total.requests', '', 'sum', true), 'requests_total'],
    [m('queue.size', '{item}', 'sum', false), 'queue_size'],
    [m('system.cpu.utilization', '1', 'gauge'), 'system_cpu_utilization_ratio'],
    [m('cache_hit_ratio', '1', 'gauge'), 'cache_hit_ratio'],
    [m('network.io', 'By/s', 'gauge'), 'network_io_bytes_per_second'],
    [m('speed', 'm/s', 'gauge'), 'speed_meters_per_second'],
    [m('events', '1/s', 'gauge'), 'events_per_second'],
    [m('request_duration_seconds', 's', 'histogram'), 'request_duration_seconds'],
    [m('temperature', 'Cel', 'gauge'), 'temperature_celsius'],
    [m('disk.free', '%', 'gauge'), 'disk_free_percent'],
    [m('weird', 'foo.bar', 'gauge'), 'weird_foo_bar'],
    [m('2xx.responses', '', 'gauge'), '_2xx_responses'],
    [m('foo__bar--baz', '', 'gauge'), 'foo_bar_baz'],
    [m('ns:metric.name', '', 'gauge'), 'ns:metric_name'],
    [m('température.salle', '', 'gauge'), 'temp_rature_salle'],
    [m('...', '', 'gauge'), ''],
  ];
  for (const [input, want] of cases) assert.equal(metricName(input), want, JSON.stringify(input));
});

test('metric names without suffixes only fix characters', () => {
  const naming = namingOf('UnderscoreEscapingWithoutSuffixes');
  assert.equal(metricName(m('system.cpu.time', 's', 'sum', true), naming), 'system_cpu_time');
  assert.equal(metricName(m('foo__bar', '', 'gauge'), naming), 'foo__bar');
  assert.equal(metricName(m('9lives', '', 'gauge'), naming), '_9lives');
});

test('strategies without escaping keep UTF-8 names; NoUTF8EscapingWithSuffixes still adds suffixes', () => {
  const none = namingOf('NoTranslation');
  assert.equal(metricName(m('http.server.request.duration', 's', 'histogram'), none), 'http.server.request.duration');
  assert.equal(metricName(m('température.salle', 'Cel', 'gauge'), none), 'température.salle');
  const suffixed = namingOf('NoUTF8EscapingWithSuffixes');
  assert.equal(metricName(m('http.server.request.duration', 's', 'histogram'), suffixed), 'http.server.request.duration_seconds');
  assert.equal(metricName(m('system.network.io', 'By', 'sum', true), suffixed), 'system.network.io_bytes_total');
  assert.equal(metricName(m('requests_total', '', 'sum', true), suffixed), 'requests_total');
  assert.equal(labelName('service.name', false), 'service.name');
  assert.equal(labelName('service.name'), 'service_name');
});

test('the Prometheus unit that metadata reports', () => {
  assert.equal(prometheusUnit('s'), 'seconds');
  assert.equal(prometheusUnit('By/s'), 'bytes_per_second');
  assert.equal(prometheusUnit('1'), '');
  assert.equal(prometheusUnit('{request}'), '');
  assert.equal(prometheusUnit('1/s'), 'per_second');
});

test('label names: invalid characters become _, a leading digit or single _ gets key', () => {
  const cases: [string, string][] = [
    ['http.method', 'http_method'],
    ['http.response.status_code', 'http_response_status_code'],
    ['k8s.pod.name', 'k8s_pod_name'],
    ['a-b c', 'a_b_c'],
    ['0abc', 'key_0abc'],
    ['_private', 'key_private'],
    ['__reserved__', '__reserved__'],
    ['été', 'key_t_'],
    ['', ''],
  ];
  for (const [key, want] of cases) assert.equal(labelName(key), want, key);
});

test("bucket bounds print as Go's FormatFloat(v, 'f', -1): shortest digits, never an exponent", () => {
  const cases: [number, string][] = [
    [0, '0'],
    [0.1, '0.1'],
    [5, '5'],
    [2.5, '2.5'],
    [1e-7, '0.0000001'],
    [-2.5e-8, '-0.000000025'],
    [1.5e-10, '0.00000000015'],
    [1e21, '1000000000000000000000'],
    [1.25e22, '12500000000000000000000'],
    [Infinity, '+Inf'],
    [-Infinity, '-Inf'],
    [NaN, 'NaN'],
  ];
  for (const [v, want] of cases) assert.equal(formatFloatF(v), want, String(v));
});
