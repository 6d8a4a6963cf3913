// The real Temporal server (go.temporal.io/server on PostgreSQL, not the dev server): a research
// run is listed by its search attribute, survives a kill -9 of the server and completes after the
// restart with the same worker. TLS on the real server: test/e2e/temporal-tls.test.ts.
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureTemporalServer, startTemporalServer, TEMPORAL_SERVER_VERSION } from '../../scripts/temporal-server';
import { createPool } from '../../src/infra/postgres';
import { SEARCH_ATTRIBUTES } from '../../src/shared/constants';
import { ResearchOptions, type ResearchResult } from '../../src/shared/schemas';
import { approvePlanSignal, getStatusQuery } from '../../src/workflows/messages';
import { createWorker } from '../../src/worker';
import { testConfig } from '../support/harness';
import { ScriptedLlmServer } from '../support/llm-server';
import { researchRules, searchResults } from '../support/research-script';
import { FakeSearxng } from '../support/search-server';
import { databaseUrl, missingReason, workflowBundle } from '../support/services';
import { adminUrl, realServerMissing } from '../support/temporal-cluster';

const missing = databaseUrl() ? realServerMissing() : missingReason();

async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  for (const end = Date.now() + ms; ; await new Promise((r) => setTimeout(r, 200))) {
    const got = await probe();
    if (got !== undefined) return got;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms / 1000} s`);
  }
}

describe.skipIf(missing)(`Temporal server ${TEMPORAL_SERVER_VERSION} on PostgreSQL (${missing ?? 'live'})`, () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  it('lists a run by its search attribute; a run survives kill -9 of the server and completes', async () => {
    await ensureTemporalServer();
    const llm = await new ScriptedLlmServer().start();
    const search = await new FakeSearxng({}, searchResults('http://fixture.invalid')).start();
    cleanups.push(
      () => llm.close(),
      () => search.close(),
    );
    const server = await startTemporalServer({ adminUrl: adminUrl(), searchAttributes: SEARCH_ATTRIBUTES });
    cleanups.push(() => server.stop());
    const { address } = server;
    const pool = createPool(databaseUrl()!, 4);
    cleanups.push(() => pool.end());
    const config = testConfig(llm.url, { SEARXNG_URL: search.url, SEARCH_PROVIDERS: 'searxng', TEMPORAL_ADDRESS: address });
    const taskQueue = `real-server-${randomUUID()}`;
    const native = await NativeConnection.connect({ address });
    const worker = await createWorker({ config, connection: native, pool, taskQueue, workflowBundle: workflowBundle() });
    const running = worker.run();
    cleanups.push(async () => {
      worker.shutdown();
      await running;
      await native.close();
    });
    const connection = await Connection.connect({ address });
    cleanups.push(() => connection.close());
    const client = new Client({ connection });

    llm.script(researchRules());
    const id = `research-real-server-${randomUUID()}`;
    const handle = await client.workflow.start('researchWorkflow', {
      taskQueue,
      workflowId: id,
      args: [{ question: 'q', tenant: 'default', options: ResearchOptions.parse({}), retry: config.retry }],
    });
    await until('the plan waits for review', 30_000, async () =>
      (await handle.query(getStatusQuery)).phase === 'reviewing' ? true : undefined,
    );
    // SQL visibility: the attribute the workflow upserted, queried through the server's own parser.
    const listed = async (status: string) => {
      const ids: string[] = [];
      for await (const w of client.workflow.list({ query: `ResearchStatus = '${status}' AND WorkflowId = '${id}'` }))
        ids.push(w.workflowId);
      return ids.length ? ids : undefined;
    };
    expect(await until('listed as awaiting review', 10_000, () => listed('awaiting_review'))).toEqual([id]);

    // Approve, and kill the server at once: the acknowledged signal is in PostgreSQL. The worker
    // stays up, polls into a closed port, and goes on when the server is back.
    await handle.signal(approvePlanSignal, { planVersion: 1 });
    await server.kill('SIGKILL');
    await server.start();

    const result = (await handle.result()) as ResearchResult;
    expect(result).toMatchObject({ status: 'completed', outcome: 'report', planVersion: 1 });
    expect((result.steps ?? []).map((s) => [s.id, s.status])).toEqual([
      ['a', 'completed'],
      ['b', 'completed'],
    ]);
    expect(result.notes.join('\n')).not.toMatch(/No review within/);
    expect(await until('listed as completed', 10_000, () => listed('completed'))).toEqual([id]);
  }, 90_000);
});
