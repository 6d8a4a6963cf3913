// The background phase in one activity (researchBackground) against PostgreSQL, the scripted
// model, a SearXNG double and the fixture site: an attempt that fails after the rewrite and the
// page extractions were paid for is retried without asking the model for them again; a page only a
// browser could read is not read, and says so; a search refused for good is a search error while
// an outage fails the attempt (to be retried like the search's own activity); with the
// coordinator's classification first (classifyThenBackground), small talk ends it before any search.
import { ApplicationFailure } from '@temporalio/activity';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBackgroundActivities } from '../../src/activities/roles/background';
import { createBackgroundPhase, type BackgroundPhaseInput } from '../../src/activities/phases/background-phase';
import { createCoordinatorActivities } from '../../src/activities/roles/coordinator';
import { createPlannerActivities } from '../../src/activities/roles/planner';
import { bySchema, type Reply, type Rule, type ChatRequest } from '../support/llm-server';
import { planJson, searchResults, sourceIdsIn, userText } from '../support/research-script';
import { databaseUrl, missingReason } from '../support/services';
import { attemptOf, EXTRACT, WebParts } from '../support/web-parts';

const ready = Boolean(databaseUrl());

const QUESTION = 'How far did solar costs fall 2010-2022?';
const EXPANSION = { researchQuestion: QUESTION, queries: ['solar cost', 'solar lcoe', 'pv module price'] };
const brief = (req: ChatRequest): Reply => ({
  json: {
    text: `Costs fell ${sourceIdsIn(req)
      .slice(0, 2)
      .map((id) => `[${id}]`)
      .join('')}.`,
    summary: 'Solar got cheaper.',
  },
});

