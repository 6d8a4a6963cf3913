// A second provider and an adaptive in-flight limit per provider: an outage of the primary stays
// transient until it has lasted LLM_FALLBACK_AFTER, then the fallback answers (and the primary
// again once it is back); a prompt the primary refuses as too long goes to the fallback; a 429
// storm halves the limit, the calls wait their turn and all finish, and the limit grows back.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLlm, type ModelRequest } from '../../src/activities/llm/call';
import { createLlmClient } from '../../src/activities/llm/client';
import { AimdLimiter, acquireSlot, type Limiter, type Slot } from '../../src/activities/llm/limiter';
import { endpointOf } from '../../src/activities/llm/providers';
import { createStore } from '../../src/activities/store';
import { registry } from '../../src/infra/metrics';
import { createPool } from '../../src/infra/postgres';
import { ErrorType } from '../../src/shared/errors';
import { ScriptedLlmServer } from '../support/llm-server';
import { testConfig } from '../support/harness';
import { databaseUrl, missingReason } from '../support/services';

const ready = Boolean(databaseUrl());
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('AIMD limiter arithmetic', () => {
  const slots = async (limiter: AimdLimiter, n: number) => Promise.all(Array.from({ length: n }, () => limiter.acquire()));

  it('halves on a 429 (once per round trip, never below 1) and grows back by about one per window of successes', async () => {
    const limiter = new AimdLimiter(8);
    expect(limiter.limit).toBe(8);
    const first = await slots(limiter, 8);
    // Eight requests sent together, all refused: one halving, not eight.
    for (const s of first) s.release('rate-limited');
    expect(limiter.limit).toBe(4);
    expect(limiter.decreases).toBe(1);
    // Sent after that halving: their 429 halves again.
    const second = await slots(limiter, 4);
    for (const s of second) s.release('rate-limited');
    expect(limiter.limit).toBe(2);
    for (let i = 0; i < 3; i++) (await limiter.acquire()).release('rate-limited');
    expect(limiter.limit).toBe(1);
    expect(limiter.decreases).toBe(3);
    // Additive increase: a full window of successes adds one.
    (await limiter.acquire()).release('ok');
    expect(limiter.limit).toBe(2);
    for (let i = 0; i < 2; i++) (await limiter.acquire()).release('ok');
    expect(limiter.limit).toBe(3);
    for (let i = 0; i < 100; i++) (await limiter.acquire()).release('ok');
    expect(limiter.limit).toBe(8); // the ceiling
    (await limiter.acquire()).release('failed'); // a failure that is not a 429 changes nothing
    expect(limiter.limit).toBe(8);
  });

  it('queues requests over the limit in FIFO order and lets a waiter give up', async () => {
    const limiter = new AimdLimiter(2);
    const held = await slots(limiter, 2);
    const order: number[] = [];
    const waiting = [1, 2, 3].map((n) => limiter.acquire().then((s) => (order.push(n), s)));
    const abort = new AbortController();
    const quitter = limiter.acquire(abort.signal);
    expect(limiter.state).toEqual({ limit: 2, inFlight: 2, waiting: 4 });
    abort.abort(new Error('cancelled'));
    await expect(quitter).rejects.toThrow('cancelled');
    expect(limiter.state.waiting).toBe(3);
    held[0]!.release('ok');
    held[1]!.release('ok');
    const granted: Slot[] = await Promise.all(waiting.slice(0, 2));
    expect(order).toEqual([1, 2]);
    expect(limiter.state).toEqual({ limit: 2, inFlight: 2, waiting: 1 });
    granted[0]!.release('ok');
    (await waiting[2]!).release('ok');
    granted[1]!.release('ok');
    expect(order).toEqual([1, 2, 3]);
    expect(limiter.state.inFlight).toBe(0);
  });

  it("a 429's Retry-After holds every new request back that long", async () => {
    const limiter = new AimdLimiter(4);
    (await limiter.acquire()).release('rate-limited', 300);
    expect(limiter.limit).toBe(2);
    const asked = Date.now();
    const slot = await limiter.acquire();
    expect(Date.now() - asked).toBeGreaterThanOrEqual(290);
    slot.release('ok');
  });

  it('an activity waiting for a slot heartbeats and stops waiting when cancelled', async () => {
    const limiter = new AimdLimiter(1);
    const held = await limiter.acquire();
    const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 300 });
    const beats: unknown[] = [];
    env.on('heartbeat', (d: unknown) => beats.push(d));
    const waiting = env.run(() => acquireSlot(limiter));
    await sleep(450);
    env.cancel();
    await expect(waiting).rejects.toThrow();
    expect(beats.length).toBeGreaterThanOrEqual(2);
    expect(beats[0]).toEqual({ waitingFor: 'a model request slot' });
    expect(limiter.state).toEqual({ limit: 1, inFlight: 1, waiting: 0 });
    held.release('ok');
  });
});

