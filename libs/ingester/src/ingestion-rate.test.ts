import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EwmaRate } from './ingestion-rate.ts';

test("the first tick takes the instant rate; later ticks move 20% of the way (Mimir's EWMA)", () => {
  const r = new EwmaRate(15_000, 0.2);
  assert.equal(r.rate(), 0);
  r.add(1500);
  r.tick();
  assert.equal(r.rate(), 100);
  r.tick();
  assert.equal(r.rate(), 80);
  r.add(3000);
  r.tick();
  assert.ok(Math.abs(r.rate() - 104) < 1e-9);
});
