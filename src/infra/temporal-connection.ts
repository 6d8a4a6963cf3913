// Where and how this process reaches Temporal. The SDK's environment configuration decides, so the
// same temporal.toml profiles and TEMPORAL_* variables work as for the Temporal CLI: a variable
// overrides the profile's field, an API key turns TLS on unless TLS is disabled. This module reads
// the certificate files at start, checks them, and puts every failure in words that name the
// variable or profile field to fix; key material and the API key never reach a message.
import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  loadClientConfig,
  loadClientConfigProfile,
  toClientOptions,
  type ClientConfigProfile,
  type ClientConfigTLS,
  type ConfigDataSource,
} from '@temporalio/envconfig';
import type { TLSConfig } from '@temporalio/client';
import { ConfigError } from '../shared/errors';

type TlsFile = 'clientCert' | 'clientKey' | 'serverCACert';
type Setting = TlsFile | 'address' | 'apiKey' | 'serverName' | 'tls';

/** The connection as profile and variables give it, before any file is read (part of Config). */
export interface TemporalProfile {
  address: string | undefined;
  namespace: string | undefined;
  apiKey: string | undefined;
  tls: ClientConfigTLS | undefined;
  grpcMeta: Record<string, string> | undefined;
  /** The profile and the file it was read from (none when there is no file). */
  profile: string;
  file: string | undefined;
  /** TEMPORAL_PROFILE or TEMPORAL_CONFIG_FILE chose the profile (the default file's default profile was not just found). */
  chosen: boolean;
  /** Where each setting came from: the variable, or the profile's field; for messages. */
  origins: Partial<Record<Setting, string>>;
}

/** What Connection.connect and NativeConnection.connect take, and the namespace. */
export interface TemporalConnectionSettings {
  address: string;
  namespace: string;
  tls?: TLSConfig | boolean;
  apiKey?: string;
  metadata?: Record<string, string>;
  /** Where the TLS settings came from and the client certificate's subject, for messages; no values. */
  about?: { origins: Partial<Record<Setting, string>>; clientSubject?: string };
}

const VARIABLES: Record<Exclude<Setting, 'tls'>, [path: string, data?: string]> = {
  address: ['TEMPORAL_ADDRESS'],
  apiKey: ['TEMPORAL_API_KEY'],
  serverName: ['TEMPORAL_TLS_SERVER_NAME'],
  clientCert: ['TEMPORAL_TLS_CLIENT_CERT_PATH', 'TEMPORAL_TLS_CLIENT_CERT_DATA'],
  clientKey: ['TEMPORAL_TLS_CLIENT_KEY_PATH', 'TEMPORAL_TLS_CLIENT_KEY_DATA'],
  serverCACert: ['TEMPORAL_TLS_SERVER_CA_CERT_PATH', 'TEMPORAL_TLS_SERVER_CA_CERT_DATA'],
};
const FIELDS: Record<Exclude<Setting, 'tls'>, [path: string, data?: string]> = {
  address: ['address'],
  apiKey: ['api_key'],
  serverName: ['tls.server_name'],
  clientCert: ['tls.client_cert_path', 'tls.client_cert_data'],
  clientKey: ['tls.client_key_path', 'tls.client_key_data'],
  serverCACert: ['tls.server_ca_cert_path', 'tls.server_ca_cert_data'],
};

/** Where the Temporal CLI looks for temporal.toml when TEMPORAL_CONFIG_FILE is not set (as the SDK). */
function defaultConfigFile(env: Record<string, string>): string | undefined {
  if (process.platform === 'win32') return env.APPDATA ? path.join(env.APPDATA, 'temporalio', 'temporal.toml') : undefined;
  if (process.platform === 'darwin')
    return env.HOME ? path.join(env.HOME, 'Library', 'Application Support', 'temporalio', 'temporal.toml') : undefined;
  const dir = env.XDG_CONFIG_HOME || (env.HOME ? path.join(env.HOME, '.config') : undefined);
  return dir && path.isAbsolute(dir) ? path.join(dir, 'temporalio', 'temporal.toml') : undefined;
}

function fail(variable: string, reason: string): never {
  throw new ConfigError(`Invalid configuration:\n  ${variable}: ${reason}`, [{ variable, reason }]);
}

