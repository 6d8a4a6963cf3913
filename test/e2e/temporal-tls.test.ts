// The production entry points against a real Temporal server that serves TLS and requires client
// certificates (mTLS), configured only by the TEMPORAL_* variables a user sets: the worker reports
// ready and the API's /readyz reaches Temporal; a wrong CA and a missing or untrusted client
// certificate stop the process at start, non-zero, with a message that says what to check; the
// API key and the key file's contents never appear in what either process prints. The frontend
// refuses plain text and clients without a certificate, while the server's own system worker (which
// runs schedules) still works. The tests run side by side (it.concurrent, each with its own expect):
// each has processes and a task queue of its own, and mostly waits for its processes to start.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, it, type ExpectStatic } from 'vitest';
import { clientTls, startTemporalServer } from '../../scripts/temporal-server';
import { SEARCH_ATTRIBUTES } from '../../src/shared/constants';
import { makeTestCerts, type TestCerts } from '../support/certs';
import { databaseUrl, missingReason } from '../support/services';
import { adminUrl, realServerMissing } from '../support/temporal-cluster';
import { freePort, spawnCli, type Spawned } from '../support/spawn';

const CI = process.env.CI === 'true';
const ready = !realServerMissing() && Boolean(databaseUrl());
const why = realServerMissing() ?? missingReason();
const API_KEY = 'tls-e2e-api-key-never-printed-7f3a9c';

