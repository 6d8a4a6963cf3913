// The real Temporal server (scripts/temporal-server.ts) for tests that need one of their own: the
// admin URL it creates its databases with, whether it is installed, and certificates for TLS.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { installedTemporalServer } from '../../scripts/temporal-server';
import { DEFAULT_ADMIN_URL } from './global-setup';

export function adminUrl(): string {
  return process.env.TEST_DATABASE_ADMIN_URL ?? DEFAULT_ADMIN_URL;
}

/**
 * Why a test of the real server cannot run here, or undefined. Under CI=true a missing build is no
 * reason: the test builds it (.ci/run has done so already) or fails.
 */
export function realServerMissing(): string | undefined {
  if (process.env.CI === 'true' || installedTemporalServer()) return undefined;
  return 'the Temporal server is not built (node bin/run-ts.mjs scripts/temporal-server.ts --install-only)';
}

export interface TestCerts {
  caFile: string;
  serverCertFile: string;
  serverKeyFile: string;
  clientCertFile: string;
  clientKeyFile: string;
}

/** A CA, a server certificate for 127.0.0.1 and localhost, and a client certificate, valid a day. */
export function makeTestCerts(dir: string): TestCerts {
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...ecKey,
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.pem'),
    '-days',
    '1',
    '-subj',
    '/CN=deep-research test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  const issue = (name: string, cn: string, ext: string) => {
    writeFileSync(file(`${name}.ext`), ext);
    openssl('req', ...ecKey, '-keyout', file(`${name}.key`), '-out', file(`${name}.csr`), '-subj', `/CN=${cn}`);
    openssl(
      'x509',
      '-req',
      '-in',
      file(`${name}.csr`),
      '-CA',
      file('ca.pem'),
      '-CAkey',
      file('ca.key'),
      '-CAcreateserial',
      '-out',
      file(`${name}.pem`),
      '-days',
      '1',
      '-extfile',
      file(`${name}.ext`),
    );
  };
  issue('server', 'localhost', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  issue('client', 'deep-research test client', 'extendedKeyUsage=clientAuth\n');
  return {
    caFile: file('ca.pem'),
    serverCertFile: file('server.pem'),
    serverKeyFile: file('server.key'),
    clientCertFile: file('client.pem'),
    clientKeyFile: file('client.key'),
  };
}
