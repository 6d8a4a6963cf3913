// The background step reads the best pages of its searches (the first hit of each query, then the
// second, each URL once; fewer for a quick run) for the research question, and the brief writer
// gets their extracts beside the snippets. A page that cannot be read is noted; the brief goes on.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResearchResult } from '../../src/shared/schemas';
import type { ChatRequest } from '../support/llm-server';
import { planJson, researchRules, searchResults, userText } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const ready = Boolean(temporalAddress() && databaseUrl());

/** The research question of the scripted rewrite: the goal the background reads pages for. */
const RESEARCH_QUESTION = 'How far did solar costs fall 2010-2022?';

describe.skipIf(!ready)(`background pages (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ env: { RESEARCHER_PYTHON: 'false' } });
  });
  afterAll(async () => h?.close());

  async function run(options: Record<string, unknown>) {
    h.llm.script(researchRules({}, planJson([{ id: 'a' }], { hasEnoughContext: true })));
    const res = await request(h.app)
      .post('/v1/research')
      .send({ question: 'Solar or wind?', options: { autoAcceptPlan: true, ...options } })
      .expect(202);
    const result = (await h.client.workflow.getHandle(res.body.id).result()) as ResearchResult;
    expect(result.outcome).toBe('report');
    const status = (await request(h.app).get(`/v1/research/${res.body.id}`).expect(200)).body;
    // The page reads come before the brief, with the research question as their goal.
    const background = h.llm.requests.findIndex((r) => r.rule === 'background');
    const reads = h.llm.requests.slice(0, background).filter((r) => r.rule === 'extractor');
    for (const r of reads) expect(userText(r.body)).toContain(`Goal: ${RESEARCH_QUESTION}`);
    return { id: res.body.id as string, status, reads, brief: h.llm.requests[background]!.body };
  }
  const pagesIn = (brief: ChatRequest) => /<pages>([\s\S]*)<\/pages>/.exec(userText(brief))?.[1] ?? '';
  const snippetsIn = (brief: ChatRequest) => /<sources>([\s\S]*)<\/sources>/.exec(userText(brief))?.[1] ?? '';

  it('reads the first hit of each query for the question, and the brief writer sees the pages beside the snippets', async () => {
    const { id, reads, brief } = await run({});
    // All of it in one activity on the model queue: no activity per part, and a summary that says
    // what it does.
    const events = (await h.client.workflow.getHandle(id).fetchHistory()).events!;
    const scheduled = events.flatMap((e) => (e.activityTaskScheduledEventAttributes ? [e] : []));
    const types = scheduled.map((e) => e.activityTaskScheduledEventAttributes!.activityType!.name);
    // The coordinator's classification is made in it first, and it writes the first plan last.
    expect(types.filter((t) => t === 'classifyThenBackground')).toHaveLength(1);
    for (const t of ['classifyRequest', 'researchBackground', 'expandQueries', 'webSearch', 'crawlPage', 'writeBackground', 'planResearch'])
      expect(types).not.toContain(t);
    const phase = scheduled.find((e) => e.activityTaskScheduledEventAttributes!.activityType!.name === 'classifyThenBackground')!;
    expect(phase.activityTaskScheduledEventAttributes!.taskQueue!.name).toBe(`${h.taskQueue}-llm`);
    const summary = phase.userMetadata?.summary?.data;
    expect(summary && JSON.parse(Buffer.from(summary).toString())).toBe('coordinator, then background: 3 queries, 3 pages, then the plan');
    // Three queries, three distinct first hits (the solar page, once per query).
    // Read in parallel: in any order.
    expect(reads.map((r) => /^URL: .*\?q=(.*)$/m.exec(userText(r.body))?.[1]).sort()).toEqual([
      'pv-module-price',
      'solar-cost',
      'solar-lcoe',
    ]);
    expect(reads.every((r) => userText(r.body).includes('/articles/solar-costs.html?q='))).toBe(true);
    const pages = pagesIn(brief);
    expect([...pages.matchAll(/<source id="S[0-9a-f]{8}"/g)]).toHaveLength(3);
    expect(pages).toContain('Solar LCOE fell 89% from 2010 to 2022.');
    // Each source once: a page read is not repeated among the snippets.
    expect(snippetsIn(brief)).not.toMatch(/solar-costs\.html\?q=solar-cost"/);
    expect(snippetsIn(brief)).toContain('battery-storage.html');
    // The extractions are model calls of the run, logged (and counted) before the brief's.
    const calls = await h.pool.query(
      `SELECT count(*)::int AS n FROM llm_calls WHERE research_id = $1 AND prompt_name = 'extractor'
         AND created_at < (SELECT created_at FROM llm_calls WHERE research_id = $1 AND prompt_name = 'background')`,
      [id],
    );
    expect(calls.rows[0].n).toBe(3);
  });

  it('a quick run reads one page', async () => {
    const { reads, brief } = await run({ effort: 'quick' });
    expect(reads).toHaveLength(1);
    expect([...pagesIn(brief).matchAll(/<source id=/g)]).toHaveLength(1);
  });

  it('a page only a browser could read is noted as not read, saying the steps render such pages', async () => {
    const app = `${h.site.url}/apps/wind-report.html`;
    h.search.setFallback((q) =>
      q === 'solar cost' ? [{ url: app, title: 'Wind report', content: 'Wind report.' }] : searchResults(h.site.url)(q),
    );
    try {
      const { status, reads } = await run({});
      expect(reads).toHaveLength(2);
      expect(status.notes.join('\n')).toContain(
        `Background: 1 of 3 pages could not be read (${app}: skipped, it needs a browser, which the background does not use (the research steps do))`,
      );
    } finally {
      h.search.setFallback(searchResults(h.site.url));
    }
  });

  it('a page that cannot be read is noted, and the brief is written from the others and the snippets', async () => {
    const missing = `${h.site.url}/articles/gone.html`;
    h.search.setFallback((q) =>
      q === 'solar cost' ? [{ url: missing, title: 'Gone', content: 'A page that is gone.' }] : searchResults(h.site.url)(q),
    );
    try {
      const { status, reads, brief } = await run({});
      expect(reads).toHaveLength(2);
      expect(status.notes.join('\n')).toMatch(
        /Background: 1 of 3 pages could not be read \(http:\/\/[^ ]+\/articles\/gone\.html: failed, /,
      );
      expect([...pagesIn(brief).matchAll(/<source id=/g)]).toHaveLength(2);
      expect(snippetsIn(brief)).toContain('A page that is gone.');
    } finally {
      h.search.setFallback(searchResults(h.site.url));
    }
  });
});
