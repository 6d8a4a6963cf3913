// The Temporal server is killed (SIGKILL) while a plan waits for review: an approval it
// acknowledged just before is in the history after the restart, and the run goes on from it and
// completes, with no completed LLM call paid for twice.
import { existsSync, mkdtempSync } from 'node:fs';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createLogger } from '../../src/infra/logger';
import { createPool } from '../../src/infra/postgres';
import { startTemporalDevServer, type DevServer } from '../../src/infra/temporal-cli';
import { ResearchOptions, type ResearchResult } from '../../src/shared/schemas';
import { approvePlanSignal, getStatusQuery } from '../../src/workflows/messages';
import { createWorker, type WorkerGroup } from '../../src/worker';
import { testConfig } from '../support/harness';
import { ScriptedLlmServer, type LoggedRequest } from '../support/llm-server';
import { researchRules, searchResults } from '../support/research-script';
import { FakeSearxng } from '../support/search-server';
import { databaseUrl, missingReason, workflowBundle } from '../support/services';
import { freePort } from '../support/spawn';

const cli = inject('temporalCliPath');
const ready = Boolean(cli && databaseUrl());
const signature = (r: LoggedRequest) => JSON.stringify([r.rule, r.body.messages]);

describe.skipIf(!ready)(`Temporal server restart (${ready ? 'live' : missingReason()})`, () => {
  const llm = new ScriptedLlmServer();
  const search = new FakeSearxng({}, searchResults('http://fixture.invalid'));
  const cleanups: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  it('honours an approval sent before the restart and completes the run', async () => {
    await llm.start();
    await search.start();
    cleanups.push(
      () => llm.close(),
      () => search.close(),
    );
    const log = createLogger('warn');
    const port = await freePort();
    const dbFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'dr-temporal-')), 'temporal.db');
    const serverOpts = { cliPath: cli!, port, uiPort: undefined, dbFile, namespace: 'default', log };
    let server: DevServer = await startTemporalDevServer(serverOpts);
    cleanups.push(() => server.stop());
    const address = server.address;
    const pool = createPool(databaseUrl()!, 4);
    cleanups.push(() => pool.end());
    const config = testConfig(llm.url, { SEARXNG_URL: search.url, SEARCH_PROVIDERS: 'searxng', TEMPORAL_ADDRESS: address });
    const taskQueue = `restart-${randomUUID()}`;
    const startWorker = async (): Promise<{ worker: WorkerGroup; done: Promise<void>; conn: NativeConnection }> => {
      const conn = await NativeConnection.connect({ address });
      const worker = await createWorker({ config, connection: conn, pool, taskQueue, workflowBundle: workflowBundle() });
      return { worker, done: worker.run(), conn };
    };

    llm.script(researchRules());
    let w = await startWorker();
    let connection = await Connection.connect({ address });
    let client = new Client({ connection });
    const id = `research-restart-${randomUUID()}`;
    await client.workflow.start('researchWorkflow', {
      taskQueue,
      workflowId: id,
      args: [{ question: 'q', tenant: 'default', options: ResearchOptions.parse({}), retry: config.retry }],
    });
    for (const end = Date.now() + 30_000; (await client.workflow.getHandle(id).query(getStatusQuery)).phase !== 'reviewing';) {
      if (Date.now() > end) throw new Error('the plan never went to review');
      await new Promise((r) => setTimeout(r, 100));
    }
    // The server's SQLite file runs with a write-ahead log (see SQLITE_PRAGMAS).
    expect(existsSync(`${dbFile}-wal`)).toBe(true);
    // Approve, and kill the server at once: the signal was acknowledged, so it must survive a
    // crash of the server (the write-ahead log is read back at the next start). The worker may or
    // may not have seen it.
    await client.workflow.getHandle(id).signal(approvePlanSignal, { planVersion: 1 });
    const killed = once(server.process, 'exit');
    server.process.kill('SIGKILL');
    w.worker.shutdown();
    await killed;
    await w.done.catch(() => undefined);
    await w.conn.close().catch(() => undefined);
    await connection.close();

    server = await startTemporalDevServer(serverOpts);
    w = await startWorker();
    cleanups.push(async () => {
      w.worker.shutdown();
      await w.done;
      await w.conn.close();
    });
    connection = await Connection.connect({ address });
    cleanups.push(() => connection.close());
    client = new Client({ connection });
    const result = (await client.workflow.getHandle(id).result()) as ResearchResult;
    expect(result).toMatchObject({ status: 'completed', outcome: 'report', planVersion: 1 });
    expect(result.steps).toEqual([
      { id: 'a', status: 'completed', attempts: 1 },
      { id: 'b', status: 'completed', attempts: 1 },
    ]);
    // The approval decided the review: it did not time out and was not sent again.
    expect(result.notes.join('\n')).not.toMatch(/No review within/);
    const completed = llm.completed().map(signature);
    expect(completed.length - new Set(completed).size).toBe(0);
  }, 180_000);
});
