// A module of the binary (Mimir's pkg/mimir/modules.go entries): what it needs and the
// init that builds its parts from the process object. The registry that lists them is
// the binary's (apps/strata/src/modules.ts); each role's init lives in apps/<role>/.

import type { ModuleSpec, Service } from '@strata/service';
import type { Strata } from './strata.ts';

/** Builds a module's parts (registering its routes and status pages) and hands back the services to start, in order. */
export type ModuleInit = (t: Strata) => Service[] | Promise<Service[]>;

/** One entry of the module registry. */
export interface StrataModule extends ModuleSpec {
  init?: ModuleInit;
}

/** A failure that may come before the service manager watches: kept, and reported once it does. */
export function failureSignal(): { fail(err: Error): void; watch(failed: (err: Error) => void): void } {
  let failed: ((err: Error) => void) | undefined;
  let early: Error | undefined;
  return {
    fail: (err) => (failed ? failed(err) : (early ??= err)),
    watch: (f) => {
      failed = f;
      if (early) f(early);
    },
  };
}