// Under CI a missing server or database fails here instead of skipping.
describe.skipIf(!ready && !CI)(`Temporal over TLS (${ready ? 'live' : why})`, () => {
  let certs: TestCerts;
  let server: Awaited<ReturnType<typeof startTemporalServer>>;
  const spawned: Spawned[] = [];

  beforeAll(async () => {
    if (!ready) throw new Error(`Temporal over TLS: ${why}`);
    certs = makeTestCerts();
    server = await startTemporalServer({
      adminUrl: adminUrl(),
      namespace: 'tls-e2e',
      searchAttributes: SEARCH_ATTRIBUTES,
      tls: { certFile: certs.serverCert, keyFile: certs.serverKey, clientCaFile: certs.caCert },
    });
  }, 300_000);

  afterAll(async () => {
    for (const p of spawned) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await server?.stop();
    certs?.remove();
    // The server's stop: up to 15 s to exit, then up to 80 s to drop its databases.
  }, 180_000);

  /** What a user sets for a cluster with its own CA; DEBUG logs, so everything that could leak is printed. */
  const env = (extra: Record<string, string>) => ({
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: server.namespace,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.caCert,
    TEMPORAL_TASK_QUEUE: `tls-${randomUUID()}`,
    DATABASE_URL: databaseUrl()!,
    OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
    SEARCH_PROVIDERS: 'wikipedia',
    LOG_LEVEL: 'debug',
    METRICS_PORT: '0',
    ...extra,
  });
  const start = (command: 'worker' | 'api' | 'dev', extra: Record<string, string>) => {
    const p = spawnCli([command], env(extra));
    spawned.push(p);
    return p;
  };
  const clientPair = () => ({ TEMPORAL_TLS_CLIENT_CERT_PATH: certs.clientCert, TEMPORAL_TLS_CLIENT_KEY_PATH: certs.clientKey });

  function expectNoSecrets(expect: ExpectStatic, output: string) {
    expect(output).not.toContain(API_KEY);
    const key = fs.readFileSync(certs.clientKey, 'utf8');
    for (const line of key.split('\n').filter((l) => l.length > 16 && !l.startsWith('-----'))) expect(output).not.toContain(line);
    expect(output).not.toMatch(/PRIVATE KEY/);
  }

  async function stop(expect: ExpectStatic, p: Spawned) {
    p.child.kill('SIGTERM');
    expect(await p.exited(60_000)).toBe(0);
  }

  it.concurrent(
    'serves TLS: plain text and clients without a certificate are refused; schedules still run',
    async ({ expect }) => {
      const { address, namespace } = server;
      const call = async (tls?: Parameters<typeof clientTls>[0]) => {
        const conn = await Connection.connect({ address, connectTimeout: 3_000, ...(tls ? { tls: clientTls(tls) } : {}) });
        try {
          return await conn.workflowService.describeNamespace({ namespace });
        } finally {
          await conn.close();
        }
      };
      await expect(call()).rejects.toThrow();
      await expect(call({ caFile: certs.caCert })).rejects.toThrow();
      const described = await call({ caFile: certs.caCert, certFile: certs.clientCert, keyFile: certs.clientKey });
      expect(described.namespaceInfo?.name).toBe(namespace);

      // A schedule's actions are taken by the scheduler workflow on the server's system worker,
      // which reaches the frontend services from inside (the internal frontend, no client certificate).
      const connection = await Connection.connect({
        address,
        tls: clientTls({ caFile: certs.caCert, certFile: certs.clientCert, keyFile: certs.clientKey }),
      });
      try {
        const client = new Client({ connection, namespace });
        const schedule = await client.schedule.create({
          scheduleId: `tls-${randomUUID()}`,
          spec: { intervals: [{ every: '1 hour' }] },
          action: { type: 'startWorkflow', workflowType: 'nobodyRunsThis', taskQueue: `tls-${randomUUID()}`, args: [] },
        });
        await schedule.trigger();
        let actions = (await schedule.describe()).info.recentActions;
        for (const end = Date.now() + 30_000; !actions.length; actions = (await schedule.describe()).info.recentActions) {
          if (Date.now() > end) throw new Error('the triggered schedule took no action within 30 s');
          await new Promise((r) => setTimeout(r, 200));
        }
        expect(actions[0]!.action.workflow.workflowId).toBeTruthy();
      } finally {
        await connection.close();
      }
    },
    60_000,
  );

  it.concurrent(
    'worker and API connect with mTLS (and an API key); /readyz reaches Temporal; nothing secret is printed',
    async ({ expect }) => {
      const extra = { ...clientPair(), TEMPORAL_API_KEY: API_KEY };
      const worker = start('worker', extra);
      const api = start('api', { ...extra, API_PORT: String(await freePort()) });
      await worker.waitFor(/worker ready/, 180_000);
      const url = (await api.waitFor(/API listening on (http:\/\/\S+)/, 180_000))[1]!;
      const res = await fetch(`${url}/readyz`);
      const body = (await res.json()) as { status: string; checks: Record<string, { ok: boolean; error?: string }> };
      expect(body.checks.temporal).toEqual({ ok: true });
      expect(res.status).toBe(200);
      for (const p of [worker, api]) {
        expect(p.output()).toContain(
          `Temporal ${server.address}  namespace ${server.namespace}, mTLS, API key (client certificate CN=deep-research-client; server CA from TEMPORAL_TLS_SERVER_CA_CERT_PATH)`,
        );
        // The logger's redaction masks the key in the structured line.
        expect(p.output()).toMatch(/connected to Temporal .*"security":"mTLS, API key".*"apiKey":"\*\*\*"/);
      }
      await Promise.all([stop(expect, worker), stop(expect, api)]);
      expectNoSecrets(expect, worker.output());
      expectNoSecrets(expect, api.output());
    },
    300_000,
  );

  it.concurrent(
    'dev against the cluster says in its banner where it connects and how',
    async ({ expect }) => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dr-tls-dev-'));
      const dev = start('dev', { ...clientPair(), API_PORT: String(await freePort()), DATA_DIR: dataDir, LOG_LEVEL: 'info' });
      try {
        const line = (await dev.waitFor(/ {2}Temporal {5}(.*)/, 180_000))[1]!;
        expect(line).toContain(
          `${server.address}  namespace tls-e2e, mTLS (client certificate CN=deep-research-client; server CA from TEMPORAL_TLS_SERVER_CA_CERT_PATH), task queue tls-`,
        );
        expect(dev.output()).toContain('Temporal UI  (external server; see its own UI)');
        await stop(expect, dev);
        expectNoSecrets(expect, dev.output());
      } finally {
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    },
    300_000,
  );

  it.concurrent(
    'a CA that did not sign the server certificate: the worker and the API stop at start, saying it was not trusted',
    async ({ expect }) => {
      const extra = { ...clientPair(), TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.otherCaCert, TEMPORAL_API_KEY: API_KEY };
      const worker = start('worker', extra);
      const api = start('api', { ...extra, API_PORT: String(await freePort()) });
      for (const p of [worker, api]) {
        expect(await p.exited(120_000)).toBe(1);
        expect(p.output()).toMatch(
          /cannot connect to Temporal at 127\.0\.0\.1:\d+ \(mTLS, API key\): the server's certificate was not trusted: it is signed by a CA this process does not trust\. Check TEMPORAL_TLS_SERVER_CA_CERT_PATH/,
        );
        expect(p.output()).not.toMatch(/^\s+at /m);
        expectNoSecrets(expect, p.output());
      }
    },
    300_000,
  );

  it.concurrent(
    'no client certificate: the server refuses, and the worker says one is required',
    async ({ expect }) => {
      const worker = start('worker', {});
      expect(await worker.exited(120_000)).toBe(1);
      expect(worker.output(), worker.output()).toMatch(
        // The server's alert may arrive, or the connection may close before the SDK reads it.
        /\(TLS\): the server (requires a client certificate \(mTLS\) and none was sent|closed the connection, as one that requires a client certificate \(mTLS\) does when none is sent): set TEMPORAL_TLS_CLIENT_CERT_PATH/,
      );
      expect(worker.output()).not.toMatch(/^\s+at /m);
    },
    300_000,
  );

  it.concurrent(
    'a client certificate from a CA the server does not trust: refused, naming the certificate',
    async ({ expect }) => {
      const worker = start('worker', {
        TEMPORAL_TLS_CLIENT_CERT_PATH: certs.otherClientCert,
        TEMPORAL_TLS_CLIENT_KEY_PATH: certs.otherClientKey,
      });
      expect(await worker.exited(120_000)).toBe(1);
      expect(worker.output(), worker.output()).toMatch(
        /\(mTLS\): the server refused the client certificate \(TEMPORAL_TLS_CLIENT_CERT_PATH, CN=untrusted-client\)/,
      );
    },
    300_000,
  );

  it.concurrent(
    'a key file that does not belong to the certificate stops the start before any connection (exit 2)',
    async ({ expect }) => {
      const worker = start('worker', {
        TEMPORAL_TLS_CLIENT_CERT_PATH: certs.clientCert,
        TEMPORAL_TLS_CLIENT_KEY_PATH: certs.otherClientKey,
      });
      expect(await worker.exited(60_000)).toBe(2);
      expect(worker.output()).toMatch(
        /TEMPORAL_TLS_CLIENT_KEY_PATH: the client key \(.*other-client\.key\) does not belong to the client certificate/,
      );
      expect(worker.output()).not.toMatch(/^\s+at /m);
    },
    120_000,
  );
});
