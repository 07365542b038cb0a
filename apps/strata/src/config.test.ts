import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { z } from 'zod';
import { flagDefault, flagDescription, parseFlags, renderHelp } from '@strata/service';
import { FLAG_GROUPS, SINGLE_TENANT_DEFAULTS, YAML_PATHS, limitsLine, parseConfig, strataConfigShape } from './config.ts';

const FLAGS = Object.entries(strataConfigShape) as [string, z.ZodType][];

test('every flag has a one-line description and a default, and is in exactly one -help group', () => {
  for (const [name, schema] of FLAGS) {
    const d = flagDescription(schema);
    assert.ok(d !== undefined && d.trim().length > 10, `-${name} has no description (add .describe() where it is defined)`);
    assert.ok(!d.includes('\n'), `-${name}: description is more than one line`);
    assert.notEqual(flagDefault(schema), undefined, `-${name} has no default`);
    assert.equal(FLAG_GROUPS.filter((g) => name in g.shape).length, 1, `-${name} in one group`);
  }
  assert.equal(
    FLAG_GROUPS.reduce((n, g) => n + Object.keys(g.shape).length, 0),
    FLAGS.length,
  );
});

test('-help lists every flag under its group with its default', () => {
  const help = renderHelp(FLAG_GROUPS, 'usage');
  const sections = help.split(/\n(?=[a-z-]+:\n)/);
  for (const g of FLAG_GROUPS) {
    const section = sections.find((s) => s.startsWith(`${g.name}:\n`));
    assert.ok(section, `group ${g.name}`);
    for (const [name, schema] of Object.entries(g.shape) as [string, z.ZodType][]) {
      const def = flagDefault(schema);
      assert.ok(section.includes(`\n  -${name} (default: ${def === '' ? '""' : def})\n      ${flagDescription(schema)}`), `-${name} in ${g.name}`);
    }
  }
});

test('YAML paths: one per flag, none the prefix of another', () => {
  const paths = Object.values(YAML_PATHS);
  assert.equal(new Set(paths).size, paths.length);
  for (const p of paths) assert.ok(!paths.some((q) => q.startsWith(`${p}.`)), `${p} is both a value and a section`);
  assert.equal(YAML_PATHS['distributor.ingestion-rate-limit'], 'limits.ingestion_rate');
  assert.equal(YAML_PATHS['server.http-listen-port'], 'server.http_listen_port');
  assert.equal(YAML_PATHS['ingest-storage.kafka.topic'], 'ingest_storage.kafka.topic');
});

/** A valid value for the flag that is not its default, as YAML would hold it. */
function nonDefault(name: string, schema: z.ZodType): string | number | boolean | string[] {
  const special: Record<string, string | number | string[]> = {
    'tracing.otlp-endpoint': 'http://otel-collector:4318',
    'tracing.sample-ratio': 0.25,
    'compactor.block-ranges': ['1h', '6h', '48h'],
    'blocks-storage.tsdb.block-ranges-period': ['1h'],
    'log.level': 'debug',
    'ingest-storage.kafka.producer-record-version': 2,
  };
  if (name in special) return special[name];
  const def = flagDefault(schema)!;
  const inner = (schema._zod.def as { innerType?: z.ZodType }).innerType;
  const enumValues = (inner?._zod.def as { entries?: Record<string, string> } | undefined)?.entries;
  if (def === 'true' || def === 'false') return def !== 'true';
  if (enumValues !== undefined) return Object.values(enumValues).find((v) => v !== def)!;
  if (/^\d+(ms|[smhdwy])$/.test(def)) return def === '7m' ? '8m' : '7m';
  if (/^\d+(\.\d+)?$/.test(def)) return Number(def) + 1;
  return `${name}-value`;
}

