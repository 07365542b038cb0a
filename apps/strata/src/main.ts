// The one Strata binary. -target picks the modules (default all: the single
// process `npm start` runs); each is built once from the one parsed config,
// then its services start in dependency order and stop in reverse.

import { ServiceManager, keepGcHeadroom, parseFlags, renderHelp, resolveModules, type Service } from '@strata/service';
import { FLAG_GROUPS, limitsLine, parseConfig } from './config.ts';
import { MODULES } from './modules.ts';
import { Strata } from './strata.ts';
import { versionLine } from './version.ts';

const argv = process.argv.slice(2);
if (argv.some((a) => a === '-help' || a === '--help' || a === '-h')) {
  process.stdout.write(renderHelp(FLAG_GROUPS, usage()));
  process.exit(0);
}
if (argv.some((a) => a === '-version' || a === '--version')) {
  process.stdout.write(`${versionLine()}\n`);
  process.exit(0);
}

let t: Strata;
try {
  const parsed = parseConfig(parseFlags(argv));
  t = new Strata(parsed, resolveModules(MODULES, parsed.targets));
  t.logger.info(limitsLine(parsed));
} catch (err) {
  // A bad flag, value, config file or target: one line that names it, no stack trace.
  console.error(`strata: ${(err as Error).message.replace(/\s*\n\s*/g, ' ')}`);
  process.exit(2);
}
t.logger.info(keepGcHeadroom());
const services: Service[] = [];
for (const name of t.modules) services.push(...((await MODULES[name].init?.(t)) ?? []));
const manager = new ServiceManager(services, t.logger);
t.readiness.unshift(() => manager.notReadyReason());
t.serviceStates = () => manager.snapshot();
process.exit(await manager.run());

function usage(): string {
  return [
    `${versionLine()}`,
    'Usage: strata [-flag=value ...]',
    'Every flag can also be set as STRATA_<FLAG> (-ingest-storage.kafka.address: STRATA_INGEST_STORAGE_KAFKA_ADDRESS)',
    "or in -config.file (YAML in Mimir's layout); the command line wins over the environment, which wins over the file.",
  ].join('\n');
}