/**
 * The profile (TEMPORAL_PROFILE, else "default") of temporal.toml (TEMPORAL_CONFIG_FILE, else the
 * CLI's default file when it exists) with the TEMPORAL_* variables over it. Variables set to an empty
 * string count as unset (a TEMPORAL_GRPC_META_* one still removes the profile's header, as the SDK does).
 */
export function loadTemporalProfile(processEnv: NodeJS.ProcessEnv): TemporalProfile {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(processEnv)) {
    if (v === undefined) continue;
    const value = v.trim();
    if (value !== '' || k.startsWith('TEMPORAL_GRPC_META_')) env[k] = value;
  }
  const explicitFile = env.TEMPORAL_CONFIG_FILE;
  const file = explicitFile ?? defaultConfigFile(env);
  const fileVariable = explicitFile ? 'TEMPORAL_CONFIG_FILE' : `temporal.toml (${file})`;
  let data: string | undefined;
  if (file) {
    try {
      data = fs.readFileSync(file, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (explicitFile || code !== 'ENOENT') fail(fileVariable, `cannot read ${file}: ${fileProblem(err)}`);
    }
  }
  const profileName = env.TEMPORAL_PROFILE ?? 'default';
  if (env.TEMPORAL_PROFILE && data === undefined) {
    fail(
      'TEMPORAL_PROFILE',
      `profile "${profileName}" asked for, but there is no temporal.toml (set TEMPORAL_CONFIG_FILE${file ? ` or create ${file}` : ''})`,
    );
  }
  const where = `profile "${profileName}" in ${file}`;
  let loaded: ClientConfigProfile;
  let known: string[] = [];
  try {
    if (data !== undefined) known = Object.keys(loadClientConfig({ configSource: { data } }).profiles);
  } catch (err) {
    // The SDK cannot read a file without any [profile.*] table (a TypeError): such a file has no profiles.
    if (!(err instanceof TypeError)) fail(fileVariable, `${file} is not a valid temporal.toml: ${tomlProblem(err)}`);
    if (env.TEMPORAL_PROFILE) fail('TEMPORAL_PROFILE', `${file} has no profiles, so no "${profileName}"`);
    data = undefined;
  }
  if (env.TEMPORAL_PROFILE && !known.includes(profileName)) {
    fail('TEMPORAL_PROFILE', `no profile "${profileName}" in ${file} (it has ${known.map((n) => `"${n}"`).join(', ') || 'none'})`);
  }
  try {
    loaded = loadClientConfigProfile({
      // The SDK takes TEMPORAL_PROFILE from these variables, and a missing "default" profile is no error.
      ...(data === undefined ? { disableFile: true } : { configSource: { data } }),
      overrideEnvVars: env,
    });
  } catch (err) {
    // "Cannot specify both client_cert_path and client_cert_data": a variable and the profile disagree.
    fail(data === undefined ? 'TEMPORAL_TLS_*' : `${where} with the TEMPORAL_TLS_* variables`, (err as Error).message);
  }
  const origins: TemporalProfile['origins'] = {};
  for (const [setting, [pathVar, dataVar]] of Object.entries(VARIABLES) as [Exclude<Setting, 'tls'>, [string, string?]][]) {
    const value =
      setting === 'address'
        ? loaded.address
        : setting === 'apiKey'
          ? loaded.apiKey
          : setting === 'serverName'
            ? loaded.tls?.serverName
            : loaded.tls?.[setting];
    if (value === undefined) continue;
    const variable = env[pathVar] !== undefined ? pathVar : dataVar && env[dataVar] !== undefined ? dataVar : undefined;
    const [pathField, dataField] = FIELDS[setting];
    const field = typeof value === 'object' && 'data' in value ? dataField : pathField;
    origins[setting] = variable ?? `${field} of ${where}`;
  }
  if (loaded.tls) {
    const tlsVariables = Object.keys(env).some((k) => k.startsWith('TEMPORAL_TLS_'));
    origins.tls = env.TEMPORAL_TLS !== undefined ? 'TEMPORAL_TLS' : tlsVariables ? 'the TEMPORAL_TLS_* variables' : `tls of ${where}`;
  }
  return {
    address: loaded.address,
    namespace: loaded.namespace,
    apiKey: loaded.apiKey,
    tls: loaded.tls,
    grpcMeta: loaded.grpcMeta,
    profile: profileName,
    file: data === undefined ? undefined : file,
    chosen: Boolean(env.TEMPORAL_PROFILE || explicitFile),
    origins,
  };
}

