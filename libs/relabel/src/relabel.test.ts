// Prometheus' relabel actions on label sets, with Prometheus' defaults and its checks of a config.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { labelsFromRecord, labelsToRecord } from '@strata/model';
import { relabel, relabelConfigsSchema } from './index.ts';

const rules = (yaml: unknown[]) => relabelConfigsSchema.parse(yaml);
const apply = (labels: Record<string, string>, yaml: unknown[]) => {
  const out = relabel(labelsFromRecord(labels), rules(yaml));
  return out === undefined ? undefined : labelsToRecord(out);
};
const up = { __name__: 'up', job: 'api', instance: 'host-1:9100', env: 'Prod' };

test('replace: defaults ($1 of (.*)), templates in target_label, an empty result deletes', () => {
  assert.deepEqual(apply(up, [{ source_labels: ['instance'], regex: '(.*):.*', target_label: 'host' }]), { ...up, host: 'host-1' });
  assert.deepEqual(apply(up, [{ source_labels: ['job', 'env'], separator: '/', target_label: 'svc' }]), { ...up, svc: 'api/Prod' });
  assert.deepEqual(apply(up, [{ source_labels: ['job'], regex: '(a)(p)i', target_label: 'l_$2', replacement: '${1}x' }]), { ...up, l_p: 'ax' });
  assert.deepEqual(apply(up, [{ source_labels: ['nope'], regex: '', target_label: 'env', replacement: '' }]), {
    __name__: 'up',
    job: 'api',
    instance: 'host-1:9100',
  });
  assert.deepEqual(apply(up, [{ source_labels: ['job'], regex: 'db', target_label: 'x' }]), up, 'no match, no change');
});

test('keep, drop, keepequal, dropequal decide whether the series stays', () => {
  assert.deepEqual(apply(up, [{ action: 'keep', source_labels: ['job'], regex: 'api|web' }]), up);
  assert.equal(apply(up, [{ action: 'keep', source_labels: ['job'], regex: 'ap' }]), undefined, 'anchored');
  assert.equal(apply(up, [{ action: 'DROP', source_labels: ['__name__'], regex: 'up' }]), undefined, 'actions are case-insensitive');
  assert.deepEqual(apply({ a: 'x', b: 'x', __name__: 'm' }, [{ action: 'keepequal', source_labels: ['a'], target_label: 'b' }]), {
    a: 'x',
    b: 'x',
    __name__: 'm',
  });
  assert.equal(apply({ a: 'x', b: 'x', __name__: 'm' }, [{ action: 'dropequal', source_labels: ['a'], target_label: 'b' }]), undefined);
});

test('labelmap, labeldrop, labelkeep, lowercase, uppercase, hashmod', () => {
  assert.deepEqual(apply({ __name__: 'm', __meta_zone: 'eu' }, [{ action: 'labelmap', regex: '__meta_(.+)' }]), {
    __name__: 'm',
    __meta_zone: 'eu',
    zone: 'eu',
  });
  assert.deepEqual(apply(up, [{ action: 'labeldrop', regex: 'env|instance' }]), { __name__: 'up', job: 'api' });
  assert.deepEqual(apply(up, [{ action: 'labelkeep', regex: '__name__|job' }]), { __name__: 'up', job: 'api' });
  assert.deepEqual(apply(up, [{ action: 'lowercase', source_labels: ['env'], target_label: 'env' }]), { ...up, env: 'prod' });
  assert.deepEqual(apply(up, [{ action: 'uppercase', source_labels: ['job'], target_label: 'JOB' }]), { ...up, JOB: 'API' });
  // md5("foo") = acbd18db4cc2f85c edef654fccc4a4d8: the last 8 bytes, big-endian, modulo.
  const shard = apply(up, [{ action: 'hashmod', source_labels: ['instance'], modulus: 8, target_label: 'shard' }])!.shard;
  assert.match(shard, /^[0-7]$/);
  assert.equal(
    apply({ __name__: 'm', a: 'foo' }, [{ action: 'hashmod', source_labels: ['a'], modulus: 1000, target_label: 'h' }])!.h,
    String(BigInt('0x' + 'acbd18db4cc2f85cedef654fccc4a4d8'.slice(16)) % 1000n),
  );
});

test('a series relabelled to no labels is dropped; no rules: the labels as they were', () => {
  assert.equal(apply(up, [{ action: 'labeldrop', regex: '.*' }]), undefined);
  const ls = labelsFromRecord(up);
  assert.equal(relabel(ls, []), ls);
});

test('configs Prometheus refuses are refused with their index and why', () => {
  const refused = (yaml: unknown[], why: RegExp) => {
    const r = relabelConfigsSchema.safeParse(yaml);
    assert.equal(r.success, false);
    assert.match(r.error!.issues.map((i) => i.message).join('; '), why);
  };
  refused([{}, { action: 'hashmod', source_labels: ['a'], target_label: 'b' }], /relabel config 1: the hashmod action requires a non-zero modulus/);
  refused([{ action: 'replace', source_labels: ['a'] }], /relabel config 0: the replace action requires a target_label/);
  refused([{ action: 'labeldrop', regex: 'a', source_labels: ['x'] }], /takes only a regex/);
  refused([{ action: 'keepequal', source_labels: ['a'], target_label: 'b', regex: 'x' }], /takes only source_labels and target_label/);
  refused([{ source_labels: ['a'], target_label: 'b', regex: '(' }], /invalid regex "\("/);
  refused([{ action: 'explode' }], /expected one of "replace"/);
  refused([{ sources: ['a'] }], /sources/);
});
