import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatDuration, parseDuration, secondsToMs } from './durations.ts';

describe('durations', () => {
  it('parses Prometheus durations to milliseconds', () => {
    const cases: [string, number][] = [
      ['0', 0],
      ['500ms', 500],
      ['5m', 300_000],
      ['1h30m', 5_400_000],
      ['1d', 86_400_000],
      ['1w', 604_800_000],
      ['1y', 31_536_000_000],
      ['1y2w3d4h5m6s7ms', 31_536_000_000 + 2 * 604_800_000 + 3 * 86_400_000 + 4 * 3_600_000 + 5 * 60_000 + 6000 + 7],
    ];
    for (const [s, ms] of cases) assert.equal(parseDuration(s), ms, s);
  });

  it('rejects malformed durations with Prometheus messages', () => {
    assert.throws(() => parseDuration(''), { message: 'empty duration string' });
    assert.throws(() => parseDuration('5hs'), { message: 'unknown unit "hs" in duration "5hs"' });
    assert.throws(() => parseDuration('1m1h'), { message: 'not a valid duration string: "1m1h"' });
    assert.throws(() => parseDuration('m'), { message: 'not a valid duration string: "m"' });
    assert.throws(() => parseDuration('5'), { message: 'not a valid duration string: "5"' });
  });

  it('formats as model.Duration.String()', () => {
    assert.equal(formatDuration(0), '0s');
    assert.equal(formatDuration(5_400_000), '1h30m');
    assert.equal(formatDuration(90 * 86_400_000), '90d'); // Not 12w6d.
    assert.equal(formatDuration(14 * 86_400_000), '2w');
    assert.equal(formatDuration(1500), '1s500ms');
  });

  it('converts literal seconds as Prometheus does', () => {
    assert.equal(secondsToMs(90), 90_000);
    assert.equal(secondsToMs(0.0015), 1);
    assert.equal(secondsToMs(1.0005), 1000);
  });
});