/** Whether `dev` connects to the configured server instead of starting its own: an address from
 *  TEMPORAL_ADDRESS or from a profile chosen on purpose, never just one found in the default file. */
export function externalTemporal(t: { address: string | undefined; connection: TemporalProfile }): boolean {
  return t.address !== undefined && (t.connection.origins.address === 'TEMPORAL_ADDRESS' || t.connection.chosen);
}

/** The parser's reason and position, without the lines it quotes (one may hold an api_key). */
function tomlProblem(err: unknown): string {
  const { message, line, column } = err as Error & { line?: number; column?: number };
  const reason = message.split('\n')[0]!.replace(/^Invalid TOML document: /, '');
  return line ? `${reason} (line ${line}, column ${column})` : reason;
}

function fileProblem(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'it is a directory';
  return code ?? (err as Error).message;
}

const WHAT: Record<TlsFile, string> = { clientCert: 'client certificate', clientKey: 'client key', serverCACert: 'server CA certificate' };

function readSource(source: ConfigDataSource, origin: string, setting: TlsFile): Buffer {
  if (!('path' in source)) return Buffer.from(source.data);
  try {
    return fs.readFileSync(source.path);
  } catch (err) {
    return fail(origin, `cannot read the ${WHAT[setting]} ${source.path}: ${fileProblem(err)}`);
  }
}

/** "the file /x" or "the value": how a message names a source without quoting it. */
const sourceName = (s: ConfigDataSource) => ('path' in s ? `${s.path}` : 'the value');

function parseCertificates(pem: Buffer, origin: string, source: ConfigDataSource, setting: TlsFile): X509Certificate[] {
  const blocks = pem.toString('utf8').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g);
  if (!blocks)
    fail(origin, `${sourceName(source)} is not a PEM certificate (no "-----BEGIN CERTIFICATE-----" block) for the ${WHAT[setting]}`);
  return blocks.map((block, i) => {
    try {
      return new X509Certificate(block);
    } catch {
      return fail(origin, `certificate ${i + 1} of ${sourceName(source)} cannot be parsed (${WHAT[setting]})`);
    }
  });
}

function parseKey(pem: Buffer, origin: string, source: ConfigDataSource): KeyObject {
  const text = pem.toString('utf8');
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: 4,ENCRYPTED/.test(text)) {
    fail(origin, `${sourceName(source)} is a passphrase-protected key; the SDK needs the key unencrypted`);
  }
  if (!/-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----/.test(text)) {
    fail(origin, `${sourceName(source)} is not a PEM private key (no "-----BEGIN PRIVATE KEY-----" block) for the client key`);
  }
  try {
    return createPrivateKey(pem);
  } catch {
    return fail(origin, `the private key in ${sourceName(source)} cannot be parsed`);
  }
}

/** The client certificate pair and server CA, read and checked; the profile with their contents inlined. */
function checkedTls(tls: ClientConfigTLS, origins: TemporalProfile['origins']): { tls: ClientConfigTLS; clientSubject?: string } {
  if (tls.disabled) return { tls };
  const origin = (s: TlsFile) => origins[s] ?? VARIABLES[s][0];
  const out: ClientConfigTLS = { ...tls };
  let clientSubject: string | undefined;
  if (tls.serverCACert) {
    const pem = readSource(tls.serverCACert, origin('serverCACert'), 'serverCACert');
    parseCertificates(pem, origin('serverCACert'), tls.serverCACert, 'serverCACert');
    out.serverCACert = { data: pem };
  }
  if (tls.clientCert || tls.clientKey) {
    if (!tls.clientCert || !tls.clientKey) {
      const [has, lacks] = tls.clientCert ? (['clientCert', 'clientKey'] as const) : (['clientKey', 'clientCert'] as const);
      fail(
        origin(has),
        `a ${WHAT[has]} is set but no ${WHAT[lacks]}: set ${VARIABLES[lacks].join(' or ')} (or ${FIELDS[lacks].join(' / ')} in the profile)`,
      );
    }
    const crtPem = readSource(tls.clientCert, origin('clientCert'), 'clientCert');
    const keyPem = readSource(tls.clientKey, origin('clientKey'), 'clientKey');
    const [cert] = parseCertificates(crtPem, origin('clientCert'), tls.clientCert, 'clientCert');
    const key = parseKey(keyPem, origin('clientKey'), tls.clientKey);
    if (!cert!.checkPrivateKey(key)) {
      fail(
        origin('clientKey'),
        `the client key (${sourceName(tls.clientKey)}) does not belong to the client certificate (${sourceName(tls.clientCert)}, ${origin('clientCert')})`,
      );
    }
    const validTo = new Date(cert!.validTo);
    if (validTo.getTime() < Date.now())
      fail(origin('clientCert'), `the client certificate ${sourceName(tls.clientCert)} expired on ${validTo.toISOString()}`);
    clientSubject = cert!.subject.replace(/\n/g, ', ');
    out.clientCert = { data: crtPem };
    out.clientKey = { data: keyPem };
  }
  return { tls: out, clientSubject };
}

