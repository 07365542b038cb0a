import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Label } from '@strata/model';
import {
  LabelPairs,
  encodeWriteRequest,
  formatSeries,
  parseWriteRequest,
  validateParsedSeries,
  type LabelLimits,
  type ParsedSeries,
} from '@strata/remote-write';
import { KnownSeries } from './known-series.ts';
import { seriesToken, tenantSeed } from './sharding.ts';

const parseAll = (series: Label[][]) =>
  parseWriteRequest(encodeWriteRequest({ timeseries: series.map((labels) => ({ labels, samples: [{ value: 1, timestamp: 1 }] })) })).series;
const parse = (labels: Label[]) => parseAll([labels])[0];
const DEFAULTS = { maxLabelNamesPerSeries: 30, maxLabelNameLength: 1024, maxLabelValueLength: 2048 };

/** The run's labels as [name, value] strings, read back through the pair table. */
function runLabels(known: KnownSeries): Label[] {
  const { ids, pairs } = known;
  const text = (id: number) => {
    const out = Buffer.alloc(pairs.strings.length(id));
    pairs.strings.copy(id, out, 0);
    return out.toString();
  };
  return Array.from(ids.subarray(known.run + 1, known.run + 1 + ids[known.run]), (p) => ({ name: text(pairs.nameId[p]), value: text(pairs.valueId[p]) }));
}

test('the known-series check never accepts what the string validator rejects, and gives the token and pairs of what it accepts', () => {
  const limits = { maxLabelNamesPerSeries: 4, maxLabelNameLength: 8, maxLabelValueLength: 6 };
  const names = ['__name__', 'a', 'b', 'B', '_x', '1a', 'a-b', '', 'toolongname', 'é'];
  const values = ['up', 'x', '', '1up', 'a:b', 'toolong', 'é', 'a\u0000', 'ok_1'];
  let rng = 12345;
  const next = (n: number) => {
    rng = (Math.imul(rng, 1103515245) + 12345) >>> 0;
    return (rng >>> 16) % n;
  };
  const generated: Label[][] = [];
  for (let i = 0; i < 2000; i++) {
    const ls: Label[] = [];
    const count = next(6);
    for (let j = 0; j < count; j++) ls.push({ name: names[next(names.length)], value: values[next(values.length)] });
    if (next(2) === 0) ls.push({ name: '__name__', value: 'up' });
    if (next(2) === 0) ls.sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
    generated.push(ls);
  }
  // One table for every request, as in the distributor; each series is met three times, in
  // the same order (found by the guess) and then in reverse (found in the table).
  const known = new KnownSeries(new LabelPairs());
  let accepted = 0;
  for (const [round, order] of [generated, generated, [...generated].reverse()].entries()) {
    const request = parseAll(order);
    known.begin();
    request.forEach((series: ParsedSeries, i) => {
      const token = known.token(series, tenantSeed(round === 1 ? 'team-b' : 'team-a'), limits);
      const full = validateParsedSeries(series, limits as LabelLimits);
      if (token < 0) return;
      accepted++;
      assert.equal(full, undefined, `accepted ${formatSeries(order[i])}, the validator says ${full?.code}`);
      assert.equal(token, seriesToken(round === 1 ? 'team-b' : 'team-a', order[i]));
      assert.deepEqual(runLabels(known), order[i]);
    });
  }
  console.log(`known-series check accepted ${accepted} of ${3 * generated.length} series`);
  assert.ok(accepted > 150, `accepted only ${accepted} series`);
});

test('plain ASCII series are accepted within the limits of the tenant of each request', () => {
  const known = new KnownSeries(new LabelPairs());
  const up = parse([
    { name: '__name__', value: 'up' },
    { name: 'job', value: 'node' },
  ]);
  known.begin();
  assert.equal(known.token(up, tenantSeed('t'), DEFAULTS), seriesToken('t', up.labels));
  assert.equal(known.token(up, tenantSeed('t'), { ...DEFAULTS, maxLabelValueLength: 3 }), -1, 'node is 4 bytes');
  assert.equal(known.token(up, tenantSeed('t'), { ...DEFAULTS, maxLabelNamesPerSeries: 1 }), -1);
  assert.equal(known.token(up, tenantSeed('u'), DEFAULTS), seriesToken('u', up.labels));
  assert.equal(known.token(parse([{ name: 'job', value: 'node' }]), tenantSeed('t'), DEFAULTS), -1, 'no metric name');
  const duplicate = parse([
    { name: '__name__', value: 'up' },
    { name: 'job', value: 'node' },
    { name: 'job', value: 'x' },
  ]);
  assert.equal(known.token(duplicate, tenantSeed('t'), DEFAULTS), -1, 'duplicate name');
});

test('a sender that changes its order is relearned in that order once; one that changes it every round less and less often', () => {
  const series: Label[][] = Array.from({ length: 1000 }, (_, i) => [
    { name: '__name__', value: 'm' },
    { name: 'i', value: String(i) },
  ]);
  const shuffled = (seed: number): Label[][] => {
    const out = [...series];
    let rng = seed;
    for (let i = out.length - 1; i > 0; i--) {
      rng = (Math.imul(rng, 1103515245) + 12345) >>> 0;
      const j = (rng >>> 8) % (i + 1);
      [out[i], out[j]] = [out[j], out[i]];
    }
    return out;
  };
  const known = new KnownSeries(new LabelPairs());
  // A round: every series once, in requests of 100 as a sender's shards send them; every token right.
  const send = (order: Label[][]) => {
    for (let r = 0; r < order.length; r += 100) {
      const request = parseAll(order.slice(r, r + 100));
      known.begin();
      request.forEach((s, i) => assert.equal(known.token(s, tenantSeed('t'), DEFAULTS), seriesToken('t', order[r + i])));
    }
  };
  for (let round = 0; round < 4; round++) send(series);
  assert.equal(known.order.relearnings, 0, 'met in the order it learned them');
  const other = shuffled(1);
  for (let round = 0; round < 3; round++) send(other);
  assert.equal(known.order.relearnings, 1, 'another order: relearned in it');
  for (let round = 0; round < 6; round++) send(other);
  assert.equal(known.order.relearnings, 1, 'then met in table order');
  for (let round = 0; round < 16; round++) send(shuffled(round + 2));
  assert.ok(
    known.order.relearnings >= 3 && known.order.relearnings <= 6,
    `a new order every round: relearned ${known.order.relearnings - 1} times in 16 rounds, after 1, 2, 4 … rounds`,
  );
});