test("a YAML config file in Mimir's layout sets every flag: it parses to what the same flags give", () => {
  const dir = mkdtempSync(join(tmpdir(), 'strata-config-'));
  try {
    const doc: Record<string, unknown> = {};
    const args: string[] = [];
    for (const [name, schema] of FLAGS) {
      if (!(name in YAML_PATHS)) continue;
      const v = nonDefault(name, schema);
      args.push(`-${name}=${Array.isArray(v) ? v.join(',') : String(v)}`);
      const parts = YAML_PATHS[name].split('.');
      let node = doc;
      for (const p of parts.slice(0, -1)) node = (node[p] ??= {}) as Record<string, unknown>;
      node[parts.at(-1)!] = v;
    }
    const path = join(dir, 'strata.yaml');
    writeFileSync(path, stringify(doc));
    const fromFile = parseConfig(parseFlags([`-config.file=${path}`], {}));
    const fromFlags = parseConfig(parseFlags(args, {}));
    const defaults = parseConfig(parseFlags([], {}));
    assert.deepEqual({ ...fromFile.config, 'config.file': '' }, fromFlags.config);
    for (const name of Object.keys(YAML_PATHS)) {
      assert.notDeepEqual(
        fromFile.config[name as keyof typeof fromFile.config],
        defaults.config[name as keyof typeof defaults.config],
        `-${name} kept its default`,
      );
    }
    // The command line and STRATA_* beat the file.
    const over = parseConfig(parseFlags([`-config.file=${path}`, '-server.http-listen-port=7000'], { STRATA_INGEST_STORAGE_KAFKA_TOPIC: 'env-topic' }));
    assert.equal(over.config['server.http-listen-port'], 7000);
    assert.equal(over.config['ingest-storage.kafka.topic'], 'env-topic');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('-config.expand-env expands ${VAR:default} in the file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'strata-config-'));
  try {
    const path = join(dir, 'strata.yaml');
    writeFileSync(path, 'server:\n  http_listen_port: ${CFG_TEST_PORT:9001}\ningest_storage:\n  kafka:\n    topic: ${CFG_TEST_TOPIC:t}\n');
    process.env.CFG_TEST_TOPIC = 'from-env';
    const c = parseConfig(parseFlags([`-config.file=${path}`, '-config.expand-env=true'], {})).config;
    assert.equal(c['server.http-listen-port'], 9001);
    assert.equal(c['ingest-storage.kafka.topic'], 'from-env');
    assert.throws(
      () => parseConfig(parseFlags([`-config.file=${path}`], {})),
      /invalid value "\$\{CFG_TEST_PORT:9001\}" for -server.http-listen-port \(from -config.file\)/,
    );
  } finally {
    delete process.env.CFG_TEST_TOPIC;
    rmSync(dir, { recursive: true, force: true });
  }
});

test('single-tenant single-process defaults: only -target=all with multi-tenancy off, only for limits not set', () => {
  const single = parseConfig(parseFlags(['-target=all', '-auth.multitenancy-enabled=false'], {}));
  for (const [flag, value] of Object.entries(SINGLE_TENANT_DEFAULTS)) assert.equal(single.config[flag as keyof typeof SINGLE_TENANT_DEFAULTS], value, flag);
  assert.deepEqual(single.singleTenantDefaults.sort(), Object.keys(SINGLE_TENANT_DEFAULTS).sort());
  assert.match(
    limitsLine(single),
    /single-tenant single-process defaults.*10000000 samples\/s.*max series unlimited.*-distributor.ingestion-rate-limit.*-runtime-config.file/,
  );

  const multi = parseConfig(parseFlags(['-target=all'], {}));
  assert.equal(multi.config['distributor.ingestion-rate-limit'], 10_000);
  assert.equal(multi.config['distributor.ingestion-burst-size'], 200_000);
  assert.equal(multi.config['ingester.max-global-series-per-user'], 150_000);
  assert.deepEqual(multi.singleTenantDefaults, []);
  assert.match(limitsLine(multi), /defaults from flags\): ingestion rate 10000 samples\/s, burst 200000, max series 150000/);

  const distributor = parseConfig(parseFlags(['-target=distributor', '-auth.multitenancy-enabled=false'], {}));
  assert.equal(distributor.config['distributor.ingestion-rate-limit'], 10_000);

  const set = parseConfig(
    parseFlags(['-auth.multitenancy-enabled=false', '-distributor.ingestion-rate-limit=500'], { STRATA_INGESTER_MAX_GLOBAL_SERIES_PER_USER: '42' }),
  );
  assert.equal(set.config['distributor.ingestion-rate-limit'], 500);
  assert.equal(set.config['ingester.max-global-series-per-user'], 42);
  assert.equal(set.config['distributor.ingestion-burst-size'], SINGLE_TENANT_DEFAULTS['distributor.ingestion-burst-size']);
  assert.deepEqual(set.singleTenantDefaults, ['distributor.ingestion-burst-size']);
});
