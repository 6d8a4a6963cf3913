// How the process reaches Temporal: temporal.toml profiles and TEMPORAL_* variables through the
// SDK's environment configuration, certificate files checked at start with messages that name the
// setting, TLS handshake failures explained, and no secret in what is printed.
import fs from 'node:fs';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/infra/logger';
import { connectTemporal } from '../../src/infra/services';
import {
  describeTemporalConnection,
  explainTemporalConnectError,
  externalTemporal,
  temporalConnectionSettings,
  temporalLogFields,
  temporalSecurity,
} from '../../src/infra/temporal-connection';
import { ConfigError } from '../../src/shared/errors';
import { makeTestCerts, type TestCerts } from '../support/certs';

const API_KEY = 'tmprl-secret-api-key-0123456789abcdef';
let certs: TestCerts;
let toml: string;

beforeAll(() => {
  certs = makeTestCerts();
  toml = path.join(certs.dir, 'temporal.toml');
  fs.writeFileSync(
    toml,
    [
      '[profile.default]',
      'address = "default.example:7233"',
      'namespace = "from-default"',
      '',
      '[profile.prod]',
      'address = "prod.example:7233"',
      'namespace = "prod-ns"',
      '[profile.prod.tls]',
      `client_cert_path = "${certs.clientCert}"`,
      `client_key_path = "${certs.clientKey}"`,
      `server_ca_cert_path = "${certs.caCert}"`,
      'server_name = "temporal.internal"',
      '[profile.prod.grpc_meta]',
      'x-team = "research"',
      '',
      '[profile.cloud]',
      'address = "ns.acct.tmprl.cloud:7233"',
      'namespace = "ns.acct"',
      `api_key = "${API_KEY}"`,
      '',
      '[profile.broken]',
      'address = "broken.example:7233"',
      '[profile.broken.tls]',
      `client_cert_path = "${path.join(certs.dir, 'missing.pem')}"`,
      `client_key_path = "${certs.clientKey}"`,
    ].join('\n'),
  );
});
afterAll(() => certs?.remove());

