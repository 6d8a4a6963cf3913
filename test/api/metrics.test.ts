// /metrics after a run: HTTP, runs, LLM calls (tokens and latency by model and role), searches and
// pages, as Prometheus text. It is served without a key: no tenant's name unless METRICS_TENANT_NAMES.
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { researchRules } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { nameTenantsInMetrics } from '../../src/infra/metrics';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const ready = Boolean(temporalAddress() && databaseUrl());

/** The value of one series in Prometheus text, or 0. */
function value(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

describe.skipIf(!ready)(`metrics (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
    h.llm.script(researchRules());
  });
  afterAll(async () => h?.close());

  const tenant = `metrics-${randomUUID().slice(0, 8)}`;

  /** One run of the tenant, through the API, to its end. */
  async function runOne(): Promise<void> {
    const res = await request(h.app)
      .post('/v1/research')
      .set('X-Tenant-Id', tenant)
      .send({ question: 'q', options: { autoAcceptPlan: true } })
      .expect(202);
    await h.client.workflow.getHandle(res.body.id).result();
  }

  it('counts the run, its model requests, searches and pages, and the HTTP requests, naming no tenant', async () => {
    await runOne();
    const m = await request(h.app).get('/metrics').expect(200);
    expect(m.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = m.text;
    expect(value(text, 'deep_research_runs_started_total')).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain(tenant);
    expect(text).not.toMatch(/tenant="/);
    expect(value(text, 'deep_research_runs_finished_total{status="completed",outcome="report"}')).toBeGreaterThanOrEqual(1);
    expect(
      value(text, 'deep_research_llm_requests_total{model="scripted-coordinator",role="coordinator",outcome="ok"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(value(text, 'deep_research_llm_tokens_total{model="scripted-default",role="planner",kind="prompt"}')).toBeGreaterThan(0);
    expect(value(text, 'deep_research_llm_cost_usd_total{model="scripted-coordinator",role="coordinator"}')).toBeGreaterThan(0);
    expect(value(text, 'deep_research_llm_request_seconds_count{model="scripted-default",role="reporter"}')).toBeGreaterThanOrEqual(1);
    expect(value(text, 'deep_research_search_queries_total{provider="searxng",outcome="ok"}')).toBeGreaterThan(0);
    expect(value(text, 'deep_research_pages_total{status="ok"}')).toBeGreaterThan(0);
    expect(value(text, 'deep_research_http_requests_total{method="POST",route="/v1/research",status="202"}')).toBeGreaterThanOrEqual(1);
    // Routes are labelled by pattern, never by a run's id.
    expect(text).not.toMatch(/route="\/v1\/research\/research-/);
  });

  it('names the tenant of a run started when METRICS_TENANT_NAMES is true', async () => {
    nameTenantsInMetrics(true);
    try {
      const before = value((await request(h.app).get('/metrics')).text, `deep_research_runs_started_total{tenant="${tenant}"}`);
      await runOne();
      const text = (await request(h.app).get('/metrics')).text;
      expect(value(text, `deep_research_runs_started_total{tenant="${tenant}"}`)).toBe(before + 1);
    } finally {
      nameTenantsInMetrics(false);
    }
  });
});
