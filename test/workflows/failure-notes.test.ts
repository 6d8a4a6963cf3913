// A search provider that fails while another answers is not a silent gap: the step's result, the
// step on the board and the run's notes (which the report quotes) all say which one and why.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResearchResult } from '../../src/shared/schemas';
import { getStatusQuery } from '../../src/workflows/messages';
import type { ChatRequest, Reply } from '../support/llm-server';
import { planJson, researchRules, userText } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';
import { freePort } from '../support/spawn';

const ready = Boolean(temporalAddress() && databaseUrl());

describe.skipIf(!ready)(`failures worked around are recorded (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  beforeAll(async () => {
    // Encyclopedic queries go to Wikipedia and SearXNG; Wikipedia points at a port nobody serves.
    const dead = await freePort();
    h = await startHarness({ env: { SEARCH_PROVIDERS: 'searxng,wikipedia', WIKIPEDIA_BASE_URL: `http://127.0.0.1:${dead}` } });
  });
  afterAll(async () => h?.close());

  it('notes a failed search provider in the step result, the step and the run', async () => {
    const react = (req: ChatRequest): Reply =>
      req.messages.some((m) => m.role === 'tool')
        ? { content: 'I have what I need.' }
        : { toolCalls: [{ name: 'web_search', arguments: { queries: ['what is solar power', 'history of photovoltaics'] } }] };
    const rewrite = { json: { researchQuestion: 'What is solar power?', queries: ['what is solar power', 'solar cost'] } };
    h.llm.script(researchRules({ react, rewrite }, planJson([{ id: 'a' }])));
    const res = await request(h.app)
      .post('/v1/research')
      .send({ question: 'What is solar power?', options: { autoAcceptPlan: true } })
      .expect(202);
    const handle = h.client.workflow.getHandle(res.body.id as string);
    const result = (await handle.result()) as ResearchResult;
    expect(result.status).toBe('completed');

    // SearXNG answered every query, so the research went on with its results ...
    expect(result.steps).toEqual([{ id: 'a', status: 'completed', attempts: 1 }]);
    // ... and Wikipedia's failure is counted once per step, not lost.
    const stepNote = /^search provider wikipedia failed 2 times: /;
    const view = await handle.query(getStatusQuery);
    expect(view.plan!.steps[0]!.notes).toEqual([expect.stringMatching(stepNote)]);
    expect(result.notes).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^Background search: a provider failed 1 time while others answered: wikipedia: /),
        expect.stringMatching(/^Step a: search provider wikipedia failed 2 times: /),
      ]),
    );
    // The reporter was told.
    const reporter = h.llm.requests.find((r) => r.rule === 'reporter')!;
    expect(userText(reporter.body)).toMatch(/Notes about this run: [\s\S]*Step a: search provider wikipedia failed 2 times/);
  });
});
