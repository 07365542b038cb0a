// Server flags every app shares (Mimir's names).

import { z } from 'zod';

export const serverConfigShape = {
  'server.http-listen-address': z.string().default('127.0.0.1'),
  'server.http-listen-port': z.coerce.number().int().min(0).max(65535).default(8080),
  'server.grpc-listen-address': z.string().default('127.0.0.1'),
  'server.grpc-listen-port': z.coerce.number().int().min(0).max(65535).default(9095),
};

export type ServerConfig = z.infer<z.ZodObject<typeof serverConfigShape>>;
