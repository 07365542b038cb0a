// The load generator's series: node-exporter-like targets (one `instance` per
// target, ~200 series each), widened N times, with churn that relabels a share
// of targets. Everything is deterministic from the options, never random.

import type { Label } from '@strata/model';

export type SeriesKind = 'counter' | 'gauge';

interface Family {
  name: string;
  kind: SeriesKind;
  /** Extra labels of each series of the family (without __name__, instance, job). */
  variants: Label[][];
}

const CPU_MODES = ['idle', 'iowait', 'irq', 'nice', 'softirq', 'steal', 'system', 'user'];
const COLLECTORS = [
  'arp',
  'bcache',
  'bonding',
  'btrfs',
  'conntrack',
  'cpu',
  'cpufreq',
  'diskstats',
  'edac',
  'entropy',
  'filefd',
  'filesystem',
  'hwmon',
  'loadavg',
  'meminfo',
  'netclass',
  'netdev',
  'netstat',
  'stat',
  'vmstat',
];
const MOUNTS: Label[][] = [
  [
    { name: 'device', value: '/dev/sda1' },
    { name: 'fstype', value: 'ext4' },
    { name: 'mountpoint', value: '/' },
  ],
  [
    { name: 'device', value: '/dev/sdb1' },
    { name: 'fstype', value: 'xfs' },
    { name: 'mountpoint', value: '/var/lib/data' },
  ],
  [
    { name: 'device', value: 'tmpfs' },
    { name: 'fstype', value: 'tmpfs' },
    { name: 'mountpoint', value: '/run' },
  ],
];

function one(name: string, kind: SeriesKind): Family {
  return { name, kind, variants: [[]] };
}

function over(name: string, kind: SeriesKind, label: string, values: string[]): Family {
  return { name, kind, variants: values.map((value) => [{ name: label, value }]) };
}

/** The families one node exporter exposes, trimmed to what matters for ingest: ~200 series. */
export function nodeExporterFamilies(cpus = 8): Family[] {
  const cpuIds = Array.from({ length: cpus }, (_, i) => String(i));
  const f: Family[] = [
    {
      name: 'node_cpu_seconds_total',
      kind: 'counter',
      variants: cpuIds.flatMap((cpu) =>
        CPU_MODES.map((mode) => [
          { name: 'cpu', value: cpu },
          { name: 'mode', value: mode },
        ]),
      ),
    },
  ];
  for (const m of ['Active', 'Buffers', 'Cached', 'Dirty', 'Inactive', 'MemAvailable', 'MemFree', 'MemTotal', 'SwapFree', 'SwapTotal']) {
    f.push(one(`node_memory_${m}_bytes`, 'gauge'));
  }
  for (const m of ['avail_bytes', 'free_bytes', 'size_bytes', 'files', 'files_free']) f.push({ name: `node_filesystem_${m}`, kind: 'gauge', variants: MOUNTS });
  for (const dir of ['receive', 'transmit']) {
    for (const what of ['bytes', 'packets', 'errs', 'drop']) f.push(over(`node_network_${dir}_${what}_total`, 'counter', 'device', ['eth0', 'lo']));
  }
  for (const what of ['read_bytes', 'written_bytes', 'reads_completed', 'writes_completed', 'io_time_seconds']) {
    f.push(over(`node_disk_${what}_total`, 'counter', 'device', ['sda', 'sdb']));
  }
  for (const n of ['node_load1', 'node_load5', 'node_load15', 'node_procs_running', 'node_procs_blocked', 'node_boot_time_seconds', 'node_time_seconds'])
    f.push(one(n, 'gauge'));
  for (const n of ['node_context_switches_total', 'node_intr_total', 'node_forks_total']) f.push(one(n, 'counter'));
  for (const n of ['pgfault', 'pgmajfault', 'pswpin', 'pswpout']) f.push(one(`node_vmstat_${n}`, 'counter'));
  for (const n of ['ActiveOpens', 'PassiveOpens', 'RetransSegs']) f.push(one(`node_netstat_Tcp_${n}`, 'counter'));
  f.push(one('node_netstat_Tcp_CurrEstab', 'gauge'));
  f.push(over('node_scrape_collector_duration_seconds', 'gauge', 'collector', COLLECTORS));
  f.push(over('node_scrape_collector_success', 'gauge', 'collector', COLLECTORS));
  f.push(over('node_hwmon_temp_celsius', 'gauge', 'sensor', ['temp1', 'temp2', 'temp3', 'temp4']));
  f.push(over('go_gc_duration_seconds', 'gauge', 'quantile', ['0', '0.25', '0.5', '0.75', '1']));
  f.push(one('go_gc_duration_seconds_sum', 'counter'), one('go_gc_duration_seconds_count', 'counter'));
  for (const n of [
    'go_goroutines',
    'go_threads',
    'go_memstats_alloc_bytes',
    'go_memstats_heap_inuse_bytes',
    'go_memstats_heap_idle_bytes',
    'go_memstats_sys_bytes',
    'go_memstats_stack_inuse_bytes',
  ]) {
    f.push(one(n, 'gauge'));
  }
  f.push(one('process_cpu_seconds_total', 'counter'), one('process_resident_memory_bytes', 'gauge'), one('process_open_fds', 'gauge'));
  f.push(one('up', 'gauge'), one('scrape_duration_seconds', 'gauge'), one('scrape_samples_scraped', 'gauge'));
  return f;
}

