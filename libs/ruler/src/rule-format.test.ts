import { test } from 'node:test';
import assert from 'node:assert/strict';
import { groupToYaml, parseRuleGroups } from './rule-format.ts';

test('a group round-trips through YAML with its fields', () => {
  const [g] = parseRuleGroups(`
name: g1
interval: 30s
limit: 10
query_offset: 1m
rules:
  - record: job:up:sum
    expr: sum by (job) (up)
    labels: { team: a }
  - alert: Down
    expr: up == 0
    for: 5m
    keep_firing_for: 1m
    annotations: { summary: "{{ $labels.instance }} down" }
`);
  assert.deepEqual(g, {
    name: 'g1',
    interval: 30_000,
    limit: 10,
    queryOffset: 60_000,
    rules: [
      { record: 'job:up:sum', expr: 'sum by (job) (up)', labels: { team: 'a' } },
      { alert: 'Down', expr: 'up == 0', for: 300_000, keepFiringFor: 60_000, annotations: { summary: '{{ $labels.instance }} down' } },
    ],
  });
  assert.deepEqual(parseRuleGroups(groupToYaml(g)), [g]);
});

test('invalid groups are refused with the reason', () => {
  assert.throws(() => parseRuleGroups('name: g\nrules:\n  - record: x\n    expr: sum(\n'), /could not parse expression/);
  assert.throws(() => parseRuleGroups('groups:\n  - name: a\n    rules: []\n  - name: a\n    rules: []\n'), /repeated in the same file/);
  assert.throws(() => parseRuleGroups('name: g\nrules:\n  - record: x\n    alert: y\n    expr: up\n'), /only one of 'record' and 'alert'/);
  assert.throws(() => parseRuleGroups('name: g\nrules:\n  - record: x y\n    expr: up\n'), /invalid recording rule name/);
  assert.throws(() => parseRuleGroups('name: g\nrules:\n  - record: x\n    expr: up\n    for: 1m\n'), /invalid field 'for'/);
  assert.throws(() => parseRuleGroups('name: g\ninterval: soon\nrules: []\n'), /not a valid duration/);
  assert.throws(() => parseRuleGroups('name: ""\nrules: []\n'), /groupname must not be empty/);
  assert.throws(() => parseRuleGroups('name: g\nrulez: []\n'), /field rulez not found/);
});
