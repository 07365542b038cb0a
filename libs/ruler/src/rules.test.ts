// Prometheus' rule semantics, driven with explicit timestamps over an Engine on
// an in-memory store that also receives the rules' output.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { labelsFromRecord, labelsToRecord } from '@strata/model';
import { MemoryQuerier } from '@strata/model/testing';
import { Engine } from '@strata/promql';
import type { SeriesInput } from '@strata/remote-write';
import { EvaluatedGroup, type GroupContext } from './group.ts';
import { parseRuleGroups } from './rule-format.ts';
import { AlertingRule, type NotifiedAlert } from './rules.ts';

const T0 = 1_700_000_000_000;

function setup(yaml: string, opts: Partial<GroupContext> = {}) {
  const store = new MemoryQuerier();
  const engine = new Engine({ querier: store });
  const pushed: SeriesInput[] = [];
  const sent: NotifiedAlert[] = [];
  const strongCalls: string[] = [];
  const failures: string[] = [];
  const ctx: GroupContext = {
    querier: {
      query: async (p) => {
        if (p.strong) strongCalls.push(p.expr);
        return engine.instantQuery({ tenant: p.tenant, query: p.expr, time: p.time });
      },
    },
    pusher: {
      push: async (tenant, series) => {
        for (const s of series) {
          pushed.push(s);
          for (const smp of s.samples) if (!smp.stale) store.append(tenant, s.labels, [smp.timestamp], [smp.value]);
        }
      },
    },
    sender: { send: (_t, alerts) => sent.push(...alerts) },
    resendDelayMs: 60_000,
    forOutageToleranceMs: 3_600_000,
    forGracePeriodMs: 600_000,
    externalURL: 'http://ruler.example',
    template: { externalLabels: {}, externalURL: 'http://ruler.example' },
    onRuleFailure: (_g, rule, err) => failures.push(`${rule.name}: ${(err as Error).message}`),
    ...opts,
  };
  const [desc] = parseRuleGroups(yaml);
  const group = new EvaluatedGroup('t1', 'ns', desc, desc.interval ?? 15_000, ctx);
  const gauge = (name: string, labels: Record<string, string>, t: number, v: number) =>
    store.append('t1', labelsFromRecord({ __name__: name, ...labels }), [t], [v]);
  return { store, engine, group, ctx, pushed, sent, strongCalls, failures, gauge };
}

const last = (pushed: SeriesInput[], name: string) =>
  pushed.filter((s) => s.labels.some((l) => l.name === '__name__' && l.value === name)).map((s) => ({ labels: labelsToRecord(s.labels), ...s.samples[0] }));

test('recording rules write the renamed vector; a later rule reading it reads strongly and sees it', async () => {
  const { group, pushed, strongCalls, gauge } = setup(`
name: g
interval: 15s
rules:
  - record: job:x:sum
    expr: sum by (job) (x)
    labels: { team: a }
  - record: job:x:sum2
    expr: job:x:sum * 2
  - record: other
    expr: x
`);
  gauge('x', { job: 'j', instance: '1' }, T0 - 1000, 3);
  gauge('x', { job: 'j', instance: '2' }, T0 - 1000, 4);
  await group.evaluate(T0);
  assert.deepEqual(last(pushed, 'job:x:sum'), [{ labels: { __name__: 'job:x:sum', job: 'j', team: 'a' }, value: 7, timestamp: T0 }]);
  assert.deepEqual(last(pushed, 'job:x:sum2'), [{ labels: { __name__: 'job:x:sum2', job: 'j', team: 'a' }, value: 14, timestamp: T0 }]);
  assert.deepEqual(strongCalls, ['job:x:sum * 2']);
  assert.equal(group.rules[0].health, 'ok');
});

test('series that leave a rule get a stale marker; limit and label clashes fail the rule', async () => {
  const { group, pushed, gauge, failures } = setup(`
name: g
limit: 1
rules:
  - record: r
    expr: x
  - record: clash
    expr: x
    labels: { instance: same }
`);
  gauge('x', { instance: '1' }, T0 - 1000, 1);
  await group.evaluate(T0);
  assert.equal(last(pushed, 'r').length, 1);
  gauge('x', { instance: '2' }, T0 + 14_000, 1);
  pushed.length = 0;
  await group.evaluate(T0 + 15_000);
  assert.equal(group.rules[0].health, 'err');
  assert.match(group.rules[0].lastError, /exceeded limit of 1 with 2 series/);
  assert.match(group.rules[1].lastError, /same labelset after applying rule labels/);
  assert.equal(failures.length, 2);
  // A failed rule writes nothing, no stale markers either.
  assert.deepEqual(last(pushed, 'r'), []);
});

