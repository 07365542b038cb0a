// A short failure drill in the test suite: zone-a-down and broker-down with brief fault windows
// on one shared drill cluster (3 brokers RF 3 / min ISR 2, 2 distributors, 2x2 ingesters),
// modest load, and the zero-loss verdict asserted from the reports the drill writes.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scenarioByName } from './scenarios/index.ts';
import { DrillCluster } from './support/drill-cluster.ts';
import { writeReport, type DrillReport } from './support/report.ts';
import { DEFAULT_DRILL_OPTIONS, runDrill, type DrillOptions } from './support/run-drill.ts';

const FAULT_SECONDS = 12;

describe('failure drills (short)', { timeout: 300_000 }, () => {
  let dir: string;
  let cluster: DrillCluster;
  let opts: DrillOptions;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-drill-test-'));
    const log = process.env.STRATA_DRILL_VERBOSE ? (line: string) => console.log(line) : () => undefined;
    opts = {
      ...DEFAULT_DRILL_OPTIONS,
      faultSeconds: FAULT_SECONDS,
      warmupSeconds: 8,
      afterSeconds: 2,
      series: 300,
      intervalMs: 500,
      groups: 6,
      shards: 2,
      catchUpTimeoutSeconds: 120,
      verifyTimeoutSeconds: 60,
      dataDir: dir,
      log,
    };
    cluster = await DrillCluster.start({ dataDir: join(dir, 'cluster'), log, blockPeriod: opts.blockPeriod });
  });

  after(async () => {
    await cluster?.stop();
    if (process.env.STRATA_KEEP_TEST_DATA === undefined) rmSync(dir, { recursive: true, force: true });
    else console.log(`drill data kept in ${dir}`);
  });

  async function drill(name: string): Promise<DrillReport> {
    const report = await runDrill(scenarioByName(name)!, opts, cluster);
    const file = writeReport(report, join(dir, 'reports'));
    const written = JSON.parse(readFileSync(file, 'utf8')) as DrillReport;
    assert.equal(written.scenario, name);
    assert.match(readFileSync(join(dir, 'reports', 'SUMMARY.md'), 'utf8'), new RegExp(`\\| ${name} \\| `));
    const summary = `${name}: ${report.status} acked ${report.acked_samples} lost ${report.lost_samples} availability ${report.query_availability} catch-up ${report.catch_up_seconds}s`;
    console.log(summary);
    assert.notEqual(report.status, 'error', `${summary}\n${JSON.stringify(report.events, null, 1)}`);
    assert.equal(report.lost_samples, 0, `${summary}\n${report.findings.join('\n')}`);
    assert.ok((report.acked_samples ?? 0) > 0, 'samples were acknowledged');
    assert.ok(report.fault_seconds !== null && report.fault_seconds >= FAULT_SECONDS, `fault lasted ${report.fault_seconds}s`);
    assert.equal(typeof report.catch_up_seconds, 'number', `caught up: ${String(report.catch_up_detail)}`);
    assert.equal(typeof report.query_availability, 'number', 'probes ran during the fault');
    assert.equal(typeof report.longest_push_stall_ms, 'number', 'the report has the longest push stall');
    assert.match(readFileSync(join(dir, 'reports', 'SUMMARY.md'), 'utf8'), new RegExp(`\\| ${name} \\| .* \\| ${report.longest_push_stall_ms} \\| `));
    for (const zone of ['a', 'b']) {
      const v = (report.verification as Record<string, { comparison?: { missing: number; mismatched: number; checked: number } }>)[`zone_${zone}_only`];
      assert.equal(v.comparison?.missing, 0, `zone ${zone} alone holds every acked sample`);
      assert.equal(v.comparison?.mismatched, 0, `zone ${zone} alone has exact values`);
      assert.equal(v.comparison?.checked, report.acked_samples);
    }
    assert.ok(existsSync(file));
    return report;
  }

  test('zone-a-down: no acknowledged sample lost, zone b answers every probe', async () => {
    const report = await drill('zone-a-down');
    assert.ok(report.query_availability! >= 0.999, `query availability ${report.query_availability} during zone-a outage`);
    assert.equal(report.status, 'pass', report.findings.join('\n'));
  });

  test('broker-down: no acknowledged sample lost with one of three brokers gone', async () => {
    await drill('broker-down');
  });
});
