// Flags every app shares (Mimir's names): the server, logging and the config file.

import { z } from 'zod';
import { boolFlag } from './flags.ts';
import { byteSize } from './memory-budget.ts';

export const serverConfigShape = {
  'server.http-listen-address': z.string().default('127.0.0.1').describe('HTTP bind address (0.0.0.0 in containers).'),
  'server.http-listen-port': z.coerce.number().int().min(0).max(65535).default(8080).describe('HTTP port (push, query API, /ready, /metrics).'),
  'server.grpc-listen-address': z.string().default('127.0.0.1').describe("Bind address of the ingester's gRPC query service."),
  'server.grpc-listen-port': z.coerce.number().int().min(0).max(65535).default(9095).describe("Port of the ingester's gRPC query service."),
  'server.memory-limit': byteSize('0').describe(
    "Memory this process may use (bytes, or 512MiB, 4GiB); 0: the cgroup's limit, else 75% of the machine's. The V8 heap is 75% of it, and limits on pushes in flight, series per ingester and memory per query default to shares of it.",
  ),
};

export type ServerConfig = z.infer<z.ZodObject<typeof serverConfigShape>>;

const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
const LOG_FORMATS = ['json', 'logfmt'] as const;

export const logConfigShape = {
  // 'silent' is for tests (STRATA_LOG_LEVEL=silent); -help shows the four levels a user picks from.
  'log.level': z
    .enum([...LOG_LEVELS, 'silent'])
    .default('info')
    .describe('Lowest level logged: debug, info, warn or error (also STRATA_LOG_LEVEL).')
    .meta({ yaml: 'server.log_level' }),
  // JSON stays the default (Mimir's is logfmt): log shippers and the e2e tests read it as is.
  'log.format': z.enum(LOG_FORMATS).default('json').describe('Log line format.').meta({ yaml: 'server.log_format' }),
};

export type LogConfig = z.infer<z.ZodObject<typeof logConfigShape>>;

export const configFileShape = {
  'config.file': z.string().default('').describe("YAML config file in Mimir's layout; flags and STRATA_* variables override it."),
  'config.expand-env': boolFlag(false).describe('Expand ${VAR} and ${VAR:default} in -config.file before parsing it.'),
};
