// Throwaway certificates for TLS tests, made with the machine's openssl: a CA, a server
// certificate for 127.0.0.1/localhost signed by it (with a PEM keystore as Kafka reads one: the
// PKCS#8 key, then the certificate), a client certificate, and a second CA that signed nothing
// here (for "untrusted certificate" cases). Used by e2e tests only.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface TestCerts {
  caPem: string;
  otherCaPem: string;
  serverKeystorePem: string;
  clientCertPem: string;
  clientKeyPem: string;
}

function openssl(args: string[], dir: string): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

function newCa(dir: string, name: string): void {
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.pem`, '-days', '2', '-subj', `/CN=${name}`], dir);
}

/** A key and a certificate for `cn` signed by the CA `ca`, with `san` as its subjectAltName. */
function signed(dir: string, ca: string, name: string, cn: string, san?: string): void {
  openssl(['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', `${name}.key`], dir);
  openssl(['req', '-new', '-key', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`], dir);
  const ext = join(dir, `${name}.ext`);
  writeFileSync(ext, san === undefined ? 'basicConstraints=CA:FALSE\n' : `basicConstraints=CA:FALSE\nsubjectAltName=${san}\n`);
  openssl(
    ['x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.pem`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-out', `${name}.pem`, '-days', '2', '-extfile', ext],
    dir,
  );
}

export function makeTestCerts(dir: string): TestCerts {
  newCa(dir, 'test-ca');
  newCa(dir, 'other-ca');
  signed(dir, 'test-ca', 'server', 'localhost', 'IP:127.0.0.1,DNS:localhost');
  signed(dir, 'test-ca', 'client', 'strata-client');
  const keystore = join(dir, 'server-keystore.pem');
  writeFileSync(keystore, readFileSync(join(dir, 'server.key'), 'utf8') + readFileSync(join(dir, 'server.pem'), 'utf8'));
  return {
    caPem: join(dir, 'test-ca.pem'),
    otherCaPem: join(dir, 'other-ca.pem'),
    serverKeystorePem: keystore,
    clientCertPem: join(dir, 'client.pem'),
    clientKeyPem: join(dir, 'client.key'),
  };
}