describe.skipIf(!ready)(`provider failover and adaptive concurrency (${ready ? 'live' : missingReason()})`, () => {
  const primary = new ScriptedLlmServer();
  const fallback = new ScriptedLlmServer();
  let pool: ReturnType<typeof createPool>;
  beforeAll(async () => {
    await primary.start();
    await fallback.start();
    pool = createPool(databaseUrl()!, 6);
  });
  afterAll(async () => {
    await pool?.end();
    await primary.close();
    await fallback.close();
  });

  function llmFor(env: Record<string, string>, url = primary.url, limiter?: Limiter) {
    const store = createStore(pool);
    const config = testConfig(url, env);
    const client = createLlmClient(config);
    const deps = { config, calls: store.llmCalls, leases: store.llmLeases, client: () => client };
    return { store, llm: createLlm(limiter ? { ...deps, limiterOf: () => limiter } : deps) };
  }
  const withFallback = () =>
    llmFor({
      LLM_FALLBACK_BASE_URL: fallback.url,
      LLM_FALLBACK_API_KEY: 'sk-fallback-secret',
      LLM_FALLBACK_MODEL: 'fallback-model',
      LLM_FALLBACK_AFTER: '1s',
    });

  function ask(text: string): ModelRequest<string> {
    return {
      researchId: `r-${randomUUID()}`,
      role: 'researcher',
      promptName: 'researcher-react',
      messages: [{ role: 'user', content: text }],
      expected: 'text',
      reuse: (logged) => (typeof logged === 'string' ? logged : undefined),
      read: (choice) => {
        const content = choice?.message.content;
        return content ? { value: content, logged: content } : { problem: 'empty', repair: [{ role: 'user', content: 'again' }] };
      },
    };
  }

  /** One activity as Temporal runs it: retried after a transient failure (after its nextRetryDelay, else 200 ms). */
  async function activity<T>(fn: () => Promise<T>, beats: unknown[] = []) {
    const ids = { activityId: randomUUID(), runId: randomUUID() };
    const failures: Error[] = [];
    for (let attempt = 1; attempt <= 60; attempt++) {
      const env = new MockActivityEnvironment({
        activityId: ids.activityId,
        attempt,
        heartbeatTimeoutMs: 600,
        startToCloseTimeoutMs: 60_000,
        currentAttemptScheduledTimestampMs: Date.now(),
        workflowExecution: { workflowId: 'w', runId: ids.runId },
      });
      env.on('heartbeat', (d: unknown) => beats.push(d));
      try {
        const value = (await env.run(fn)) as T;
        return { value, failures, callKey: `${ids.runId}/${ids.activityId}` };
      } catch (err) {
        if (!(err instanceof Error) || (err instanceof ApplicationFailure && err.nonRetryable)) throw err;
        failures.push(err);
        const delay = err instanceof ApplicationFailure && typeof err.nextRetryDelay === 'number' ? err.nextRetryDelay : 200;
        await sleep(delay);
      }
    }
    throw new Error(`no answer after 60 attempts: ${failures.at(-1)?.message}`);
  }

  async function metric(name: string, labels: Record<string, string>): Promise<number> {
    const values = (await registry.getSingleMetric(name)!.get()).values;
    const found = values.find((v) => Object.entries(labels).every(([k, want]) => v.labels[k] === want));
    return found?.value ?? 0;
  }

  it('an outage of the primary is transient until LLM_FALLBACK_AFTER, then the fallback answers; the primary again once back', async () => {
    primary.script([{ reply: { content: 'from the primary' } }]);
    fallback.script([{ reply: { content: 'from the fallback' } }]);
    const { llm, store } = withFallback();
    const before = await activity(() => llm.complete(ask('first')));
    expect(before.value.model).toBe('scripted-default');
    expect(before.failures).toEqual([]);

    const failovers = await metric('deep_research_llm_failovers_total', { reason: 'outage' });
    await primary.down();
    const downAt = Date.now();
    const during = await activity(() => llm.complete(ask('during the outage'))).catch(async (err: unknown) => {
      await primary.up();
      throw err;
    });
    // Transient failures (Temporal retries them) until the primary had been failing for 1 s: how
    // many fit in that second depends on the machine's load, so only that there were some is asked.
    expect(during.failures.length).toBeGreaterThanOrEqual(1);
    for (const f of during.failures) {
      expect(f).not.toBeInstanceOf(ApplicationFailure);
      expect(f.name).toBe('LlmUnavailable');
    }
    expect(Date.now() - downAt).toBeGreaterThanOrEqual(1_000);
    expect(during.value.output).toBe('from the fallback');
    expect(during.value.model).toBe('fallback-model');
    expect((await store.llmCalls.find(during.callKey))?.model).toBe('fallback-model');
    expect(fallback.requests.map((r) => r.body.model)).toEqual(['fallback-model']);
    // The fallback's own key went to the fallback (the server only shows that one was sent).
    expect(fallback.requests[0]!.authorization).toBe('Bearer ***');
    expect(await metric('deep_research_llm_failovers_total', { reason: 'outage' })).toBe(failovers + 1);

    // Still down: a trial finds the primary does not answer, and the fallback answers at once.
    const next = await activity(() => llm.complete(ask('still down?'))).finally(() => primary.up());
    expect(next.failures).toEqual([]);
    expect(next.value.model).toBe('fallback-model');

    // The primary is back: the next trial (one per LLM_FALLBACK_AFTER at most) finds it, and calls stay with it.
    await sleep(1_100);
    const from = primary.requests.length;
    const back = await activity(() => llm.complete(ask('back?')));
    const after = await activity(() => llm.complete(ask('and after')));
    expect([back.value.model, after.value.model]).toEqual(['scripted-default', 'scripted-default']);
    expect([back.value.output, after.value.output]).toEqual(['from the primary', 'from the primary']);
    expect(primary.requests.length - from).toBe(2);
    expect(fallback.requests).toHaveLength(2);
  }, 60_000);

  it('a request the primary refuses as too long, even trimmed, goes to the fallback once', async () => {
    const refusal = { status: 400, error: { message: 'This prompt is too long for the model.', code: 'context_length_exceeded' } };
    primary.script([{ reply: refusal }]);
    fallback.script([{ reply: { content: 'read it all' } }]);
    const { llm } = withFallback();
    const tooLong = await metric('deep_research_llm_failovers_total', { reason: 'too_long' });
    const out = await activity(() => llm.complete(ask('a long page '.repeat(500))));
    expect(out.failures).toEqual([]);
    expect(out.value).toMatchObject({ output: 'read it all', model: 'fallback-model' });
    expect(primary.requests).toHaveLength(3); // as sent, then trimmed twice
    expect(fallback.requests).toHaveLength(1);
    expect(await metric('deep_research_llm_failovers_total', { reason: 'too_long' })).toBe(tooLong + 1);

    // Without a fallback the same refusal is the permanent LlmContextLength it always was.
    primary.script([{ reply: refusal }]);
    const alone = llmFor({}).llm;
    const err = await activity(() => alone.complete(ask('a long page '.repeat(500)))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect((err as ApplicationFailure).type).toBe(ErrorType.LlmContextLength);
  });

  /** 20 calls at once against a server that takes 4 requests a second. */
  async function storm(server: ScriptedLlmServer, limiter?: Limiter) {
    server.script([{ reply: { content: 'ok' } }]);
    server.latencyMs = 300;
    server.requestsPerSecond = 4;
    const { llm } = llmFor({ LLM_PROVIDER_CONCURRENCY: '20' }, server.url, limiter);
    const beats: unknown[] = [];
    const calls = await Promise.all(Array.from({ length: 20 }, (_, i) => activity(() => llm.complete(ask(`call ${i}`)), beats)));
    return { llm, calls, beats };
  }

  it('a 429 storm halves the limit, the calls wait their turn and all finish with fewer 429s, and the limit grows back', async () => {
    const unlimited = await new ScriptedLlmServer().start();
    const limited = await new ScriptedLlmServer().start();
    try {
      // Without a limit every retry goes out when its Retry-After ends, and most are refused again.
      await storm(unlimited, { acquire: async () => ({ release: () => undefined }) });

      const label = { provider: endpointOf(limited.url) };
      const limitNow = () => metric('deep_research_llm_provider_limit', label);
      let lowest = Infinity;
      const watch = setInterval(() => void limitNow().then((v) => (lowest = Math.min(lowest, v))), 25);
      const { llm, calls, beats } = await storm(limited).finally(() => clearInterval(watch));
      expect(calls.map((c) => c.value.output)).toEqual(Array(20).fill('ok'));
      const refusals = calls.flatMap((c) => c.failures);
      expect(refusals.length).toBe(limited.rateLimited);
      for (const f of refusals) expect((f as ApplicationFailure).type).toBe(ErrorType.LlmRateLimited);
      // The first burst is refused about 16 times over either way (20 at once, 4 a second; fewer
      // when a busy machine spreads the 20 over two of the server's seconds); after it the limit
      // keeps calls waiting here.
      expect(limited.rateLimited).toBeGreaterThanOrEqual(12);
      expect(limited.rateLimited).toBeLessThan(unlimited.rateLimited);
      expect(limited.rateLimited).toBeLessThanOrEqual(34);
      expect(lowest).toBeLessThanOrEqual(5);
      expect(await metric('deep_research_llm_provider_limit_decreases_total', label)).toBeGreaterThanOrEqual(2);
      expect(beats).toContainEqual({ waitingFor: 'a model request slot' });
      expect(await metric('deep_research_llm_provider_in_flight', label)).toBe(0);

      // The storm is over: successes grow the limit back.
      limited.requestsPerSecond = undefined;
      limited.latencyMs = 20;
      const settled = await limitNow();
      for (let i = 0; i < 5; i++)
        await Promise.all(Array.from({ length: 6 }, (_, j) => activity(() => llm.complete(ask(`calm ${i}/${j}`)))));
      expect(await limitNow()).toBeGreaterThan(settled + 3);
    } finally {
      await unlimited.close();
      await limited.close();
    }
  }, 90_000);
});
