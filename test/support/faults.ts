// What the fault tests share: a run started through the API and waited on until the moment to
// break something, and separate worker processes (to kill or stop) around a scripted LLM.
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import request from 'supertest';
import { afterAll, beforeAll } from 'vitest';
import type { Harness } from './harness';
import { ScriptedLlmServer, type LoggedRequest } from './llm-server';
import { searchResults } from './research-script';
import { FakeSearxng } from './search-server';
import { temporalAddress } from './services';
import type { Spawned } from './spawn';
import { spawnWorker } from './worker-process';

/** Identity of an LLM request: a completed call that appears twice was paid for twice. */
export const signature = (r: LoggedRequest) => JSON.stringify([r.rule, r.body.messages]);

/** Completed requests that repeat one completed before. */
export function repeatedCompleted(llm: ScriptedLlmServer): number {
  const completed = llm.completed().map(signature);
  return completed.length - new Set(completed).size;
}

/** Starts a run through the API (plan review off unless the options say otherwise). */
export async function startRun(h: Harness, options: Record<string, unknown> = {}) {
  const res = await request(h.app)
    .post('/v1/research')
    .send({ question: 'How much cheaper has solar power become?', options: { autoAcceptPlan: true, ...options } })
    .expect(202);
  return h.client.workflow.getHandle(res.body.id as string);
}

/** Waits until the model has been asked for `rule` (e.g. the first researcher turn): mid-run. */
export async function untilAsked(llm: ScriptedLlmServer, rule: string, timeoutMs = 30_000): Promise<void> {
  for (const end = Date.now() + timeoutMs; !llm.requests.some((r) => r.rule === rule);) {
    if (Date.now() > end) throw new Error(`the model was never asked for ${rule}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * A scripted LLM, a search double, a client, and `deep-research worker` processes on one task
 * queue, killed when the file ends. Call in a describe block.
 */
export function workerProcesses(name: string, env: Record<string, string> = {}) {
  const llm = new ScriptedLlmServer();
  const search = new FakeSearxng({}, searchResults('http://fixture.invalid'));
  const workers: Spawned[] = [];
  const taskQueue = `${name}-${randomUUID()}`;
  const ctx = { llm, search, taskQueue, client: undefined as unknown as Client, startWorker };
  let connection: Connection | undefined;

  function startWorker(): Spawned {
    const w = spawnWorker({ taskQueue, llmUrl: llm.url, searxngUrl: search.url, env });
    workers.push(w);
    return w;
  }

  beforeAll(async () => {
    await llm.start();
    await search.start();
    connection = await Connection.connect({ address: temporalAddress()! });
    ctx.client = new Client({ connection });
  });
  afterAll(async () => {
    for (const w of workers) w.child.kill('SIGKILL');
    await connection?.close();
    await llm.close();
    await search.close();
  });
  return ctx;
}
