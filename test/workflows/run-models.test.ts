// A run's own models (options.models): each role it names is asked on that model, in the run and
// in its steps' child workflows; the others keep the server's. A model the server does not allow
// (the roles' and the fallback's, LLM_REQUEST_MODELS, what the provider's list serves) is a 400
// that lists the allowed ones, before anything starts.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResearchResult } from '../../src/shared/schemas';
import { listedModels } from '../../src/activities/knowledge/probe';
import { modelCatalog } from '../../src/api/model-check';
import { planJson, researchRules } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const ready = Boolean(temporalAddress() && databaseUrl());

describe.skipIf(!ready)(`a run's own models (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ env: { LLM_REQUEST_MODELS: 'scripted-large,scripted-small', RESEARCHER_PYTHON: 'false' } });
  });
  afterAll(async () => h?.close());

  it('asks each role it names on that model, in the run and in its steps; the other roles keep the server’s', async () => {
    h.llm.script(researchRules({}, planJson([{ id: 'a' }])));
    const res = await request(h.app)
      .post('/v1/research')
      .send({
        question: 'How far did solar costs fall?',
        options: { autoAcceptPlan: true, models: { researcher: 'scripted-small', reporter: 'scripted-large' } },
      })
      .expect(202);
    expect(((await h.client.workflow.getHandle(res.body.id).result()) as ResearchResult).outcome).toBe('report');
    const modelsOf = (rule: string) => [...new Set(h.llm.requests.filter((r) => r.rule === rule).map((r) => r.body.model))];
    expect(modelsOf('react')).toEqual(['scripted-small']);
    expect(modelsOf('researcher')).toEqual(['scripted-small']);
    expect(modelsOf('reporter')).toEqual(['scripted-large']);
    expect(modelsOf('coordinator')).toEqual(['scripted-coordinator']);
    expect(modelsOf('judge')).toEqual(['scripted-default']);
    // The call log names the model each call was paid on.
    const { rows } = await h.pool.query(`SELECT DISTINCT role, model FROM llm_calls WHERE research_id = $1 AND role = 'reporter'`, [
      res.body.id,
    ]);
    expect(rows).toEqual([{ role: 'reporter', model: 'scripted-large' }]);
  });

  it('refuses a model the server does not allow, and a role it does not have, with what it allows', async () => {
    const refused = await request(h.app)
      .post('/v1/research')
      .send({ question: 'q?', options: { models: { reporter: 'gpt-9-ultra' } } })
      .expect(400);
    expect(refused.body.error.code).toBe('unknown_model');
    expect(refused.body.error.message).toBe(
      'options.models names models this server does not allow (gpt-9-ultra); allowed: scripted-coordinator, scripted-default, scripted-large, scripted-small',
    );
    const role = await request(h.app)
      .post('/v1/research')
      .send({ question: 'q?', options: { models: { writer: 'scripted-large' } } })
      .expect(400);
    expect(JSON.stringify(role.body.error)).toMatch(/writer/);
    // A rewrite's model is held to the same list.
    const rewrite = await request(h.app).post('/v1/research/research-none/report').send({ model: 'gpt-9-ultra' }).expect(400);
    expect(rewrite.body.error.code).toBe('unknown_model');
    // The API's own catalog adds what the provider's models list serves.
    expect(await modelCatalog(h.config.llm, () => listedModels(h.config)).allowed()).toEqual([
      'scripted',
      'scripted-coordinator',
      'scripted-default',
      'scripted-large',
      'scripted-small',
    ]);
  });
});
