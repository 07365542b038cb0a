// Prometheus durations (`1h30m`, `5m`, `500ms`, `1y`): parsing with
// model.ParseDuration's rules and messages, and printing as model.Duration does.
// Durations are integral milliseconds here; they never go through floats.

const UNITS: Record<string, { ms: number; order: number }> = {
  ms: { ms: 1, order: 7 },
  s: { ms: 1000, order: 6 },
  m: { ms: 60_000, order: 5 },
  h: { ms: 3_600_000, order: 4 },
  d: { ms: 86_400_000, order: 3 },
  w: { ms: 604_800_000, order: 2 },
  y: { ms: 31_536_000_000, order: 1 },
};

/** Largest duration Go's time.Duration holds, in ms. */
const MAX_DURATION_MS = Math.floor(Number(2n ** 63n - 1n) / 1e6);

/**
 * Parses a Prometheus duration into milliseconds. Units must appear largest
 * first and at most once; `0` alone is allowed. Throws an Error with
 * Prometheus' message otherwise.
 */
export function parseDuration(s: string): number {
  if (s === '0') return 0;
  if (s === '') throw new Error('empty duration string');
  let rest = s;
  let total = 0;
  let lastOrder = 0;
  while (rest !== '') {
    const m = /^(\d+)(\D*)/.exec(rest);
    if (!m || m[2] === '') throw new Error(`not a valid duration string: "${s}"`);
    const unit = UNITS[m[2]];
    if (!unit) throw new Error(`unknown unit "${m[2]}" in duration "${s}"`);
    if (unit.order <= lastOrder) throw new Error(`not a valid duration string: "${s}"`);
    lastOrder = unit.order;
    total += Number(m[1]) * unit.ms;
    if (total > MAX_DURATION_MS) throw new Error('duration out of range');
    rest = rest.slice(m[0].length);
  }
  return total;
}

/** Formats milliseconds as Prometheus' model.Duration.String() does (`1h30m`, `90d`, `0s`). */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  let out = '';
  let rest = Math.abs(ms);
  const take = (unit: string, mult: number, exact: boolean) => {
    if (exact && rest % mult !== 0) return;
    const v = Math.floor(rest / mult);
    if (v > 0) {
      out += `${v}${unit}`;
      rest -= v * mult;
    }
  };
  // Years and weeks only when exact: 90d reads better than 12w6d.
  take('y', UNITS.y.ms, true);
  take('w', UNITS.w.ms, true);
  take('d', UNITS.d.ms, false);
  take('h', UNITS.h.ms, false);
  take('m', UNITS.m.ms, false);
  take('s', UNITS.s.ms, false);
  take('ms', 1, false);
  return (ms < 0 ? '-' : '') + out;
}

/**
 * Seconds (as a PromQL number literal) to milliseconds the way Prometheus does:
 * rounded to a nanosecond Duration, then truncated to milliseconds.
 */
export function secondsToMs(seconds: number): number {
  const ms = seconds * 1000;
  if (Number.isInteger(ms)) return ms;
  return Math.trunc(Math.round(seconds * 1e9) / 1e6);
}
