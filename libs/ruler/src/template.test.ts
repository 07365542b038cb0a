import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expandTemplate, goFormatG, humanize, humanizeDuration, parseTemplate } from './template.ts';

const data = { labels: { instance: 'host-1:9100', job: 'node' }, externalLabels: { cluster: 'eu' }, externalURL: 'http://ruler', value: 0.25 };

test('values, labels and pipes expand as Prometheus does', () => {
  assert.equal(expandTemplate('a', '{{ $labels.instance }} is at {{ $value }}', data), 'host-1:9100 is at 0.25');
  assert.equal(expandTemplate('a', '{{ .Labels.job }}/{{ .Value }}', data), 'node/0.25');
  assert.equal(expandTemplate('a', '{{ $value | humanizePercentage }}', data), '25%');
  assert.equal(expandTemplate('a', '{{ humanize 1234567 }} {{ $labels.instance | stripPort }}', data), '1.235M host-1');
  assert.equal(expandTemplate('a', '{{ printf "%.1f" $value }} {{ $externalLabels.cluster }} {{ $labels.nope }}', data), '0.2 eu <no value>');
  assert.equal(expandTemplate('a', 'x  {{- $labels.job -}}  y', data), 'xnodey');
  assert.equal(expandTemplate('a', '{{ $labels.job | toUpper }}', data), 'NODE');
});

test('Go float formatting', () => {
  assert.equal(goFormatG(10, -1), '10');
  assert.equal(goFormatG(1e6, -1), '1e+06');
  assert.equal(goFormatG(123456, -1), '123456');
  assert.equal(goFormatG(0.0001, -1), '0.0001');
  assert.equal(goFormatG(0.00001, -1), '1e-05');
  assert.equal(goFormatG(1.5, 4), '1.5');
  assert.equal(goFormatG(1234.4, 4), '1234');
  assert.equal(humanize(0), '0');
  assert.equal(humanize(1500), '1.5k');
  assert.equal(humanize(0.0015), '1.5m');
  assert.equal(humanizeDuration(90061), '1d 1h 1m 1s');
  assert.equal(humanizeDuration(61), '1m 1s');
  assert.equal(humanizeDuration(1.5), '1.5s');
  assert.equal(humanizeDuration(0.25), '250ms');
});

test('unknown functions and control structures are refused at parse time', () => {
  assert.throws(() => parseTemplate('{{ nope $value }}'), /function "nope" not defined/);
  assert.throws(() => parseTemplate('{{ if $value }}x{{ end }}'), /not supported/);
  assert.throws(() => parseTemplate('{{ $value'), /unclosed action/);
  assert.match(expandTemplate('a', '{{ humanize "abc" }}', data), /^<error expanding template: /);
});