/**
 * The options for Connection.connect and NativeConnection.connect. Certificate and key files are
 * read and checked here, so a bad one stops the start with the variable or field to fix. Without an
 * address, the local server on `port` (as `worker` and `api` always did).
 */
export function temporalConnectionSettings(t: {
  address: string | undefined;
  namespace: string;
  port: number;
  connection: TemporalProfile;
}): TemporalConnectionSettings {
  const p = t.connection;
  const checked = p.tls ? checkedTls(p.tls, p.origins) : undefined;
  // The SDK's own rule: explicit TLS settings, else TLS when there is an API key.
  const { connectionOptions } = toClientOptions({ apiKey: p.apiKey, grpcMeta: p.grpcMeta, ...(checked ? { tls: checked.tls } : {}) });
  return {
    address: t.address ?? `127.0.0.1:${t.port}`,
    namespace: t.namespace,
    ...(connectionOptions.tls !== undefined && connectionOptions.tls !== null ? { tls: connectionOptions.tls } : {}),
    ...(connectionOptions.apiKey !== undefined ? { apiKey: connectionOptions.apiKey as string } : {}),
    ...(connectionOptions.metadata ? { metadata: connectionOptions.metadata as Record<string, string> } : {}),
    about: { origins: p.origins, ...(checked?.clientSubject ? { clientSubject: checked.clientSubject } : {}) },
  };
}

function tlsOf(s: TemporalConnectionSettings): TLSConfig | undefined {
  const tls = s.tls ?? (s.apiKey !== undefined ? true : undefined);
  return tls === true ? {} : tls || undefined;
}

/** "mTLS", "TLS", "plain text", with ", API key" when one is sent: words for logs, never values. */
export function temporalSecurity(s: TemporalConnectionSettings): string {
  const tls = tlsOf(s);
  const mode = !tls ? 'plain text' : tls.clientCertPair ? 'mTLS' : 'TLS';
  return s.apiKey !== undefined ? `${mode}, API key` : mode;
}

/** One line for the banner and the logs: address, namespace, how it is secured and from where. */
export function describeTemporalConnection(s: TemporalConnectionSettings): string {
  const tls = tlsOf(s);
  const o = s.about?.origins ?? {};
  const details = [
    tls?.clientCertPair && s.about?.clientSubject ? `client certificate ${s.about.clientSubject}` : undefined,
    tls?.serverRootCACertificate ? `server CA from ${o.serverCACert ?? 'the settings'}` : undefined,
    tls?.serverNameOverride ? `server name ${tls.serverNameOverride}` : undefined,
    s.metadata && Object.keys(s.metadata).length ? `gRPC headers ${Object.keys(s.metadata).join(', ')}` : undefined,
  ].filter(Boolean);
  return `${s.address}  namespace ${s.namespace}, ${temporalSecurity(s)}${details.length ? ` (${details.join('; ')})` : ''}`;
}

/** Log fields for the connection; the logger's redaction masks `apiKey` as it does any key. */
export function temporalLogFields(s: TemporalConnectionSettings): Record<string, unknown> {
  return {
    address: s.address,
    namespace: s.namespace,
    security: temporalSecurity(s),
    ...(s.apiKey !== undefined ? { apiKey: s.apiKey } : {}),
  };
}

/** The ways a server's close of the connection during or just after the handshake reaches the
 *  client; the first request fails with whichever came first (hyper: "connection was not ready"). */
