// A real S3-compatible server on loopback (s3rver, a dev dependency) for
// tests and local drills: the S3 backend is exercised over HTTP with AWS
// signatures, not against a fake client.

import { mkdir } from 'node:fs/promises';

export interface LocalS3Server {
  /** http://127.0.0.1:<port> */
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** The -blocks-storage.* flags that point a Strata app at this server. */
  flags(): string[];
  stop(): Promise<void>;
}

interface S3rverInstance {
  run(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
}

/** Starts s3rver storing its objects under `dir`, with one bucket, on 127.0.0.1 and a free port unless told otherwise. */
export async function startS3Server(opts: { dir: string; bucket?: string; host?: string; port?: number }): Promise<LocalS3Server> {
  const bucket = opts.bucket ?? 'strata-blocks';
  await mkdir(opts.dir, { recursive: true });
  // A variable specifier: s3rver has no types and is only present where dev dependencies are.
  const specifier = 's3rver';
  const { default: S3rver } = (await import(specifier)) as { default: new (o: object) => S3rverInstance };
  const host = opts.host ?? '127.0.0.1';
  // Path-style only (as Strata sends to any endpoint but AWS'): with vhostBuckets s3rver takes a
  // host name such as a Service's ("s3:9000") for a bucket name.
  const server = new S3rver({
    port: opts.port ?? 0,
    address: host,
    silent: true,
    vhostBuckets: false,
    directory: opts.dir,
    configureBuckets: [{ name: bucket }],
  });
  const { port } = await server.run();
  const endpoint = `http://${host}:${port}`;
  return {
    endpoint,
    bucket,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    flags: () => [
      '-blocks-storage.backend=s3',
      `-blocks-storage.s3.endpoint=${host}:${port}`,
      '-blocks-storage.s3.insecure=true',
      `-blocks-storage.s3.bucket-name=${bucket}`,
      '-blocks-storage.s3.access-key-id=S3RVER',
      '-blocks-storage.s3.secret-access-key=S3RVER',
      '-blocks-storage.s3.region=us-east-1',
    ],
    stop: () => server.close(),
  };
}
