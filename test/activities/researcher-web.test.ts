// A researcher turn that runs its own web_search and crawl calls,
// against PostgreSQL, the scripted model, a SearXNG double and the fixture site: an attempt that
// fails after the model answered and the page was extracted is retried with no second request for
// either, and no second copy of the reply; a search refused for good is an error entry, an outage
// fails the attempt until the time the workflow gave the tools, then is an error entry (a page read
// the same, as a failed page); a page only a browser could read comes back for the workflow to render.
import { ApplicationFailure } from '@temporalio/activity';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BackgroundWeb } from '../../src/activities/role-kit/role';
import { createResearcherActivities, type TurnInput } from '../../src/activities/phases/researcher-turn';
import { researcherBudgets } from '../../src/activities/role-kit/tool-budget';
import { bySchema, type ChatRequest, type Reply, type Rule } from '../support/llm-server';
import { SOLAR_STEP } from '../support/research-script';
import { databaseUrl, missingReason } from '../support/services';
import { attemptOf, EXTRACT, WebParts } from '../support/web-parts';

const ready = Boolean(databaseUrl());

describe.skipIf(!ready)(`researcherTurn with its web tools (${ready ? 'live' : missingReason()})`, () => {
  const w = new WebParts();

  /** A run of its own, and its step's first turn, which may run its web tools (null: it may not). */
  async function newTurn(webTools: TurnInput['webTools'] | null = {}): Promise<TurnInput> {
    const researchId = await w.newRun('turn-web');
    return {
      researchId,
      convKey: 'costs/1',
      seq: 0,
      question: 'How much cheaper has solar become?',
      locale: 'en-US',
      step: SOLAR_STEP,
      feedback: '',
      dependencyKeys: [],
      mustAnswer: false,
      ...(webTools ? { webTools } : {}),
    };
  }
  /** Attempt `n` of one activity execution: the same run id and activity id each time. */
  const attempt = attemptOf('turn', 15_000);
  const asked = (rule: string) => w.asked(rule);
  /** The turn asks for one search and one page; the page is read for the goal. */
  const script = (react: Rule['reply']) =>
    w.llm.script([
      { name: 'react', match: (r) => r.response_format === undefined, reply: react },
      { name: 'extractor', match: bySchema('PageExtract'), reply: { json: EXTRACT } },
    ]);
  const solarPage = () => `${w.site.url}/articles/solar-costs.html`;
  const bothTools = (): Reply => ({
    toolCalls: [
      { name: 'web_search', arguments: { queries: ['solar cost'] } },
      { name: 'crawl', arguments: { urls: [solarPage()], goal: 'solar cost decline' } },
    ],
  });
  /** The researcher's turn on a worker whose searches and page reads are `web`. */
  const turnWith = (web: BackgroundWeb) =>
    createResearcherActivities({ llm: w.model, store: w.store, budgets: researcherBudgets(), web }).researcherTurn;

  beforeAll(() => w.start());
  afterAll(() => w.close());

  it('a retried attempt reuses the reply and the page extraction an attempt that failed had paid for', async () => {
    script(bothTools());
    // The search provider is down on the first attempt (retryable), after the reply and the page's
    // extraction were paid for: the attempt fails once the page read has ended.
    let down = true;
    const turn = turnWith({
      webSearch: async (i) => {
        if (down) throw ApplicationFailure.retryable(`every search provider failed for "${i.query}": 503`, 'SearchUnavailable');
        return w.groups.web.webSearch(i);
      },
      crawlPage: w.groups.crawl.crawlPage,
      knowledgeSearch: () => Promise.reject(new Error('no knowledge base in this run')),
    });
    const input = await newTurn({ giveUpAt: Date.now() + 60_000 });
    await expect(attempt(input, 1, turn)).rejects.toThrow(/503/);
    expect([asked('react'), asked('extractor')]).toEqual([1, 1]);
    down = false;
    const out = await attempt(input, 2, turn);
    // No second request for the reply or the page.
    expect([asked('react'), asked('extractor')]).toEqual([1, 1]);
    expect(out.nextSeq).toBe(3);
    expect(out.calls.map((c) => c.name)).toEqual(['web_search', 'crawl']);
    const web = out.web!;
    expect(web.results.map((r) => [r.seq, r.toolCallId])).toEqual([
      [3, out.calls[0]!.id],
      [4, out.calls[1]!.id],
    ]);
    const [found, read] = web.results;
    expect(found!.search).toHaveLength(1);
    expect(found!.search![0]!.query).toBe('solar cost');
    expect(found!.search![0]!.sourceIds.length).toBeGreaterThan(0);
    expect(found!.search![0]!.error).toBeUndefined();
    expect(read!.crawl).toEqual([expect.objectContaining({ url: solarPage(), status: 'ok', sourceId: expect.stringMatching(/^S/) })]);
    expect(web.searchErrors).toEqual([]);
    // The reply is stored once, at its position; the tools' results are the next turn's to write.
    const conversation = await w.store.conversations.load(input.researchId, input.convKey);
    expect(conversation.map((r) => [r.seq, r.message.role])).toEqual([
      [0, 'system'],
      [1, 'user'],
      [2, 'assistant'],
    ]);
    // One call-log row per model call, the page's under its call's part; the usage is theirs.
    const { rows } = await w.pool.query<{ call_key: string; prompt_tokens: number }>(
      'SELECT call_key, prompt_tokens FROM llm_calls WHERE research_id = $1',
      [input.researchId],
    );
    const byKey = new Map(rows.map((r) => [r.call_key.slice(input.researchId.length + 1).replace(/page-[0-9a-f]{16}/, 'page'), r]));
    expect([...byKey.keys()].sort()).toEqual(['turn', 'turn/tool-4/page/extract-1']);
    expect(out.usage.promptTokens).toBe(byKey.get('turn')!.prompt_tokens);
    expect(web.usage.promptTokens).toBe(byKey.get('turn/tool-4/page/extract-1')!.prompt_tokens);
    // The result carries ids and reasons, not the page's evidence.
    expect(JSON.stringify(out)).not.toContain('89%');
  });

  it("reads the run's search settings once for a round's searches and page reads; a ban added after it reaches the next round", async () => {
    const settingsReads: string[] = [];
    const query = w.pool.query.bind(w.pool) as (...args: unknown[]) => Promise<unknown>;
    (w.pool as unknown as { query: (...args: unknown[]) => Promise<unknown> }).query = (...args: unknown[]) => {
      const sql = args[0];
      if (typeof sql === 'string' && sql.includes('FROM run_banned_domains') && sql.includes('search_preferences')) {
        settingsReads.push(String((args[1] as unknown[])[0]));
      }
      return query(...args);
    };
    try {
      script({
        toolCalls: [
          { name: 'web_search', arguments: { queries: ['solar cost', 'pv price'] } },
          { name: 'crawl', arguments: { urls: [solarPage()], goal: 'solar cost decline' } },
        ],
      });
      const input = await newTurn();
      const out = await attempt(input, 1, w.groups.llm.researcherTurn);
      expect(out.web!.results[0]!.search!.map((s) => s.sourceIds.length > 0)).toEqual([true, true]);
      expect(out.web!.results[1]!.crawl).toEqual([expect.objectContaining({ status: 'ok' })]);
      // Two searches and a page read: one read of the settings (before: one each).
      expect(settingsReads).toEqual([input.researchId]);

      // The user bans the site's domain: the next round's page read sees it.
      await w.store.bans.add(input.researchId, [new URL(w.site.url).hostname]);
      script({ toolCalls: [{ name: 'crawl', arguments: { urls: [solarPage()], goal: 'solar cost decline' } }] });
      const next = await attempt({ ...input, convKey: 'costs/2' }, 1, w.groups.llm.researcherTurn);
      expect(next.web!.results[0]!.crawl).toEqual([
        expect.objectContaining({ status: 'blocked', reason: expect.stringMatching(/banned/) }),
      ]);
      expect(settingsReads).toEqual([input.researchId, input.researchId]);
    } finally {
      (w.pool as unknown as { query: unknown }).query = query;
    }
  });

  it('runs no tool when the workflow did not ask it to (runs started before the patch)', async () => {
    script(bothTools());
    const input = await newTurn(null);
    const out = await attempt(input, 1, w.groups.llm.researcherTurn);
    expect(out.calls).toHaveLength(2);
    expect(out.web).toBeUndefined();
    expect(asked('extractor')).toBe(0);
  });

  it('returns a page only a browser could read as needing one, for the workflow to render', async () => {
    const app = `${w.site.url}/apps/wind-report.html`;
    script({ toolCalls: [{ name: 'crawl', arguments: { urls: [app], goal: 'offshore wind capacity' } }] });
    const out = await attempt(await newTurn(), 1, w.groups.llm.researcherTurn);
    expect(out.web!.results[0]!.crawl).toEqual([
      expect.objectContaining({ url: app, needsBrowser: true, reason: expect.stringMatching(/JavaScript/) }),
    ]);
    expect(asked('extractor')).toBe(0);
  });

  it('a search refused for good is an error entry; an outage fails the attempt, and past the time given is an error entry', async () => {
    script({ toolCalls: [{ name: 'web_search', arguments: { queries: ['solar cost', 'pv price'] } }] });
    const web = (webSearch: BackgroundWeb['webSearch']): BackgroundWeb => ({
      webSearch,
      crawlPage: () => Promise.reject(new Error('no page is read here')),
      knowledgeSearch: () => Promise.reject(new Error('no knowledge base in this run')),
    });
    const refused = turnWith(
      web(async (i) => {
        throw ApplicationFailure.nonRetryable(`every search provider refused "${i.query}"`, 'SearchRejected');
      }),
    );
    const out = await attempt(await newTurn(), 1, refused);
    expect(out.web!.results[0]!.search).toEqual([
      { query: 'solar cost', sourceIds: [], error: expect.stringMatching(/refused "solar cost"/) },
      { query: 'pv price', sourceIds: [], error: expect.stringMatching(/refused "pv price"/) },
    ]);
    expect(out.web!.searchErrors).toHaveLength(2);
    const down = turnWith(
      web(async (i) => {
        throw ApplicationFailure.retryable(`every search provider failed for "${i.query}": 503`, 'SearchUnavailable');
      }),
    );
    // Before the time the workflow gave the tools (or with none given), the attempt fails.
    await expect(attempt(await newTurn(), 1, down)).rejects.toThrow(/503/);
    await expect(attempt(await newTurn({ giveUpAt: Date.now() + 60_000 }), 1, down)).rejects.toThrow(/503/);
    // Past it, the outage is the query's error, and the step goes on.
    const late = await attempt(await newTurn({ giveUpAt: Date.now() - 1 }), 1, down);
    expect(late.web!.results[0]!.search!.map((s) => s.error)).toEqual([expect.stringMatching(/503/), expect.stringMatching(/503/)]);
  });

  it('a page read that fails transiently fails the attempt, and past the time given is a failed page saying why', async () => {
    script({ toolCalls: [{ name: 'crawl', arguments: { urls: [solarPage()], goal: 'solar cost decline' } }] });
    const stuck = turnWith({
      webSearch: () => Promise.reject(new Error('no search here')),
      crawlPage: () => Promise.reject(new Error('the database is away')),
      knowledgeSearch: () => Promise.reject(new Error('no knowledge base in this run')),
    });
    await expect(attempt(await newTurn({ giveUpAt: Date.now() + 60_000 }), 1, stuck)).rejects.toThrow(/database is away/);
    const late = await attempt(await newTurn({ giveUpAt: Date.now() - 1 }), 1, stuck);
    expect(late.web!.results[0]!.crawl).toEqual([
      { url: solarPage(), status: 'failed', reason: expect.stringMatching(/database is away/) },
    ]);
  });

  describe('going on with the next rounds itself (goOn)', () => {
    const web = (): BackgroundWeb => ({
      webSearch: w.groups.web.webSearch,
      crawlPage: w.groups.crawl.crawlPage,
      knowledgeSearch: () => Promise.reject(new Error('no knowledge base in this run')),
    });
    /** Round 0 searches, round 1 reads the page, round 2 answers (or `last` replies). */
    const rounds =
      (last: (n: number) => Reply = () => ({ content: 'Solar got much cheaper.' })) =>
      (req: ChatRequest, n: number): Reply => {
        const tools = req.messages.filter((m) => m.role === 'tool').length;
        if (tools === 0) return { toolCalls: [{ name: 'web_search', arguments: { queries: ['solar cost'] } }] };
        if (tools === 1) return { toolCalls: [{ name: 'crawl', arguments: { urls: [solarPage()], goal: 'solar cost decline' } }] };
        return last(n);
      };
    const goOn = (over: Partial<NonNullable<TurnInput['goOn']>> = {}): NonNullable<TurnInput['goOn']> => ({
      round: 0,
      maxRounds: 8,
      spent: { promptTokens: 0, completionTokens: 0, costUsd: 0 },
      forMs: 60_000,
      ...over,
    });

    it('asks every web-only round in one activity; a retry after the last round failed asks only that one again', async () => {
      script((req, n) =>
        rounds((k) => (k === 2 ? { status: 503, error: { message: 'overloaded' } } : { content: 'Solar got much cheaper.' }))(req, n),
      );
      const turn = turnWith(web());
      const input = { ...(await newTurn({ giveUpAt: Date.now() + 60_000 })), goOn: goOn() };
      await expect(attempt(input, 1, turn)).rejects.toThrow(/503|overloaded/);
      expect([asked('react'), asked('extractor')]).toEqual([3, 1]);
      const out = await attempt(input, 2, turn);
      // Rounds 0 and 1 came from the stored replies and the call log: only round 2 was asked again.
      expect([asked('react'), asked('extractor')]).toEqual([4, 1]);
      expect(out.calls).toEqual([]);
      expect(out.earlier?.rounds).toBe(2);
      // The replies sit at the positions the workflow would have given them: task 0-1, then a reply
      // and its tool result per round, then the answer.
      expect(out.nextSeq).toBe(7);
      const { rows } = await w.pool.query<{ seq: number; role: string }>(
        "SELECT seq, message->>'role' AS role FROM conversation_messages WHERE research_id = $1 AND conv_key = $2 ORDER BY seq",
        [input.researchId, input.convKey],
      );
      expect(rows.map((r) => r.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
      // The usage counts every round's reply and the page's extraction once.
      const paid = await w.pool.query<{ p: string }>('SELECT sum(prompt_tokens) AS p FROM llm_calls WHERE research_id = $1', [
        input.researchId,
      ]);
      expect(out.usage.promptTokens + out.earlier!.usage.promptTokens).toBe(Number(paid.rows[0]!.p));
    });

    it('leaves the next round to the workflow when the user asked to wrap up, the budget is spent, or the next round must answer', async () => {
      script(rounds());
      const turn = turnWith(web());
      // A wrap-up recorded for the run (the steer event recordSteering writes).
      const wrapped = await newTurn({});
      await w.store.events.append(wrapped.researchId, [{ key: 'steer:1', type: 'steer', data: { kind: 'wrapUp', summary: 'wrap up' } }]);
      const a = await attempt({ ...wrapped, goOn: goOn() }, 1, turn);
      expect([a.calls.map((c) => c.name), a.earlier]).toEqual([['web_search'], undefined]);
      expect(a.web!.results).toHaveLength(1);
      // The step's budget spent by what it had spent before the turn.
      const b = await attempt(
        { ...(await newTurn({})), goOn: goOn({ budget: { tokens: 10 }, spent: { promptTokens: 10, completionTokens: 0, costUsd: 0 } }) },
        1,
        turn,
      );
      expect([b.calls.map((c) => c.name), b.earlier]).toEqual([['web_search'], undefined]);
      // maxRounds 2: round 1 is asked here, round 2 must answer and is the workflow's.
      const c = await attempt({ ...(await newTurn({})), goOn: goOn({ maxRounds: 2 }) }, 1, turn);
      expect([c.calls.map((x) => x.name), c.earlier?.rounds]).toEqual([['crawl'], 1]);
      // Its time is up.
      const d = await attempt({ ...(await newTurn({})), goOn: goOn({ forMs: 0 }) }, 1, turn);
      expect(d.earlier).toBeUndefined();
    });
  });
});
