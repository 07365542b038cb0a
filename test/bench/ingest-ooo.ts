// The head's out-of-order path: each series gets 120 in-order samples, then
// the 120 between them out of order (inside the window). Prints out-of-order
// samples/s on one core; each one is checked against the in-order chunk at
// its time (for idempotent replays), so this is what that check costs.
//
//   node --import tsx test/bench/ingest-ooo.ts [--series 10000]

import { Head, emptyAppendStats } from '@strata/tsdb';

const args = process.argv.slice(2);
const i = args.indexOf('--series');
const SERIES = i >= 0 ? Number(args[i + 1]) : 10_000;
const T0 = 1_700_000_000_000;
const STEP = 15_000;

const head = new Head({ chunkRangeMs: 2 * 3_600_000, outOfOrderTimeWindowMs: () => 3_600_000 });
const stats = emptyAppendStats();
const labels = Array.from({ length: SERIES }, (_, k) => [
  { name: '__name__', value: 'm' },
  { name: 'k', value: String(k) },
]);
const even = Float64Array.from({ length: 120 }, (_, k) => T0 + 2 * k * STEP);
const odd = Float64Array.from({ length: 120 }, (_, k) => T0 + (2 * k + 1) * STEP);
const values = Float64Array.from({ length: 120 }, (_, k) => k * 1.5);
for (const l of labels) head.append(l, even, values, stats);
const cpu0 = process.cpuUsage();
const t0 = performance.now();
for (const l of labels) head.append(l, odd, values, stats);
const wall = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
const n = SERIES * odd.length;
if (stats.appended !== 2 * n) throw new Error(`appended ${stats.appended}, want ${2 * n}`);
const perCpu = n / ((cpu.user + cpu.system) / 1e6);
console.log(
  `ingest out-of-order: ${SERIES} series, ${n.toLocaleString('en')} samples in ${wall.toFixed(2)}s → ${Math.round(n / wall).toLocaleString('en')} samples/s, ${Math.round(perCpu).toLocaleString('en')} per CPU-second`,
);
