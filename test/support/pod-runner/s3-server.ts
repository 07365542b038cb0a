// The image `strata-test/s3rver` in the pod runner: an S3-compatible server (s3rver, as the other e2e
// tests use) for manifests that expect a bucket outside the cluster. Flags: -port, -dir, -bucket.
import { startS3Server } from '@strata/objstore';

const flag = (name: string, dflt: string): string => {
  const a = process.argv.find((x) => x.startsWith(`-${name}=`));
  return a === undefined ? dflt : a.slice(name.length + 2);
};
const server = await startS3Server({ dir: flag('dir', '/data'), bucket: flag('bucket', 'strata-blocks'), host: '0.0.0.0', port: Number(flag('port', '9000')) });
process.stdout.write(`s3rver listening at ${server.endpoint}, bucket ${server.bucket}\n`);
process.on('SIGTERM', () => void server.stop().then(() => process.exit(0)));
