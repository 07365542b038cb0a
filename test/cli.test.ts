// The binary as a user meets it on the command line: -help, -version, and the
// one-line exit-2 answer to a bad flag, value or config file.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { z } from 'zod';
import { flagDefault } from '@strata/service';
import { FLAG_GROUPS } from '../apps/strata/src/config.ts';

function strata(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['apps/strata/src/main.ts', ...args], {
    cwd: join(import.meta.dirname, '..'),
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, STRATA_LOG_LEVEL: 'info' },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

for (const flag of ['-help', '--help']) {
  test(`${flag}: every flag with its default, grouped by component, exit 0`, () => {
    const r = strata(flag);
    assert.equal(r.status, 0, r.stderr);
    let at = 0;
    for (const g of FLAG_GROUPS) {
      const start = r.stdout.indexOf(`\n${g.name}:\n`, at);
      assert.ok(start >= 0, `group ${g.name} (in order)`);
      const end = r.stdout.indexOf('\n\n', start + 1);
      const section = r.stdout.slice(start, end < 0 ? undefined : end);
      for (const [name, schema] of Object.entries(g.shape) as [string, z.ZodType][]) {
        const def = flagDefault(schema);
        assert.match(
          section,
          new RegExp(`\\n  -${name.replace(/\./g, '\\.')} \\(default: ${(def === '' ? '""' : def!).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\)\\n      \\S`),
          `-${name} in ${g.name}`,
        );
      }
      at = start + 1;
    }
  });
}

test('-version: package version, revision, node version; exit 0', () => {
  const r = strata('-version');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^strata 0\.1\.0 \(revision ([0-9a-f]{7,}|unknown), node v\d+\.\d+\.\d+\)\n$/);
});

function assertOneLineExit2(r: ReturnType<typeof strata>, pattern: RegExp): void {
  assert.equal(r.status, 2, `exit code; stderr: ${r.stderr}`);
  const lines = r.stderr.split('\n').filter((l) => l !== '');
  assert.equal(lines.length, 1, `one line, no stack trace: ${r.stderr}`);
  assert.match(lines[0], pattern);
  assert.equal(r.stdout, '');
}

test('an unknown flag: one line naming it and the closest flag, exit 2', () => {
  assertOneLineExit2(
    strata('-ingest-storage.kafka.adress=x:1'),
    /^strata: unknown flag -ingest-storage\.kafka\.adress; did you mean -ingest-storage\.kafka\.address\?/,
  );
});

test('an invalid value: one line naming the flag and the value, exit 2', () => {
  assertOneLineExit2(strata('-querier.timeout=soon'), /^strata: invalid value "soon" for -querier\.timeout: invalid duration/);
  assertOneLineExit2(strata('-log.format=xml'), /^strata: invalid value "xml" for -log\.format: .*json.*logfmt/);
});

test('an unknown key or an invalid value in -config.file: one line naming it, exit 2', () => {
  const dir = mkdtempSync(join(tmpdir(), 'strata-cli-'));
  try {
    writeFileSync(join(dir, 'bad-key.yaml'), 'limits:\n  ingestion_rat: 5\n');
    assertOneLineExit2(
      strata(`-config.file=${join(dir, 'bad-key.yaml')}`),
      /^strata: -config\.file=\S+bad-key\.yaml: unknown key "limits\.ingestion_rat"; did you mean limits\.ingestion_rate\?$/,
    );
    writeFileSync(join(dir, 'bad-value.yaml'), 'server:\n  http_listen_port: eighty\n');
    assertOneLineExit2(
      strata(`-config.file=${join(dir, 'bad-value.yaml')}`),
      /^strata: invalid value "eighty" for -server\.http-listen-port \(from -config\.file\)/,
    );
    assertOneLineExit2(strata(`-config.file=${join(dir, 'missing.yaml')}`), /^strata: -config\.file=\S+missing\.yaml: cannot read it/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
