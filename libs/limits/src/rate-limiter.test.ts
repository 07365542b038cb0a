import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LocalRateLimiter } from './index.ts';

test('token bucket: starts full, refills at the rate, never above the burst', () => {
  let now = 0;
  const rl = new LocalRateLimiter(() => now);
  assert.equal(rl.allow('t', 100, 10, 100), 'allowed');
  assert.equal(rl.allow('t', 1, 10, 100), 'rate-limited', 'the burst is spent');
  now += 500;
  assert.equal(rl.allow('t', 6, 10, 100), 'rate-limited', '5 tokens after 500ms at 10/s');
  assert.equal(rl.allow('t', 5, 10, 100), 'allowed');
  now += 3_600_000;
  assert.equal(rl.allow('t', 100, 10, 100), 'allowed', 'refill is capped at the burst');
  assert.equal(rl.allow('t', 1, 10, 100), 'rate-limited');
  assert.equal(rl.allow('t', 101, 10, 100), 'larger-than-burst');
  assert.equal(rl.allow('other', 100, 10, 100), 'allowed', 'buckets are per tenant');
  assert.equal(rl.allow('t', 0, 10, 100), 'allowed');
});

test('a refused request takes no tokens', () => {
  let now = 0;
  const rl = new LocalRateLimiter(() => now);
  assert.equal(rl.allow('t', 80, 1, 100), 'allowed');
  assert.equal(rl.allow('t', 30, 1, 100), 'rate-limited');
  assert.equal(rl.allow('t', 20, 1, 100), 'allowed');
});

test('a changed limit applies to the next request: the bucket starts afresh, full, with the new burst', () => {
  let now = 0;
  const rl = new LocalRateLimiter(() => now);
  assert.equal(rl.allow('t', 10, 1, 10), 'allowed');
  assert.equal(rl.allow('t', 10, 1, 10), 'rate-limited');
  // Overrides raised to 1000/s, burst 5000: the very next request gets the new burst.
  now += 100;
  assert.equal(rl.allow('t', 5000, 1000, 5000), 'allowed');
  assert.equal(rl.allow('t', 1000, 1000, 5000), 'rate-limited');
  now += 1000;
  assert.equal(rl.allow('t', 1000, 1000, 5000), 'allowed', 'refilled at the new rate');
  // Lowered to burst 3.
  assert.equal(rl.allow('t', 4, 1000, 3), 'larger-than-burst');
  assert.equal(rl.allow('t', 3, 1000, 3), 'allowed');
  assert.equal(rl.allow('t', 1, 1000, 3), 'rate-limited');
});