const SERVER_CLOSED = /close_notify|UnexpectedEof|ConnectionReset|BrokenPipe|connection closed|connection was not ready/;

/** Why a connection failed, in words that say which settings to check; the SDK's text at the end. */
export function explainTemporalConnectError(err: unknown, s: TemporalConnectionSettings): Error {
  const raw = err instanceof Error ? err.message : String(err);
  const tls = tlsOf(s);
  const o = s.about?.origins ?? {};
  const ca = o.serverCACert ?? 'TEMPORAL_TLS_SERVER_CA_CERT_PATH (or tls.server_ca_cert_path in the profile)';
  const name = o.serverName ?? 'TEMPORAL_TLS_SERVER_NAME (or tls.server_name in the profile)';
  const address = o.address ?? 'TEMPORAL_ADDRESS';
  const clientPair = o.clientCert
    ? `the client certificate (${o.clientCert}${s.about?.clientSubject ? `, ${s.about.clientSubject}` : ''})`
    : 'the client certificate';
  const untrusted = "the server's certificate was not trusted";
  const setPair =
    'TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH (or tls.client_cert_path and tls.client_key_path in the profile)';
  let reason: string | undefined;
  if (/InvalidCertificate\(UnknownIssuer\)/.test(raw)) {
    reason = `${untrusted}: it is signed by a CA this process does not trust. Check ${ca} (the CA that signed the server's certificate; without it, the system's CAs are used)`;
  } else if (/NotValidForName/.test(raw)) {
    const expected = /expected: \w+\("?([^")]+)"?\)/.exec(raw)?.[1];
    const presented = [...raw.matchAll(/(?:DnsName|IpAddress)\(\\?"?([^"\\)]+)\\?"?\)/g)].map((m) => m[1]).filter((n) => n !== expected);
    reason = `${untrusted}: it is not for ${expected ? `"${expected}"` : 'the name connected to'}${presented.length ? ` (it names ${presented.join(', ')})` : ''}. Check the host in ${address} and ${name}`;
  } else if (/Expired|NotValidYet/.test(raw) && /InvalidCertificate/.test(raw)) {
    reason = `${untrusted}: it has expired or is not valid yet. Check the server's certificate and this machine's clock`;
  } else if (/InvalidCertificate|invalid peer certificate/i.test(raw)) {
    reason = `${untrusted}. Check ${ca} and ${name}`;
  } else if (/CertificateRequired/.test(raw)) {
    reason = `the server requires a client certificate (mTLS) and none was sent: set ${setPair}`;
  } else if (tls && !tls.clientCertPair && (/HandshakeFailure/.test(raw) || SERVER_CLOSED.test(raw))) {
    // A Go server (TLS 1.3) that requires client certificates just closes the connection.
    reason = `the server closed the connection, as one that requires a client certificate (mTLS) does when none is sent: set ${setPair}`;
  } else if (
    tls?.clientCertPair &&
    (/BadCertificate|UnknownCA|CertificateUnknown|UnsupportedCertificate|CertificateRevoked|AccessDenied|DecryptError/.test(raw) ||
      SERVER_CLOSED.test(raw))
  ) {
    reason = `the server refused ${clientPair}. Check that it was signed by a CA the server trusts for clients and that it has not expired`;
  } else if (tls && /InvalidContentType|CorruptMessage|InvalidMessage|wrong version number/i.test(raw)) {
    reason = `the server did not answer in TLS: if it is plain text, set TEMPORAL_TLS=false (TLS is on because of ${o.tls ?? (s.apiKey !== undefined ? 'the API key' : 'the TLS settings')})`;
  } else if (/Connection refused|ECONNREFUSED/i.test(raw)) {
    reason = `nothing is listening there. Is the server running, and is ${address} right?`;
  } else if (!tls && /h2 protocol error|frame with invalid size|http2 error|BrokenPipe|ConnectionReset|UnexpectedEof/i.test(raw)) {
    reason = 'the connection broke at once; if the server expects TLS, set TEMPORAL_TLS=true (and the TEMPORAL_TLS_* settings it needs)';
  }
  return new Error(`cannot connect to Temporal at ${s.address} (${temporalSecurity(s)}): ${reason ? `${reason}. SDK: ${raw}` : raw}`);
}
