// The one Strata binary's entry. Before the modules load (seconds on a busy machine), the V8 heap
// is sized from the memory budget: node re-executes in place with --max-old-space-size when it
// must, so the modules load once. Then run.ts parses the config and runs the -target modules.

import { flagValue, flagYamlPath, memoryBudget, parseByteSize, parseFlags, readConfigFile, serverConfigShape, sizeHeapFromBudget } from '@strata/service';

const argv = process.argv.slice(2);
const informational = argv.some((a) => ['-help', '--help', '-h', '-version', '--version'].includes(a));
const heapLine = informational ? undefined : sizeHeap(argv);
const { run } = await import('./run.ts');
await run(argv, heapLine);

/** The heap line for the startup log (re-executes node when the heap must change); undefined when the flags cannot be read yet (run.ts says why). */
function sizeHeap(args: string[]): string | undefined {
  let limit: number;
  try {
    limit = memoryLimitFlag(args);
  } catch {
    return undefined;
  }
  return sizeHeapFromBudget(memoryBudget(limit));
}

/** -server.memory-limit from the command line, STRATA_SERVER_MEMORY_LIMIT or -config.file, in that order. */
function memoryLimitFlag(args: string[]): number {
  const flag = 'server.memory-limit' as const;
  const values = parseFlags(args);
  const file = flagValue(values, 'config.file');
  if (file !== undefined && file !== '') {
    const expandEnv = ['true', '1'].includes(flagValue(values, 'config.expand-env') ?? 'false');
    values.file = readConfigFile(file, { yamlPaths: { [flag]: flagYamlPath(flag, serverConfigShape[flag]) }, expandEnv, ignoreUnknown: true });
  }
  return parseByteSize(flagValue(values, flag) ?? '0');
}