/** One series of one target: its place in the template and how its values move. */
interface TemplateSeries {
  name: string;
  kind: SeriesKind;
  extra: Label[];
  /** Deterministic per-series constants for values. */
  base: number;
  step: number;
}

export interface SeriesSetOptions {
  /** Live series in total (the last target is cut short to hit it exactly). */
  series: number;
  /** N of M×N: the target set is this many times wider (instances), same series per target. Default 1. */
  wide?: number;
  cpus?: number;
  /** Share of targets relabelled per churn event (0..1); default 0. */
  churnShare?: number;
  job?: string;
}

/**
 * Live series in a fixed order: index i belongs to target floor(i / perTarget).
 * A churned target keeps its index range but gets a new `instance` value, so its
 * series are new series (the old ones stop receiving samples).
 */
export class SeriesSet {
  readonly template: TemplateSeries[];
  readonly targets: number;
  readonly size: number;
  readonly perTarget: number;
  /** Relabel generation of each target. */
  readonly generation: Uint32Array;
  /** Series created so far, churned ones included. */
  created: number;
  private churnCursor = 0;
  private readonly churnShare: number;
  private readonly job: string;

  constructor(opts: SeriesSetOptions) {
    const wide = Math.max(1, Math.floor(opts.wide ?? 1));
    this.template = [];
    for (const fam of nodeExporterFamilies(opts.cpus ?? 8)) {
      for (const extra of fam.variants) {
        const k = this.template.length;
        this.template.push({
          name: fam.name,
          kind: fam.kind,
          extra,
          base: fam.kind === 'counter' ? ((k * 7919) % 100_000) * 10 : 10 + ((k * 104_729) % 1000),
          step: fam.kind === 'counter' ? 1 + (k % 13) * 0.25 : 1 + (k % 5),
        });
      }
    }
    this.perTarget = this.template.length;
    this.size = Math.max(1, Math.floor(opts.series)) * wide;
    this.targets = Math.ceil(this.size / this.perTarget);
    this.generation = new Uint32Array(this.targets);
    this.created = this.size;
    this.churnShare = Math.min(1, Math.max(0, opts.churnShare ?? 0));
    this.job = opts.job ?? 'node';
  }

  targetOf(i: number): number {
    return Math.floor(i / this.perTarget);
  }

  instance(target: number): string {
    const g = this.generation[target];
    const host = `host-${String(target).padStart(6, '0')}`;
    return g === 0 ? `${host}:9100` : `${host}-r${g}:9100`;
  }

  /** Series i's labels, sorted by name as remote write requires. */
  labels(i: number): Label[] {
    const t = this.template[i % this.perTarget];
    const out: Label[] = [
      { name: '__name__', value: t.name },
      ...t.extra,
      { name: 'instance', value: this.instance(this.targetOf(i)) },
      { name: 'job', value: this.job },
    ];
    return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Series i's value at scrape round `round` (a global count): counters only go up. */
  value(i: number, round: number): number {
    const t = this.template[i % this.perTarget];
    const salt = this.targetOf(i) % 97;
    if (t.kind === 'counter') return t.base + salt + round * t.step;
    return t.base + salt + Math.round(100 * t.step * Math.sin(round / 10 + salt)) / 100;
  }

  /** Where in a round target t is scraped, as a share of the round (0..1). */
  scrapeOffset(target: number): number {
    return (((target + 1) * 2654435761) >>> 0) / 4294967296;
  }

  /** Relabels the next share of targets (round robin); returns the series indices that changed. */
  churn(): number[] {
    const n = Math.round(this.targets * this.churnShare);
    const changed: number[] = [];
    for (let k = 0; k < n; k++) {
      const t = this.churnCursor;
      this.churnCursor = (this.churnCursor + 1) % this.targets;
      this.generation[t]++;
      const from = t * this.perTarget;
      const to = Math.min(this.size, from + this.perTarget);
      for (let i = from; i < to; i++) changed.push(i);
      this.created += to - from;
    }
    return changed;
  }
}
