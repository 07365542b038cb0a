import { test } from 'node:test';
import assert from 'node:assert/strict';
import { unescapeLabelName } from './params.ts';

test('label names in URL paths: U__ value-encoding escapes decode as Prometheus 3 reads them', () => {
  assert.equal(unescapeLabelName('job'), 'job');
  assert.equal(unescapeLabelName('U__service_2e_name'), 'service.name');
  assert.equal(unescapeLabelName('U__snake__case'), 'snake_case');
  assert.equal(unescapeLabelName('U__caf_e9_'), 'café');
  assert.equal(unescapeLabelName('U___1f600_'), '😀');
  // Escapes that do not decode leave the name as sent.
  assert.equal(unescapeLabelName('U__bad_zz_'), 'U__bad_zz_');
  assert.equal(unescapeLabelName('U__open_2e'), 'U__open_2e');
  assert.equal(unescapeLabelName('U__surrogate_d800_'), 'U__surrogate_d800_');
});