const settingsOf = (env: Record<string, string>) => temporalConnectionSettings(loadConfig(env).temporal);

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('profiles and variables', () => {
  it('reads the default profile of TEMPORAL_CONFIG_FILE, and TEMPORAL_PROFILE picks another', () => {
    const d = loadConfig({ TEMPORAL_CONFIG_FILE: toml }).temporal;
    expect([d.address, d.namespace]).toEqual(['default.example:7233', 'from-default']);
    const p = settingsOf({ TEMPORAL_CONFIG_FILE: toml, TEMPORAL_PROFILE: 'prod' });
    expect(p.address).toBe('prod.example:7233');
    expect(p.namespace).toBe('prod-ns');
    expect(p.metadata).toEqual({ 'x-team': 'research' });
    const tls = p.tls as {
      serverNameOverride?: string;
      serverRootCACertificate?: Uint8Array;
      clientCertPair?: { crt: Uint8Array; key: Uint8Array };
    };
    expect(tls.serverNameOverride).toBe('temporal.internal');
    expect(Buffer.from(tls.serverRootCACertificate!).equals(fs.readFileSync(certs.caCert))).toBe(true);
    expect(Buffer.from(tls.clientCertPair!.crt).equals(fs.readFileSync(certs.clientCert))).toBe(true);
    expect(Buffer.from(tls.clientCertPair!.key).equals(fs.readFileSync(certs.clientKey))).toBe(true);
    expect(temporalSecurity(p)).toBe('mTLS');
    expect(describeTemporalConnection(p)).toBe(
      `prod.example:7233  namespace prod-ns, mTLS (client certificate CN=deep-research-client; server CA from tls.server_ca_cert_path of profile "prod" in ${toml}; server name temporal.internal; gRPC headers x-team)`,
    );
  });

  it('variables override the profile, as the SDK does', () => {
    const s = settingsOf({
      TEMPORAL_CONFIG_FILE: toml,
      TEMPORAL_PROFILE: 'prod',
      TEMPORAL_ADDRESS: 'override.example:7233',
      TEMPORAL_NAMESPACE: 'override-ns',
      TEMPORAL_TLS_SERVER_NAME: 'other.internal',
      TEMPORAL_TLS_CLIENT_CERT_PATH: certs.otherClientCert,
      TEMPORAL_TLS_CLIENT_KEY_PATH: certs.otherClientKey,
      TEMPORAL_GRPC_META_X_TEAM: '',
      TEMPORAL_GRPC_META_X_REGION: 'eu',
    });
    expect([s.address, s.namespace]).toEqual(['override.example:7233', 'override-ns']);
    const tls = s.tls as { serverNameOverride?: string; clientCertPair?: { crt: Uint8Array } };
    expect(tls.serverNameOverride).toBe('other.internal');
    expect(Buffer.from(tls.clientCertPair!.crt).equals(fs.readFileSync(certs.otherClientCert))).toBe(true);
    // An empty TEMPORAL_GRPC_META_* removes the profile's header.
    expect(s.metadata).toEqual({ 'x-region': 'eu' });
    expect(s.about?.origins.clientCert).toBe('TEMPORAL_TLS_CLIENT_CERT_PATH');
    expect(s.about?.origins.serverCACert).toBe(`tls.server_ca_cert_path of profile "prod" in ${toml}`);
  });

  it('TEMPORAL_ADDRESS alone works as before: plain text, namespace "default"; without it, the local port', () => {
    const s = settingsOf({ TEMPORAL_ADDRESS: '127.0.0.1:7233' });
    expect(s).toMatchObject({ address: '127.0.0.1:7233', namespace: 'default' });
    expect(s.tls).toBeUndefined();
    expect(temporalSecurity(s)).toBe('plain text');
    expect(settingsOf({ TEMPORAL_ADDRESS: '', TEMPORAL_PORT: '7999' }).address).toBe('127.0.0.1:7999');
  });

  it('an API key turns TLS on unless TLS is disabled (the SDK rule)', () => {
    const cloud = settingsOf({ TEMPORAL_CONFIG_FILE: toml, TEMPORAL_PROFILE: 'cloud' });
    expect(cloud.tls).toBe(true);
    expect(cloud.apiKey).toBe(API_KEY);
    expect(temporalSecurity(cloud)).toBe('TLS, API key');
    const env = settingsOf({ TEMPORAL_ADDRESS: 'x.tmprl.cloud:7233', TEMPORAL_API_KEY: API_KEY });
    expect(env.tls).toBe(true);
    const off = settingsOf({ TEMPORAL_ADDRESS: 'proxy.local:7233', TEMPORAL_API_KEY: API_KEY, TEMPORAL_TLS: 'false' });
    expect(off.tls).toBe(false);
    expect(temporalSecurity(off)).toBe('plain text, API key');
    expect(temporalSecurity(settingsOf({ TEMPORAL_ADDRESS: 'a:7233', TEMPORAL_TLS: 'true' }))).toBe('TLS');
  });

  it('dev starts its own server unless TEMPORAL_ADDRESS or a chosen profile says where', () => {
    const home = path.join(certs.dir, 'home');
    fs.mkdirSync(path.join(home, '.config', 'temporalio'), { recursive: true });
    fs.copyFileSync(toml, path.join(home, '.config', 'temporalio', 'temporal.toml'));
    const found = loadConfig({ HOME: home }).temporal;
    expect(found.address).toBe('default.example:7233');
    expect(externalTemporal(found)).toBe(false);
    expect(externalTemporal(loadConfig({ HOME: home, TEMPORAL_PROFILE: 'default' }).temporal)).toBe(true);
    expect(externalTemporal(loadConfig({ TEMPORAL_ADDRESS: 'a:7233' }).temporal)).toBe(true);
    expect(externalTemporal(loadConfig({}).temporal)).toBe(false);
  });
});

