// Throwaway certificates for TLS tests, made by the real `openssl` binary: a CA, a server
// certificate for localhost and 127.0.0.1 that it signed, a client certificate it signed, and a
// second CA with a client certificate of its own, which a server trusting the first CA refuses.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface TestCerts {
  dir: string;
  /** The CA that signed the server and client certificates (PEM file paths). */
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A CA nobody trusts, and a client certificate it signed. */
  otherCaCert: string;
  otherClientCert: string;
  otherClientKey: string;
  remove(): void;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

// P-256 keys: quick to make, and accepted by the Temporal server (Go), the SDK's core (rustls) and grpc-js.
const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function makeCa(dir: string, name: string, cn: string): void {
  openssl(dir, [
    'req', '-x509', ...EC_KEY, '-keyout', `${name}.key`, '-out', `${name}.pem`, '-days', '3', '-subj', `/CN=${cn}`,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
  ]); // prettier-ignore
}

function makeLeaf(dir: string, name: string, ca: string, cn: string, extensions: string): void {
  fs.writeFileSync(path.join(dir, `${name}.ext`), `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n${extensions}\n`);
  openssl(dir, ['req', ...EC_KEY, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`]);
  openssl(dir, [
    'x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.pem`, '-CAkey', `${ca}.key`, '-CAcreateserial',
    '-out', `${name}.pem`, '-days', '2', '-extfile', `${name}.ext`,
  ]); // prettier-ignore
}

/** Makes the certificates in `dir` (a new temporary directory when not given). */
export function makeTestCerts(dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dr-certs-'))): TestCerts {
  makeCa(dir, 'ca', 'deep-research test CA');
  makeLeaf(dir, 'server', 'ca', 'localhost', 'extendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1');
  makeLeaf(dir, 'client', 'ca', 'deep-research-client', 'extendedKeyUsage=clientAuth');
  makeCa(dir, 'other-ca', 'untrusted test CA');
  makeLeaf(dir, 'other-client', 'other-ca', 'untrusted-client', 'extendedKeyUsage=clientAuth');
  const file = (name: string) => path.join(dir, name);
  return {
    dir,
    caCert: file('ca.pem'),
    serverCert: file('server.pem'),
    serverKey: file('server.key'),
    clientCert: file('client.pem'),
    clientKey: file('client.key'),
    otherCaCert: file('other-ca.pem'),
    otherClientCert: file('other-client.pem'),
    otherClientKey: file('other-client.key'),
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
