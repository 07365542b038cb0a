// The one Strata binary, once its heap is sized (main.ts). -target picks the modules (default all:
// the single process `npm start` runs); each is built once from the one parsed config, then its
// services start in dependency order and stop in reverse.

import { Strata } from '@strata/runtime';
import { ServiceManager, keepGcHeadroom, parseFlags, renderHelp, resolveModules, type Service } from '@strata/service';
import { FLAG_GROUPS, budgetLine, limitsLine, parseConfig } from './config.ts';
import { MODULES } from './modules.ts';
import { versionLine } from './version.ts';

/** Runs until the process is told to stop; `heapLine` says how the V8 heap was sized. */
export async function run(argv: string[], heapLine: string | undefined): Promise<never> {
  if (argv.some((a) => a === '-help' || a === '--help' || a === '-h')) {
    process.stdout.write(renderHelp(FLAG_GROUPS, usage()));
    process.exit(0);
  }
  if (argv.some((a) => a === '-version' || a === '--version')) {
    process.stdout.write(`${versionLine()}\n`);
    process.exit(0);
  }
  const t = configured(argv);
  if (heapLine !== undefined) t.logger.info(heapLine);
  t.logger.info(keepGcHeadroom());
  const services: Service[] = [];
  for (const name of t.modules) services.push(...((await MODULES[name].init?.(t)) ?? []));
  const manager = new ServiceManager(services, t.logger);
  t.readiness.unshift(() => manager.notReadyReason());
  t.serviceStates = () => manager.snapshot();
  process.exit(await manager.run());
}

/** The process object for the flags; a bad flag, value, config file or target exits 2 with one line that names it. */
function configured(argv: string[]): Strata {
  try {
    const parsed = parseConfig(parseFlags(argv));
    const t = new Strata(parsed, resolveModules(MODULES, parsed.targets));
    t.logger.info(limitsLine(parsed));
    t.logger.info(budgetLine(parsed));
    return t;
  } catch (err) {
    console.error(`strata: ${(err as Error).message.replace(/\s*\n\s*/g, ' ')}`);
    process.exit(2);
  }
}

function usage(): string {
  return [
    `${versionLine()}`,
    'Usage: strata [-flag=value ...]',
    'Every flag can also be set as STRATA_<FLAG> (-ingest-storage.kafka.address: STRATA_INGEST_STORAGE_KAFKA_ADDRESS)',
    "or in -config.file (YAML in Mimir's layout); the command line wins over the environment, which wins over the file.",
  ].join('\n');
}