describe.skipIf(!ready)(`researchBackground activity (${ready ? 'live' : missingReason()})`, () => {
  const w = new WebParts();

  /** A run of its own (the searches read its bans and time range), and the phase's input for it. */
  async function newRun(pages = 3): Promise<BackgroundPhaseInput> {
    const researchId = await w.newRun('bg-phase');
    return { researchId, question: "Solar or wind?\n(Coordinator's reading: Solar cost decline)", locale: 'en-US', count: 3, pages };
  }
  /** Attempt `n` of one activity execution: the same run id and activity id each time. */
  const attempt = attemptOf('background', 30_000);
  const asked = (rule: string) => w.asked(rule);
  const script = (background: Rule['reply'], planner: Rule['reply'] = { json: planJson([{ id: 'a' }, { id: 'b' }]) }) =>
    w.llm.script([
      { name: 'rewrite', match: bySchema('QueryExpansion'), reply: { json: EXPANSION } },
      { name: 'extractor', match: bySchema('PageExtract'), reply: { json: EXTRACT } },
      { name: 'background', match: bySchema('BackgroundBrief'), reply: background },
      { name: 'planner', match: bySchema('Plan'), reply: planner },
    ]);

  beforeAll(() => w.start());
  afterAll(() => w.close());

  it('a retried attempt reuses the rewrite and the page extractions an attempt that failed had paid for', async () => {
    // The brief's first request fails with an outage (retryable), after everything else was asked.
    script((req, n) => (n === 0 ? { status: 500, error: { message: 'the provider is down' } } : brief(req)));
    const input = await newRun();
    await expect(attempt(input, 1, w.groups.llm.researchBackground)).rejects.toThrow();
    expect([asked('rewrite'), asked('extractor'), asked('background')]).toEqual([1, 3, 1]);
    const out = await attempt(input, 2, w.groups.llm.researchBackground);
    // No second request for the rewrite or any page: only the brief is asked again.
    expect([asked('rewrite'), asked('extractor'), asked('background')]).toEqual([1, 3, 2]);
    expect(out.researchQuestion).toBe(QUESTION);
    expect(out.queries).toBe(3);
    expect(out.pages.map((p) => p.status)).toEqual(['ok', 'ok', 'ok']);
    expect(out.searchErrors).toEqual([]);
    expect(out.brief.key).toBe('background');
    // One call-log row per model call, each under its part's key; the usage is all of theirs.
    const { rows } = await w.pool.query<{ call_key: string; prompt_tokens: number }>(
      'SELECT call_key, prompt_tokens FROM llm_calls WHERE research_id = $1',
      [input.researchId],
    );
    expect(
      rows.map((r) => r.call_key.slice(input.researchId.length + '/background/'.length).replace(/page-[0-9a-f]{16}/, 'page')).sort(),
    ).toEqual(['brief', 'page/extract-1', 'page/extract-1', 'page/extract-1', 'rewrite']);
    expect(out.usage.promptTokens).toBe(rows.reduce((sum, r) => sum + r.prompt_tokens, 0));
    // The summary carries no page text.
    expect(JSON.stringify(out)).not.toContain('89%');
  });

  it('writes the first plan from the brief when asked; a retry after the plan failed asks only the plan again', async () => {
    script(brief, (req, n) => {
      if (n === 0) return { status: 503, error: { message: 'overloaded' } };
      // The planner reads the brief this attempt's first try wrote.
      expect(userText(req)).toContain('Costs fell [S');
      return { json: planJson([{ id: 'a' }, { id: 'b' }]) };
    });
    const input = { ...(await newRun(1)), plan: { maxSteps: 3 } };
    await expect(attempt(input, 1, w.groups.llm.researchBackground)).rejects.toThrow(/503|overloaded/);
    expect([asked('rewrite'), asked('extractor'), asked('background'), asked('planner')]).toEqual([1, 1, 1, 1]);
    const out = await attempt(input, 2, w.groups.llm.researchBackground);
    expect([asked('rewrite'), asked('extractor'), asked('background'), asked('planner')]).toEqual([1, 1, 1, 2]);
    expect(out.plan?.problems).toEqual([]);
    expect(out.plan?.plan.steps.map((s) => s.id)).toEqual(['a', 'b']);
    // The plan's usage is its own, not in the phase's.
    const { rows } = await w.pool.query<{ call_key: string; prompt_tokens: number }>(
      'SELECT call_key, prompt_tokens FROM llm_calls WHERE research_id = $1',
      [input.researchId],
    );
    const planRow = rows.find((r) => r.call_key.endsWith('/background/plan'));
    expect(planRow).toBeDefined();
    expect(out.plan?.usage.promptTokens).toBe(planRow!.prompt_tokens);
    expect(out.usage.promptTokens).toBe(rows.filter((r) => r !== planRow).reduce((sum, r) => sum + r.prompt_tokens, 0));
    // Without the ask, no plan.
    const plain = await attempt(await newRun(1), 1, w.groups.llm.researchBackground);
    expect(plain.plan).toBeUndefined();
    expect(asked('planner')).toBe(2);
  });

  it('classifies first: small talk ends the activity with the answer, a research request goes on with the reading; a retry asks neither again', async () => {
    const decision = (action: 'answer_directly' | 'research') => ({
      json: {
        action,
        locale: 'de-DE',
        directAnswer: action === 'answer_directly' ? 'Hallo!' : null,
        researchTopic: action === 'research' ? 'Solar cost decline' : null,
        clarificationQuestion: 'Which country?',
      },
    });
    const withCoordinator = (action: 'answer_directly' | 'research', background: Rule['reply']) => {
      script(background);
      w.llm.add({ name: 'coordinator', match: bySchema('CoordinatorDecision'), reply: decision(action) });
    };
    const input = async () => {
      const { question: _q, locale: _l, ...rest } = await newRun(1);
      return { ...rest, userQuestion: 'Solar oder Wind?', plan: { maxSteps: 3 } };
    };
    withCoordinator('answer_directly', brief);
    const searched = w.search.queries.length;
    const direct = await attempt(await input(), 1, w.groups.llm.classifyThenBackground);
    expect(direct.background).toBeUndefined();
    // No clarifying question may come back: the run cannot ask one.
    expect(direct.decision).toMatchObject({ action: 'answer_directly', directAnswer: 'Hallo!', clarificationQuestion: null });
    expect([asked('coordinator'), asked('rewrite'), asked('extractor'), asked('background')]).toEqual([1, 0, 0, 0]);
    expect(w.search.queries.length).toBe(searched);

    // The brief fails once (an outage): the retry asks the coordinator nothing again.
    withCoordinator('research', (req, n) => (n === 0 ? { status: 500, error: { message: 'the provider is down' } } : brief(req)));
    const research = await input();
    await expect(attempt(research, 1, w.groups.llm.classifyThenBackground)).rejects.toThrow();
    const out = await attempt(research, 2, w.groups.llm.classifyThenBackground);
    expect([asked('coordinator'), asked('rewrite'), asked('background'), asked('planner')]).toEqual([1, 1, 2, 1]);
    expect(out.decision).toMatchObject({ action: 'research', locale: 'de-DE', clarificationQuestion: null });
    // The rewrite read the user's question with the coordinator's reading, in the detected locale.
    const rewrite = w.llm.requests.find((r) => r.rule === 'rewrite')!;
    expect(userText(rewrite.body)).toContain("Solar oder Wind?\n(Coordinator's reading: Solar cost decline)");
    expect(rewrite.body.messages[0]!.content).toMatch(/the report will be in\s+de-DE/);
    expect(out.background?.researchQuestion).toBe(QUESTION);
    expect(out.background?.plan?.plan.steps.map((s) => s.id)).toEqual(['a', 'b']);
    // The classification's usage is apart from the phase's (the workflow adds both).
    expect(out.usage.promptTokens).toBeGreaterThan(0);
  });

  it('does not read a page only a browser could read, and says why', async () => {
    script(brief);
    w.search.setFallback((q) =>
      q === 'solar cost' ? [{ url: `${w.site.url}/apps/wind-report.html`, title: 'Wind', content: 'Wind.' }] : [],
    );
    try {
      const input = await newRun(1);
      const out = await attempt(input, 1, w.groups.llm.researchBackground);
      expect(out.pages).toEqual([
        { url: `${w.site.url}/apps/wind-report.html`, status: 'skipped', needsBrowser: true, reason: expect.stringMatching(/JavaScript/) },
      ]);
    } finally {
      w.search.setFallback(searchResults(w.site.url));
    }
  });

  it('notes a search refused for good, fails the attempt on a search outage, and notes one past the time given to searches', async () => {
    script(brief);
    const deps = { llm: w.model, store: w.store };
    const phase = (webSearch: (i: { query: string }) => Promise<never>) =>
      createBackgroundPhase(
        {
          ...deps,
          web: {
            webSearch,
            crawlPage: () => Promise.reject(new Error('no page is read: no search found one')),
            knowledgeSearch: () => Promise.reject(new Error('no knowledge base in this run')),
          },
        },
        createBackgroundActivities(deps).writeBackground,
        createPlannerActivities({ ...deps, canRunCode: async () => false }).planResearch,
        createCoordinatorActivities(deps).classifyRequest,
      ).researchBackground;
    const refused = phase(async (i) => {
      throw ApplicationFailure.nonRetryable(`every search provider refused "${i.query}"`, 'SearchRejected');
    });
    const out = await attempt(await newRun(), 1, refused);
    expect(out.searchErrors).toHaveLength(3);
    expect(out.searchErrors[0]).toMatch(/refused "solar cost"/);
    expect(out.pages).toEqual([]);
    const down = phase(async (i) => {
      throw new Error(`every search provider failed for "${i.query}": 503`);
    });
    await expect(attempt(await newRun(), 1, down)).rejects.toThrow(/503/);
    // Past the time the workflow gave its searches (its outage limit's last attempts), the same
    // outage is a search error and the brief is written from what answered.
    const late = await attempt({ ...(await newRun()), searchesGiveUpAt: Date.now() - 1 }, 1, down);
    expect(late.searchErrors).toHaveLength(3);
    expect(late.searchErrors[0]).toMatch(/503/);
    expect(late.brief.key).toBe('background');
    // Before it, the attempt still fails.
    await expect(attempt({ ...(await newRun()), searchesGiveUpAt: Date.now() + 60_000 }, 1, down)).rejects.toThrow(/503/);
    // A page read that fails on an outage (crawlPage rejects here) is the same: the attempt fails
    // before the give-up time, and after it the page is a failed one with the reason.
    const found = phase(
      async (i) =>
        ({
          query: i.query,
          results: [{ sourceId: 'S00000001', title: 'Solar', url: `https://solar.example/${encodeURIComponent(i.query)}` }],
          providers: ['searxng'],
        }) as never,
    );
    await expect(attempt({ ...(await newRun(1)), searchesGiveUpAt: Date.now() + 60_000 }, 1, found)).rejects.toThrow(/no page is read/);
    const unread = await attempt({ ...(await newRun(1)), searchesGiveUpAt: Date.now() - 1 }, 1, found);
    expect(unread.pages).toEqual([expect.objectContaining({ status: 'failed', reason: expect.stringMatching(/no page is read/) })]);
  });
});