test('alerts go pending, fire after `for`, keep firing for keep_firing_for, resolve and are sent resolved', async () => {
  const { group, pushed, sent, gauge } = setup(`
name: g
interval: 10s
rules:
  - alert: High
    expr: x > 5
    for: 30s
    keep_firing_for: 10s
    labels: { severity: page, value_label: "{{ $value }}" }
    annotations: { summary: "{{ $labels.instance }} at {{ $value | humanize }}" }
`);
  const rule = group.rules[0] as AlertingRule;
  gauge('x', { instance: 'h1' }, T0 - 1000, 10);
  await group.evaluate(T0);
  assert.equal(rule.state(), 'pending');
  assert.equal(sent.length, 0);
  // The first evaluation restores `for` state (nothing to restore with for < grace period) and writes no ALERTS yet.
  assert.deepEqual(last(pushed, 'ALERTS'), []);
  await group.evaluate(T0 + 10_000);
  assert.deepEqual(
    last(pushed, 'ALERTS').map((a) => a.labels.alertstate),
    ['pending'],
  );
  const forState = last(pushed, 'ALERTS_FOR_STATE');
  assert.equal(forState[0].value, Math.floor(T0 / 1000));
  await group.evaluate(T0 + 20_000);
  assert.equal(rule.state(), 'pending');
  await group.evaluate(T0 + 30_000);
  assert.equal(rule.state(), 'firing');
  assert.equal(sent.length, 1);
  assert.deepEqual(sent[0].labels, { alertname: 'High', instance: 'h1', severity: 'page', value_label: '10' });
  assert.deepEqual(sent[0].annotations, { summary: 'h1 at 10' });
  assert.equal(sent[0].startsAt, T0 + 30_000);
  assert.equal(sent[0].endsAt, T0 + 30_000 + 4 * 60_000);
  assert.match(sent[0].generatorURL, /^http:\/\/ruler\.example\/graph\?g0\.expr=x%20%3E%205&g0\.tab=1$/);
  // Not resent before the resend delay.
  await group.evaluate(T0 + 40_000);
  assert.equal(sent.length, 1);
  // The condition clears: kept firing for 10s, then resolved and sent with endsAt.
  gauge('x', { instance: 'h1' }, T0 + 45_000, 1);
  await group.evaluate(T0 + 50_000);
  assert.equal(rule.state(), 'firing');
  await group.evaluate(T0 + 60_000);
  assert.equal(rule.state(), 'inactive');
  assert.equal(sent.length, 2);
  assert.equal(sent[1].endsAt, T0 + 60_000);
  assert.deepEqual(rule.activeAlerts(), []);
  // ALERTS goes stale once the alert is gone.
  const alerts = last(pushed, 'ALERTS');
  assert.equal(alerts[alerts.length - 1].stale, true);
});

test('alerting limit drops every alert of the rule', async () => {
  const { group, gauge } = setup(`
name: g
limit: 1
rules:
  - alert: A
    expr: x
`);
  gauge('x', { instance: '1' }, T0 - 1000, 1);
  gauge('x', { instance: '2' }, T0 - 1000, 1);
  await group.evaluate(T0);
  const rule = group.rules[0] as AlertingRule;
  assert.match(rule.lastError, /exceeded limit of 1 with 2 alerts/);
  assert.equal(rule.active.size, 0);
});

test('query_offset evaluates and writes at ts - offset', async () => {
  const { group, pushed, gauge } = setup(`
name: g
query_offset: 1m
rules:
  - record: r
    expr: x
`);
  gauge('x', {}, T0 - 90_000, 1);
  gauge('x', {}, T0 - 30_000, 2);
  await group.evaluate(T0);
  assert.deepEqual(
    last(pushed, 'r').map((s) => [s.value, s.timestamp]),
    [[1, T0 - 60_000]],
  );
});

test('after a restart, `for` state comes back from ALERTS_FOR_STATE (Prometheus RestoreForState)', async () => {
  const yaml = `
name: g
rules:
  - alert: Slow
    expr: x > 0
    for: 1h
`;
  const { group, gauge, engine } = setup(yaml);
  for (let ts = T0; ts <= T0 + 20 * 60_000; ts += 60_000) {
    gauge('x', {}, ts - 1000, 1);
    await group.evaluate(ts);
  }
  const rule = group.rules[0] as AlertingRule;
  assert.equal(rule.activeAlerts()[0].activeAt, T0);
  // A new ruler 5 minutes after the last evaluation, on the same store.
  const restart = T0 + 25 * 60_000;
  gauge('x', {}, restart - 1000, 1);
  const ctx2 = setup(yaml);
  const [desc] = parseRuleGroups(yaml);
  const group2 = new EvaluatedGroup('t1', 'ns', desc, 15_000, {
    ...ctx2.ctx,
    querier: { query: async (p) => engine.instantQuery({ tenant: p.tenant, query: p.expr, time: p.time }) },
    pusher: { push: async () => undefined },
  });
  await group2.evaluate(restart);
  const restored = (group2.rules[0] as AlertingRule).activeAlerts()[0];
  // 20 minutes pending before the outage, 40 left: the 5 minutes down do not count.
  assert.equal(restored.activeAt, T0 + 5 * 60_000);
  assert.equal((group2.rules[0] as AlertingRule).restored, true);
});
