import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { PodRunner, renderOverlay } from './support/pod-runner/index.ts';
const overlay = process.argv[2] ?? 'test/k8s/production';
const dir = mkdtempSync('/tmp/pr-smoke-');
const t0 = Date.now();
const log = (l: string) => console.log(`${((Date.now() - t0) / 1000).toFixed(1)}s ${l}`);
const runner = await PodRunner.start({ objects: renderOverlay(overlay), dir, repoRoot: process.cwd(), log });
process.on('SIGINT', () => void runner.stop().then(() => process.exit(1)));
try {
  await runner.waitReady(undefined, Number(process.env.WAIT ?? 240_000));
  log('all ready');
  console.table(runner.usage());
} catch (e) {
  log(String(e));
  for (const p of runner.allPods()) log(`${p.name} ${p.phase} ready=${p.ready} restarts=${p.restarts}`);
} finally {
  await runner.stop(2);
  log(`stopped; logs in ${join(dir, 'logs')}`);
}
