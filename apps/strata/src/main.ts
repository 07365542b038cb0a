// The one Strata binary. -target picks the modules (default all: the single
// process `npm start` runs); each is built once from the one parsed config,
// then its services start in dependency order and stop in reverse.

import { ServiceManager, parseFlags, resolveModules, type Service } from '@strata/service';
import { parseConfig } from './config.ts';
import { MODULES } from './modules.ts';
import { Strata } from './strata.ts';

let t: Strata;
try {
  t = new Strata(parseConfig(parseFlags(process.argv.slice(2))));
  t.modules = resolveModules(MODULES, t.targets);
} catch (err) {
  // A bad flag or target: one line that names it, no stack trace.
  console.error(`strata: ${(err as Error).message}`);
  process.exit(2);
}
const services: Service[] = [];
for (const name of t.modules) services.push(...((await MODULES[name].init?.(t)) ?? []));
const manager = new ServiceManager(services, t.logger);
t.readiness.unshift(() => manager.notReadyReason());
t.serviceStates = () => manager.snapshot();
process.exit(await manager.run());
