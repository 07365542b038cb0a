import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Label } from '@strata/model';
import {
  DEFAULT_LABEL_LIMITS,
  encodeWriteRequest,
  formatSeries,
  parseWriteRequest,
  validateParsedSeries,
  validateSeriesLabels,
  sortLabelsInPlace,
  withoutEmptyLabelValues,
  type ValidationCode,
  type LabelLimits,
} from './index.ts';

const labels = (...pairs: string[]): Label[] => {
  const out: Label[] = [];
  for (let i = 0; i < pairs.length; i += 2) out.push({ name: pairs[i], value: pairs[i + 1] });
  return out;
};

function expectFailure(ls: Label[], code: ValidationCode, message: RegExp, limits?: LabelLimits): void {
  const f = validateSeriesLabels(ls, limits);
  assert.ok(f, `expected ${code} for ${formatSeries(ls)}`);
  assert.equal(f.code, code);
  assert.equal(f.kind, 'bad-input');
  assert.ok(!f.message.includes('\n'), 'one line');
  assert.match(f.message, message);
  assert.match(f.message, / in series \{/, 'names the series');
}

test('valid series pass', () => {
  assert.equal(validateSeriesLabels(labels('__name__', 'up')), undefined);
  assert.equal(validateSeriesLabels(labels('__name__', 'ns:rule_name:rate5m', 'instance', 'a:9090', 'job', 'node', 'le', '+Inf')), undefined);
  assert.equal(validateSeriesLabels(labels('_', 'x', '__name__', 'up', 'job', 'é ✓ 🚀')), undefined);
});

test('missing metric name, including an empty __name__', () => {
  expectFailure(labels('job', 'node'), 'err-strata-missing-metric-name', /no metric name .* in series \{job="node"\}; add a __name__ label/);
  expectFailure(labels('__name__', '', 'job', 'node'), 'err-strata-missing-metric-name', /no metric name/);
  expectFailure([], 'err-strata-missing-metric-name', /in series \{\}/);
});

test('invalid metric name', () => {
  for (const bad of ['1up', 'up-down', 'up down', 'ü', 'a.b']) {
    expectFailure(labels('__name__', bad), 'err-strata-invalid-metric-name', /invalid metric name .*; metric names must match \[a-zA-Z_:\]\[a-zA-Z0-9_:\]\*/);
  }
});

test('invalid label names, an empty name included', () => {
  for (const bad of ['1job', 'job-name', 'job:name', 'jöb', '']) {
    expectFailure(
      labels('__name__', 'up', bad, 'x'),
      'err-strata-invalid-label',
      new RegExp(`invalid label name ${JSON.stringify(bad)} .*; label names must match`),
    );
  }
});

test('unsorted labels are sorted in place; duplicate names are refused', () => {
  const sent = labels('job', 'node', '__name__', 'up', 'instance', 'a');
  assert.equal(sortLabelsInPlace(sent), true);
  assert.deepEqual(sent, labels('__name__', 'up', 'instance', 'a', 'job', 'node'));
  assert.equal(validateSeriesLabels(sent), undefined);
  assert.equal(sortLabelsInPlace(sent), false, 'sorted labels are left as they are');
  const dup = labels('job', 'b', '__name__', 'up', 'job', 'a');
  sortLabelsInPlace(dup);
  expectFailure(dup, 'err-strata-duplicate-label-names', /duplicate label name "job"/);
  expectFailure(
    labels('__name__', 'up', 'job', 'a', 'job', 'b'),
    'err-strata-duplicate-label-names',
    /duplicate label name "job" .*; send each label name once/,
  );
  expectFailure(labels('__name__', 'up', '__name__', 'down'), 'err-strata-duplicate-label-names', /"__name__"/);
});

test('empty label values count as absent (Mimir strips them before validating)', () => {
  // Not rejected, whatever the name; not counted toward the limit; not part of sort/duplicate checks.
  assert.equal(validateSeriesLabels(labels('__name__', 'up', 'zzz', '', 'job', 'node')), undefined);
  assert.equal(validateSeriesLabels(labels('__name__', 'up', 'bad-name', '')), undefined);
  assert.equal(validateSeriesLabels(labels('__name__', 'up', 'job', '', 'job', 'node')), undefined);
  assert.equal(validateSeriesLabels(labels('__name__', 'up', 'a', '', 'b', ''), { maxLabelNamesPerSeries: 1 }), undefined);
  const ls = labels('__name__', 'up', 'a', '', 'job', 'node', 'z', '');
  assert.deepEqual(withoutEmptyLabelValues(ls), labels('__name__', 'up', 'job', 'node'));
  const clean = labels('__name__', 'up');
  assert.equal(withoutEmptyLabelValues(clean), clean, 'no copy when nothing to drop');
});

test('max label names per series, Mimir default 30', () => {
  const ls = labels('__name__', 'up');
  for (let i = 0; i < 30; i++) ls.push({ name: `l${String(i).padStart(2, '0')}`, value: 'v' });
  expectFailure(ls, 'err-strata-max-label-names-per-series', /with 31 labels, above the limit of 30 .*-validation\.max-label-names-per-series/);
  assert.equal(validateSeriesLabels(ls.slice(0, 30)), undefined);
  assert.equal(validateSeriesLabels(ls, { maxLabelNamesPerSeries: 31 }), undefined);
  assert.equal(DEFAULT_LABEL_LIMITS.maxLabelNamesPerSeries, 30);
});

test('label name and value length limits, counted in UTF-8 bytes', () => {
  expectFailure(
    labels('__name__', 'up', 'a'.repeat(11), 'x'),
    'err-strata-label-name-too-long',
    /label name of 11 bytes, above the limit of 10 .*-validation\.max-length-label-name/,
    {
      maxLabelNameLength: 10,
    },
  );
  assert.equal(validateSeriesLabels(labels('__name__', 'up', 'a'.repeat(10), 'x'), { maxLabelNameLength: 10 }), undefined);
  // 4 characters, 8 bytes.
  expectFailure(labels('__name__', 'up', 'city', 'éééé'), 'err-strata-label-value-too-long', /label "city" has a value of 8 bytes, above the limit of 7 /, {
    maxLabelValueLength: 7,
  });
  assert.equal(validateSeriesLabels(labels('__name__', 'up', 'city', 'éééé'), { maxLabelValueLength: 8 }), undefined);
  expectFailure(labels('__name__', 'up', 'v', 'x'.repeat(2049)), 'err-strata-label-value-too-long', /2049 bytes, above the limit of 2048/);
  // The metric name is a label value too.
  expectFailure(labels('__name__', 'a'.repeat(20)), 'err-strata-label-value-too-long', /"__name__"/, { maxLabelValueLength: 19 });
});

test('label values must be valid UTF-8 (no lone surrogates)', () => {
  expectFailure(
    labels('__name__', 'up', 'job', 'a\ud800b'),
    'err-strata-invalid-label-value',
    /label "job" has a value that is not valid UTF-8 .*; send label values as UTF-8/,
  );
});

test('messages name the series but stay short', () => {
  const ls = labels('__name__', 'up', 'job', 'x'.repeat(5000), 'a', 'b');
  const f = validateSeriesLabels(ls);
  assert.ok(f);
  assert.ok(f.message.length < 600, `message is ${f.message.length} chars`);
  assert.match(f.message, /\{__name__="up", job="xxx+…\}/);
  assert.equal(formatSeries(labels('__name__', 'up', 'q', 'say "hi"\n')), '{__name__="up", q="say \\"hi\\"\\n"}');
});

test('the utf8 name scheme accepts any UTF-8 metric and label name, checked for emptiness, byte length and byte order', () => {
  const utf8: LabelLimits = { nameValidationScheme: 'utf8', maxLabelNameLength: 12 };
  const dotted = labels('__name__', 'http.server.request.duration', 'service.name', 'api');
  assert.equal(validateSeriesLabels(dotted, utf8), undefined);
  assert.equal(validateSeriesLabels(dotted)?.code, 'err-strata-invalid-metric-name', 'legacy by default');
  assert.match(validateSeriesLabels(dotted)!.message, /name_validation_scheme to utf8/);
  assert.equal(validateSeriesLabels(labels('__name__', 'up', 'service.name', 'api'))?.code, 'err-strata-invalid-label');
  // 'température' is 12 bytes in 11 characters; one more accented letter is over the limit of 12.
  assert.equal(validateSeriesLabels(labels('__name__', 'up', 'température', 'x'), utf8), undefined);
  assert.equal(validateSeriesLabels(labels('__name__', 'up', 'températuré', 'x'), utf8)?.code, 'err-strata-label-name-too-long');
  // Byte order: U+FFFD (EF BF BD) sorts before U+1F600 (F0 9F 98 80), though its UTF-16 unit is larger.
  assert.equal(validateSeriesLabels(labels('__name__', 'up', '\ufffd', 'a', '😀', 'b'), utf8), undefined);
  const byBytes = labels('__name__', 'up', '😀', 'b', '\ufffd', 'a');
  assert.equal(sortLabelsInPlace(byBytes), true);
  assert.deepEqual(byBytes, labels('__name__', 'up', '\ufffd', 'a', '😀', 'b'));
  assert.equal(validateSeriesLabels(labels('__name__', 'up', 'a\udc00', 'x'), utf8)?.code, 'err-strata-invalid-label', 'a lone surrogate is not UTF-8');
  // The same name sent as bytes that are not UTF-8 (0xFF in place of the 'Q').
  const body = encodeWriteRequest({ timeseries: [{ labels: labels('__name__', 'up', 'aQ', 'x'), samples: [] }] });
  body[body.indexOf(0x51)] = 0xff;
  const [broken] = parseWriteRequest(body).series;
  assert.equal(validateParsedSeries(broken, utf8)?.code, 'err-strata-invalid-label', 'bytes that are not UTF-8');
});