describe('settings that fail at start, naming the variable or field', () => {
  it('a profile that does not exist, a config file that does not, a file that is not TOML', () => {
    expect(configError(() => loadConfig({ TEMPORAL_CONFIG_FILE: toml, TEMPORAL_PROFILE: 'staging' })).message).toMatch(
      /TEMPORAL_PROFILE: no profile "staging" in .*temporal\.toml \(it has "default", "prod", "cloud", "broken"\)/,
    );
    expect(configError(() => loadConfig({ TEMPORAL_CONFIG_FILE: '/nonexistent/temporal.toml' })).message).toMatch(
      /TEMPORAL_CONFIG_FILE: cannot read \/nonexistent\/temporal\.toml: no such file/,
    );
    const bad = path.join(certs.dir, 'bad.toml');
    fs.writeFileSync(bad, `[profile.default]\napi_key = "${API_KEY}" x\n`);
    const invalid = configError(() => loadConfig({ TEMPORAL_CONFIG_FILE: bad })).message;
    expect(invalid).toMatch(/TEMPORAL_CONFIG_FILE: .*bad\.toml is not a valid temporal\.toml: .* \(line 2, column \d+\)$/);
    // The parser quotes the line; the message does not.
    expect(invalid).not.toContain(API_KEY);
    expect(configError(() => loadConfig({ TEMPORAL_TLS: 'yes' })).message).toMatch(/TEMPORAL_TLS: expected true or false/);
    expect(configError(() => loadConfig({ TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: 'true' })).message).toMatch(
      /TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: not supported/,
    );
  });

  it('a missing or unreadable certificate file', () => {
    const missing = path.join(certs.dir, 'nope.pem');
    const e = configError(() =>
      settingsOf({ TEMPORAL_ADDRESS: 'a:7233', TEMPORAL_TLS_CLIENT_CERT_PATH: missing, TEMPORAL_TLS_CLIENT_KEY_PATH: certs.clientKey }),
    );
    expect(e.message).toBe(
      `Invalid configuration:\n  TEMPORAL_TLS_CLIENT_CERT_PATH: cannot read the client certificate ${missing}: no such file`,
    );
    expect(configError(() => settingsOf({ TEMPORAL_CONFIG_FILE: toml, TEMPORAL_PROFILE: 'broken' })).message).toContain(
      `tls.client_cert_path of profile "broken" in ${toml}: cannot read the client certificate`,
    );
    expect(configError(() => settingsOf({ TEMPORAL_ADDRESS: 'a:7233', TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.dir })).message).toMatch(
      /TEMPORAL_TLS_SERVER_CA_CERT_PATH: cannot read the server CA certificate .*: it is a directory/,
    );
  });

  it('a file that is not PEM, a key that does not belong to the certificate, a certificate without its key', () => {
    const der = path.join(certs.dir, 'client.der');
    fs.writeFileSync(der, Buffer.from([0x30, 0x82, 0x01, 0x0a, 0x02, 0x82]));
    expect(configError(() => settingsOf({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: der })).message).toMatch(
      /TEMPORAL_TLS_SERVER_CA_CERT_PATH: .*client\.der is not a PEM certificate/,
    );
    expect(
      configError(() => settingsOf({ TEMPORAL_TLS_CLIENT_CERT_PATH: certs.clientCert, TEMPORAL_TLS_CLIENT_KEY_PATH: certs.clientCert }))
        .message,
    ).toMatch(/TEMPORAL_TLS_CLIENT_KEY_PATH: .*client\.pem is not a PEM private key/);
    const mismatch = configError(() =>
      settingsOf({ TEMPORAL_TLS_CLIENT_CERT_PATH: certs.clientCert, TEMPORAL_TLS_CLIENT_KEY_PATH: certs.otherClientKey }),
    );
    expect(mismatch.message).toMatch(
      /TEMPORAL_TLS_CLIENT_KEY_PATH: the client key \(.*other-client\.key\) does not belong to the client certificate \(.*client\.pem/,
    );
    expect(configError(() => settingsOf({ TEMPORAL_TLS_CLIENT_CERT_PATH: certs.clientCert })).message).toMatch(
      /TEMPORAL_TLS_CLIENT_CERT_PATH: a client certificate is set but no client key: set TEMPORAL_TLS_CLIENT_KEY_PATH or TEMPORAL_TLS_CLIENT_KEY_DATA/,
    );
    // The key's contents never appear in a message, even when they are given inline.
    const keyPem = fs.readFileSync(certs.otherClientKey, 'utf8');
    const inline = configError(() => settingsOf({ TEMPORAL_TLS_CLIENT_CERT_PATH: certs.clientCert, TEMPORAL_TLS_CLIENT_KEY_DATA: keyPem }));
    expect(inline.message).toMatch(/TEMPORAL_TLS_CLIENT_KEY_DATA: the client key \(the value\) does not belong/);
    expect(inline.message).not.toContain(keyPem.split('\n')[1]);
  });
});

describe('TLS handshake failures', () => {
  let server: http2.Http2SecureServer;
  let address: string;
  beforeAll(async () => {
    // A TLS server that asks for a client certificate signed by the test CA, as an mTLS cluster does.
    server = http2.createSecureServer({
      cert: fs.readFileSync(certs.serverCert),
      key: fs.readFileSync(certs.serverKey),
      ca: fs.readFileSync(certs.caCert),
      requestCert: true,
      rejectUnauthorized: true,
    });
    server.on('stream', (s) => s.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '12' }, { endStream: true }));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    address = `localhost:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const connectError = async (env: Record<string, string>) => {
    const err = await connectTemporal(settingsOf({ TEMPORAL_ADDRESS: address, ...env })).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err).toBeInstanceOf(Error);
    return err!.message;
  };
  const pair = () => ({ TEMPORAL_TLS_CLIENT_CERT_PATH: certs.clientCert, TEMPORAL_TLS_CLIENT_KEY_PATH: certs.clientKey });

  it('a CA that did not sign the server certificate: not trusted, check the CA setting', async () => {
    const msg = await connectError({ ...pair(), TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.otherCaCert });
    expect(msg).toMatch(
      /^cannot connect to Temporal at localhost:\d+ \(mTLS\): the server's certificate was not trusted: it is signed by a CA/,
    );
    expect(msg).toContain('Check TEMPORAL_TLS_SERVER_CA_CERT_PATH');
  });

  it('a server name the certificate does not have: not trusted, check the address and the server name', async () => {
    const msg = await connectError({
      ...pair(),
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.caCert,
      TEMPORAL_TLS_SERVER_NAME: 'temporal.example',
    });
    expect(msg).toMatch(/the server's certificate was not trusted: it is not for "temporal\.example" \(it names localhost, 127\.0\.0\.1\)/);
    expect(msg).toContain('Check the host in TEMPORAL_ADDRESS and TEMPORAL_TLS_SERVER_NAME');
  });

  it('no client certificate for a server that requires one', async () => {
    // The alert may arrive, or the connection may just close first (as with the Go server).
    const msg = await connectError({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.caCert });
    expect(msg).toMatch(
      /\(TLS\): the server (requires a client certificate \(mTLS\) and none was sent|closed the connection, as one that requires a client certificate \(mTLS\) does when none is sent): set TEMPORAL_TLS_CLIENT_CERT_PATH/,
    );
  });

  it("the SDK's errors, each put in words (as the core of 1.24.0 words them)", () => {
    const plain = settingsOf({ TEMPORAL_ADDRESS: 'h:7233' });
    const tls = settingsOf({ TEMPORAL_ADDRESS: 'h:7233', TEMPORAL_TLS: 'true' });
    const mtls = settingsOf({ TEMPORAL_ADDRESS: 'h:7233', ...pair() });
    const said = (s: typeof plain, raw: string) => explainTemporalConnectError(new Error(raw), s).message;
    expect(said(tls, 'transport error: received fatal alert: CertificateRequired')).toMatch(
      /\(TLS\): the server requires a client certificate \(mTLS\) and none was sent/,
    );
    expect(said(mtls, 'transport error: received fatal alert: BadCertificate')).toMatch(
      /\(mTLS\): the server refused the client certificate \(TEMPORAL_TLS_CLIENT_CERT_PATH, CN=deep-research-client\)/,
    );
    // The same refusal when the server's close cut the first request off (seen once in a run of the test above).
    expect(
      said(
        tls,
        `Failed to call GetSystemInfo: code: 'The operation was cancelled', message: "operation was canceled", source: tonic::transport::Error(Transport, hyper::Error(Canceled, "connection was not ready"))`,
      ),
    ).toMatch(/\(TLS\): the server closed the connection, as one that requires a client certificate \(mTLS\) does when none is sent/);
    // And with a client certificate the server refused (seen once in test/e2e/temporal-tls.test.ts).
    expect(
      said(
        mtls,
        `Failed to call GetSystemInfo: code: 'The operation was cancelled', message: "operation was canceled", source: tonic::transport::Error(Transport, hyper::Error(Canceled, "connection was not ready"))`,
      ),
    ).toMatch(/\(mTLS\): the server refused the client certificate/);
    expect(said(tls, 'InvalidCertificate(Expired)')).toMatch(
      /the server's certificate was not trusted: it has expired or is not valid yet/,
    );
    expect(said(tls, 'ConnectError(Custom { kind: InvalidData, error: InvalidContentType })')).toMatch(
      /the server did not answer in TLS: if it is plain text, set TEMPORAL_TLS=false \(TLS is on because of TEMPORAL_TLS\)/,
    );
    expect(said(plain, 'h2 protocol error: http2 error: connection error detected: frame with invalid size')).toMatch(
      /\(plain text\): .*set TEMPORAL_TLS=true/,
    );
    // Anything else keeps the SDK's words.
    expect(said(plain, 'something new')).toBe('cannot connect to Temporal at h:7233 (plain text): something new');
  });

  it('a client certificate the server does not trust', async () => {
    const msg = await connectError({
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.caCert,
      TEMPORAL_TLS_CLIENT_CERT_PATH: certs.otherClientCert,
      TEMPORAL_TLS_CLIENT_KEY_PATH: certs.otherClientKey,
    });
    expect(msg).toMatch(/\(mTLS\): the server refused the client certificate \(TEMPORAL_TLS_CLIENT_CERT_PATH, CN=untrusted-client\)/);
  });

  it('plain text against nothing listening says so', async () => {
    const msg = await connectError({ TEMPORAL_ADDRESS: '127.0.0.1:1' });
    expect(msg).toMatch(/^cannot connect to Temporal at 127\.0\.0\.1:1 \(plain text\): nothing is listening there/);
  });
});

describe('secrets', () => {
  it('the API key and key material never reach the description, the log or an explained error', () => {
    const keyPem = fs.readFileSync(certs.clientKey, 'utf8');
    const s = settingsOf({
      TEMPORAL_ADDRESS: 'x.tmprl.cloud:7233',
      TEMPORAL_API_KEY: API_KEY,
      TEMPORAL_TLS_CLIENT_CERT_PATH: certs.clientCert,
      TEMPORAL_TLS_CLIENT_KEY_DATA: keyPem,
    });
    const written: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (written.push(String(chunk)), true));
    try {
      const log = createLogger('debug');
      log.info('connected to Temporal', temporalLogFields(s));
      log.info(`Temporal ${describeTemporalConnection(s)}`);
    } finally {
      spy.mockRestore();
    }
    const explained = [
      'tonic::transport::Error(Transport, ConnectError(Custom { kind: InvalidData, error: InvalidCertificate(UnknownIssuer) }))',
      'received fatal alert: BadCertificate',
      'Connection refused',
    ].map((raw) => explainTemporalConnectError(new Error(raw), s).message);
    const everything = [...written, describeTemporalConnection(s), ...explained].join('\n');
    expect(everything).toContain('mTLS, API key');
    expect(everything).toContain('"apiKey":"***"');
    expect(everything).not.toContain(API_KEY);
    for (const line of keyPem.split('\n').filter((l) => l.length > 20)) expect(everything).not.toContain(line);
  });
});
