// GET /v1/research/:id of a run in flight, as a client polling it every few seconds sees it: the
// run's row keeps the view its status query would answer, so no worker is asked; Temporal is asked
// whether the run is still open once, then again only after the recheck time (open-runs.ts), or
// at once when the view says a call is being retried (Temporal gives the attempt times). An end
// the row never hears of (a terminate) shows once the recheck time is up.
import request from 'supertest';
import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/api/app';
import { createResearchService } from '../../src/api/research-service';
import { createStore } from '../../src/activities/store';
import { createLogger } from '../../src/infra/logger';
import { OpenRuns } from '../../src/api/research/open-runs';
import { getStatusQuery } from '../../src/workflows/messages';
import { researchRules } from '../support/research-script';
import { runAwaitingReview } from '../support/awaiting-review';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const ready = Boolean(temporalAddress() && databaseUrl());

/** A client that counts the describes and queries made through its workflow handles, and its lists. */
function countingClient(client: Client) {
  const count = { describe: 0, query: 0, list: 0 };
  const bound = <T extends object>(target: T, key: PropertyKey) => {
    const v = Reflect.get(target, key) as unknown;
    return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
  };
  const workflow = new Proxy(client.workflow, {
    get(target, key) {
      if (key === 'list') count.list++;
      if (key !== 'getHandle') return bound(target, key);
      return (...args: Parameters<Client['workflow']['getHandle']>) => {
        const handle = target.getHandle(...args);
        return new Proxy(handle, {
          get(h, k) {
            if (k === 'describe') count.describe++;
            if (k === 'query') count.query++;
            return bound(h, k);
          },
        });
      };
    },
  });
  const counted = new Proxy(client, { get: (target, key) => (key === 'workflow' ? workflow : bound(target, key)) });
  return { client: counted as Client, count };
}

describe('OpenRuns', () => {
  it('remembers a run seen open for the recheck time, for its own tenant only; an ended one not at all', () => {
    const runs = new OpenRuns(1_000);
    runs.described('r1', 'acme', true, { maxTokens: 5 }, 10_000);
    expect(runs.knownOpen('r1', 'acme', 10_999)).toEqual({ budget: { maxTokens: 5 } });
    expect(runs.knownOpen('r1', 'acme', 11_000)).toBeUndefined();
    expect(runs.knownOpen('r1', 'other', 10_500)).toBeUndefined();
    runs.described('r1', 'acme', false, undefined, 10_500);
    expect(runs.knownOpen('r1', 'acme', 10_600)).toBeUndefined();
  });

  it('takes a run as open past its recheck time while sweeps of closed runs list none of it, forgets one they list, and falls back when they fail', async () => {
    let closed: string[] = [];
    let fail = false;
    const asked: number[] = [];
    const runs = new OpenRuns(1_000, async function* (since) {
      asked.push(since.getTime());
      if (fail) throw new Error('visibility is down');
      yield* closed;
    });
    const settle = () => new Promise((r) => setImmediate(r));
    runs.described('r1', 'acme', true, undefined, 100_000);
    runs.described('r2', 'acme', true, undefined, 100_000);
    expect(runs.knownOpen('r1', 'acme', 100_100)).toBeDefined();
    await settle();
    // Past r1's own recheck time (101_000), the sweep made at 100_100 vouches for it.
    expect(runs.knownOpen('r1', 'acme', 101_050)).toBeDefined();
    await settle();
    closed = ['r2'];
    expect(runs.knownOpen('r1', 'acme', 101_500)).toBeDefined();
    await settle();
    expect(runs.knownOpen('r2', 'acme', 101_600)).toBeUndefined();
    fail = true;
    runs.knownOpen('r1', 'acme', 102_000);
    await settle();
    expect(runs.knownOpen('r1', 'acme', 102_100)).toBeUndefined();
    // Each sweep looks a minute behind the last one that began; after a failure, a minute behind now.
    expect(asked).toEqual([40_100, 40_100, 41_050, 41_500, 42_100]);
  });
});

describe.skipIf(!ready)(`status reads of a run in flight (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
    h.llm.script(researchRules());
  });
  afterAll(async () => h?.close());

  /** An API whose research service goes through a counting client. */
  function countedApi(openRecheckMs: number) {
    const { client, count } = countingClient(h.client);
    const store = createStore(h.pool);
    const app = createApp({
      research: createResearchService({ client, taskQueue: h.taskQueue, store, openRecheckMs }),
      auth: { envKeys: [], table: store.apiKeys, open: true },
      events: store.events,
      rateLimits: h.config.api.rateLimits,
      readiness: {},
      log: createLogger('warn'),
    });
    return { app, count };
  }

  it('answers from the row: no query, one describe until the recheck time, and a terminate seen after it', async () => {
    const { id, handle } = await runAwaitingReview(h);
    const queried = await handle.query(getStatusQuery);

    const { app, count } = countedApi(60_000);
    const first = await request(app).get(`/v1/research/${id}`).expect(200);
    expect(first.body).toEqual({ id, ...queried, budget: { maxTokens: h.config.api.runMaxTokens } });
    expect(count).toMatchObject({ describe: 1, query: 0 });
    for (let i = 0; i < 5; i++) {
      const again = await request(app).get(`/v1/research/${id}`).expect(200);
      expect(again.body).toEqual(first.body);
    }
    expect(count).toMatchObject({ describe: 1, query: 0 });

    // The run is approved: the update answers after the row's write, so the next read shows it.
    await request(app).post(`/v1/research/${id}/plan/approve`).send({ planVersion: 1 }).expect(200);
    const approved = await request(app).get(`/v1/research/${id}`).expect(200);
    expect(approved.body.phase).toBe('researching');

    // A terminate the row never hears of: within the recheck time the row's view stands; an API
    // whose recheck time is up asks Temporal, and says the run was cancelled.
    await handle.terminate('test: an operator ends the run');
    expect((await request(app).get(`/v1/research/${id}`).expect(200)).body.status).toBe('running');
    const { app: rechecking } = countedApi(0);
    expect((await request(rechecking).get(`/v1/research/${id}`).expect(200)).body.status).toBe('cancelled');
  }, 60_000);

  it('keeps answering from the row past the recheck time while sweeps of closed runs list none of it, and sees a terminate from the sweep', async () => {
    const { id, handle } = await runAwaitingReview(h);
    const RECHECK_MS = 1_500;
    const { app, count } = countedApi(RECHECK_MS);
    const read = async () => (await request(app).get(`/v1/research/${id}`).expect(200)).body as { status: string };
    // Reads for three recheck times: one describe at the first, then visibility queries only.
    for (const end = Date.now() + 3 * RECHECK_MS; Date.now() < end;) {
      expect((await read()).status).toBe('awaiting_review');
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(count.describe).toBe(1);
    expect(count.query).toBe(0);
    expect(count.list).toBeGreaterThanOrEqual(3);
    // An operator's terminate: a sweep lists the run, whose next read describes it.
    await handle.terminate('test: an operator ends the run');
    const terminatedAt = Date.now();
    let status = 'awaiting_review';
    while (status !== 'cancelled' && Date.now() - terminatedAt < 20_000) {
      status = (await read()).status;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe('cancelled');
    expect(Date.now() - terminatedAt).toBeLessThan(RECHECK_MS + 5_000);
    expect(count.describe).toBe(2);
  }, 60_000);
});
