// The image `strata-test/tenant-proxy` in the pod runner: a remote-write sidecar that adds the
// X-Scope-OrgID header, for Debian's Prometheus 2.42.0+ds, which ignores remote_write `headers`
// (prometheus/prometheus#13030). Flags: -listen=host:port -upstream=http://host:port -tenant=id.
import { createServer, request } from 'node:http';

const flag = (name: string): string => {
  const a = process.argv.find((x) => x.startsWith(`-${name}=`));
  if (a === undefined) throw new Error(`-${name}= is required`);
  return a.slice(name.length + 2);
};
const [host, port] = flag('listen').split(':');
const upstream = new URL(flag('upstream'));
const tenant = flag('tenant');

createServer((req, res) => {
  const up = request(
    {
      host: upstream.hostname,
      port: upstream.port,
      method: req.method,
      path: req.url,
      headers: { ...req.headers, host: upstream.host, 'x-scope-orgid': tenant },
    },
    (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    },
  );
  up.on('error', (err) => {
    res.writeHead(502).end(`tenant-proxy: ${err.message}\n`);
  });
  req.pipe(up);
}).listen(Number(port), host, () => process.stdout.write(`tenant-proxy on ${host}:${port} -> ${upstream.href} as ${tenant}\n`));
process.on('SIGTERM', () => process.exit(0));
