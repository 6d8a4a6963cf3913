// One provider, many runs: ten runs against a provider that answers 429 above 10 requests a
// second. LLM calls go through their own task queue, rate-limited by the server across workers,
// and a 429 only delays a call (Retry-After, no attempt limit): every run completes. Ten runs ask
// for far more than the queue's 8 calls a second from start to end (some 170 calls in about 20 s,
// a few dozen of them answered 429), as twenty did (340 in 40 s).
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResearchResult } from '../../src/shared/schemas';
import { planJson, researchRules } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const ready = Boolean(temporalAddress() && databaseUrl());
const RUNS = 10;

describe.skipIf(!ready)(`a rate-limited provider (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ env: { LLM_QUEUE_RATE: '8' } });
  });
  afterAll(async () => h?.close());

  it(`completes ${RUNS} runs that share a provider limited to 10 requests a second`, async () => {
    h.llm.script(researchRules({}, planJson([{ id: 'a' }])));
    h.llm.requestsPerSecond = 10;
    const started = Date.now();
    const ids = await Promise.all(
      Array.from({ length: RUNS }, async (_, i) => {
        const res = await request(h.app)
          .post('/v1/research')
          .send({ question: `How much cheaper has solar power become? (${i})`, options: { autoAcceptPlan: true } })
          .expect(202);
        return res.body.id as string;
      }),
    );
    const results = (await Promise.all(ids.map((id) => h.client.workflow.getHandle(id).result()))) as ResearchResult[];
    for (const r of results) {
      expect(r).toMatchObject({ status: 'completed', outcome: 'report' });
      expect(r.steps).toEqual([{ id: 'a', status: 'completed', attempts: 1 }]);
    }
    // No call paid twice: each call key made one request (this script needs no repair rounds), and
    // every request the provider answered is one of them.
    const { rows } = await h.pool.query(
      'SELECT call_key, count(*)::int AS n FROM llm_requests WHERE research_id = ANY($1) GROUP BY call_key',
      [ids],
    );
    expect(rows.filter((r) => r.n > 1)).toEqual([]);
    const completed = h.llm.completed();
    expect(rows.length).toBe(completed.length);
    console.log(
      `rate-limit: ${RUNS} runs, ${completed.length} LLM requests answered, ${h.llm.rateLimited} answered 429, ${Date.now() - started} ms`,
    );
  }, 240_000);
});
