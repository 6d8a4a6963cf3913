// A research run and a researcher step against a real model: llama.cpp's llama-server with the
// pinned small instruct model (`npm run local-llm` provisions both; .ci/run does it for CI), behind
// recording proxies, with the SearXNG double over the fixture site. One server serves the whole
// file, started with --jinja and two slots. The run uses the server's native tool calls; the client
// "without --jinja" is given, for its requests with tools, the refusal the server gives when started
// without it (checked word for word against such a server at the end), and runs one researcher step,
// the only part of a run that offers tools. The model is tiny and slow (about 10 tokens a second a
// slot here), so each run is small (quick effort, one step, one topic, test-sized output limits) and
// the assertions are about what the service guarantees whatever the model writes: the run ends,
// every request carries an output limit, every citation resolves to a page the run retrieved, no raw
// source id or made-up address reaches the report, and the fallbacks taken are written in the notes.
import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLlm } from '../../src/activities/llm/call';
import { createLlmClient } from '../../src/activities/llm/client';
import { createUserMemoryActivities, type LearnOutput } from '../../src/activities/roles/user-memory';
import { createStore } from '../../src/activities/store';
import { normalize } from '../../src/shared/memory';
import { LLM_ROLES } from '../../src/shared/constants';
import { startHarness, type Harness } from '../support/harness';
import { NO_JINJA_REFUSAL, perRole, startLlmProxy, type LlmProxy } from '../support/llm-proxy';
import { localLlmMissing, startRealLlm, type RealLlm } from '../support/real-llm';
import { runResearcherStep } from '../support/researcher-step';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const services = Boolean(temporalAddress() && databaseUrl());
const missing = localLlmMissing();
const ready = services && !missing;
const CI = process.env.CI === 'true';

/** One run may take this long: about 12 calls of a few seconds to two minutes each, the step, the
 *  memory call sharing the server at first. Here the run took 5-6 minutes
 *  (before it was one topic, two runs side by side took 6-8 alone and 8-12 with two busy loops
 *  beside the pass: the server is ahead of them, see startRealLlm); the rest is margin. */
const RUN_BUDGET_MS = 20 * 60_000;

/** Output limits for this small, slow model: room for each role's answer (a plan of one step, a
 *  turn of tool calls, a verdict) without letting a model that writes on until its limit hold a
 *  call for minutes. A plan or a verdict cut off is asked again with twice the room, so those are
 *  not much lower. The researcher (its answer, its findings), the reporter and the claim check keep
 *  what a cut-off answer finished (role-kit/cut-answer.ts) instead, so theirs are low: the
 *  reporter's brief report in JSON ran to 604-1,280 tokens (80-120 s) in six runs, and at 640 it is
 *  cut off in most of them, so the run shows that path on the real server. */
const OUTPUT_LIMITS = {
  LLM_MAX_TOKENS_COORDINATOR: '256',
  LLM_MAX_TOKENS_PLANNER: '384',
  LLM_MAX_TOKENS_RESEARCHER: '384',
  LLM_MAX_TOKENS_CODER: '512',
  LLM_MAX_TOKENS_JUDGE: '384',
  LLM_MAX_TOKENS_REPORTER: '640',
};

/** The smallest research that still reads pages and cites them: two hits a query, each tool result
 *  and the step's whole conversation test-sized. A prompt of 3,000 tokens took this model 40-80 s
 *  beside the other run; these keep the researcher's prompts near 1,500. */
const RESEARCH_SIZE = {
  SEARCH_MAX_RESULTS: '2',
  RESEARCHER_TOOL_RESULT_TOKENS: '600',
  RESEARCHER_CONTEXT_TOKENS: '1500',
};
const MAX_LIMIT = Math.max(...Object.values(OUTPUT_LIMITS).map(Number));

const roleModels = Object.fromEntries(LLM_ROLES.map((r) => [`LLM_MODEL_${r.toUpperCase()}`, `local-${r}`]));

async function researchRun(h: Harness, question: string) {
  const started = Date.now();
  const res = await request(h.app)
    .post('/v1/research')
    // One step, one round of tools; the user memory has its own test below.
    .send({ question, options: { effort: 'quick', autoAcceptPlan: true, maxSteps: 1, maxToolRounds: 1, queryCount: 1, memory: false } })
    .expect(202);
  const result = await h.client.workflow.getHandle(res.body.id).result();
  const seconds = Math.round((Date.now() - started) / 1000);
  await streamTimes(h, res.body.id as string, started);
  return { id: res.body.id as string, result, seconds };
}

/**
 * When a reader saw the run's output, from the submit: its first event, the report's first streamed
 * text and its last (the draft events' times in the log, which the events stream sends on as they
 * come). The first two must come soon; the report's pieces must spread over its writing.
 */
async function streamTimes(h: Harness, id: string, submitted: number) {
  const { rows } = await h.pool.query<{ type: string; at: Date; chars: number }>(
    "SELECT type, created_at AS at, coalesce(length(data->>'text'), 0)::int AS chars FROM run_events WHERE research_id = $1 ORDER BY seq",
    [id],
  );
  const after = (d: Date) => ((d.getTime() - submitted) / 1000).toFixed(1);
  const drafts = rows.filter((r) => r.type === 'draft' && r.chars > 0);
  console.log(
    `[real model] ${id}: first event ${after(rows[0]!.at)} s after the submit; report text streamed from ${drafts.length ? after(drafts[0]!.at) : '-'} s ` +
      `to ${drafts.length ? after(drafts.at(-1)!.at) : '-'} s in ${drafts.length} pieces; run ended ${after(rows.at(-1)!.at)} s`,
  );
  return drafts;
}

/** The runs' question: one topic, so the plan, the pages read and the report stay small. */
const QUESTION = 'How much cheaper has solar power become since 2010?';

/** Every request to the model carried an output limit, at most the role's (doubled once for a cut-off answer). */
function expectBounded(proxy: LlmProxy) {
  expect(proxy.requests.length).toBeGreaterThan(2);
  for (const r of proxy.requests) {
    expect(r.maxTokens, `${r.model} request without max_tokens`).toBeGreaterThan(0);
    expect(r.maxTokens!).toBeLessThanOrEqual(2 * MAX_LIMIT);
  }
}

/** Every citation in the report resolves to a retrieved fixture page, and nothing unknown remains. */
/** The claim check's figures and its records of the run's report. */
async function groundingOf(h: Harness, id: string) {
  const { rows } = await h.pool.query('SELECT grounding, citation_checks FROM reports WHERE research_id = $1', [id]);
  expect(rows.length).toBe(1);
  const grounding = rows[0].grounding as { citations: number; unresolved: number; removed: number; flagged: number; supported: number };
  return { ...grounding, records: (rows[0].citation_checks ?? []) as { action: string; verdict: string }[] };
}

async function expectGroundedReport(h: Harness, id: string) {
  const json = await request(h.app).get(`/v1/research/${id}/report?format=json`).expect(200);
  const markdown: string = json.body.markdown;
  const references: { n: number; url: string; sourceId: string; snippet?: boolean }[] = json.body.references;
  // No raw source id survives, and no address the run did not retrieve.
  expect(markdown).not.toMatch(/\bS[0-9a-f]{8}\b|\[\s*S[0-9a-f]{5,16}\s*\]/);
  const retrieved = new Set((await h.pool.query('SELECT url FROM sources WHERE research_id = $1', [id])).rows.map((r) => r.url));
  const siteHost = new URL(h.site.url).host;
  for (const m of markdown.matchAll(/https?:\/\/[^\s)>\]]+/g)) {
    const url = m[0];
    expect(new URL(url).host === siteHost || url.includes(`/v1/research/${id}/`), `unknown address ${url}`).toBe(true);
  }
  // The body's citations are numbers 1..n of the reference list, all of them used, none skipped.
  const body = markdown.split(/\n## References\n/)[0]!;
  const cited = new Set([...body.matchAll(/\[(\d+)\](?!\()/g)].map((m) => Number(m[1])));
  const listed = [...markdown.matchAll(/^(\d+)\. \[/gm)].map((m) => Number(m[1]));
  expect(listed).toEqual(listed.map((_, i) => i + 1));
  for (const n of cited) expect(listed).toContain(n);
  for (const ref of references.filter((r) => listed.includes(r.n))) {
    expect(retrieved.has(ref.url), `reference ${ref.n} ${ref.url} was retrieved`).toBe(true);
    expect(new URL(ref.url).host).toBe(siteHost);
  }
  return { markdown, cited: cited.size, references: listed.length, pagesRead: references.filter((r) => !r.snippet).length };
}

function table(proxy: LlmProxy, fallbacks: { role: string; note: string }[], calls: Map<string, number>): string {
  const rows = [...perRole(proxy.requests)].map(([role, r]) => {
    const own = fallbacks.filter((f) => f.role === role).length;
    const made = calls.get(role) ?? 0;
    return `| ${role} | ${made} | ${r.requests} | ${r.prompt} | ${r.completion} | ${r.seconds.toFixed(0)} | ${Math.max(0, r.requests - made)} | ${r.cutOff} | ${own} |`;
  });
  return [
    '| role | calls | requests | prompt tokens | completion tokens | seconds | repairs/retries | cut off | fallbacks |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

async function report(h: Harness, proxy: LlmProxy, id: string, label: string, seconds: number) {
  const fallbacks = (
    await h.pool.query("SELECT meta->>'role' AS role, content FROM documents WHERE research_id = $1 AND kind = 'fallback'", [id])
  ).rows.map((r) => ({ role: r.role as string, note: r.content as string }));
  const calls = new Map(
    (await h.pool.query('SELECT role, count(*)::int AS n FROM llm_calls WHERE research_id = $1 GROUP BY role', [id])).rows.map((r) => [
      r.role as string,
      r.n as number,
    ]),
  );
  // Each call in order, by prompt: where a run's minutes went.
  const byPrompt = (
    await h.pool.query(
      'SELECT prompt_name, prompt_tokens, completion_tokens, duration_ms FROM llm_calls WHERE research_id = $1 ORDER BY created_at',
      [id],
    )
  ).rows
    .map((r) => `${r.prompt_name} ${r.prompt_tokens}+${r.completion_tokens} ${(r.duration_ms / 1000).toFixed(0)} s`)
    .join(', ');
  console.log(
    `\n[real model: ${label}] ${seconds} s\n${table(proxy, fallbacks, calls)}\ncalls: ${byPrompt}\n${fallbacks.map((f) => `- ${f.note}`).join('\n')}`,
  );
  return fallbacks;
}

interface Stack {
  proxy: LlmProxy;
  h: Harness;
  close(): Promise<void>;
}

/** A worker and API on the one model, behind a recording proxy of their own, with per-role model names. */
async function startStack(llm: RealLlm, o: { timeoutMs: number; withoutJinja?: boolean }): Promise<Stack> {
  const proxy = await startLlmProxy(llm.baseUrl, { withoutJinja: o.withoutJinja });
  const h = await startHarness({
    env: {
      OPENAI_BASE_URL: `${proxy.url}/v1`,
      LLM_MODEL: 'local-default',
      ...roleModels,
      ...OUTPUT_LIMITS,
      ...RESEARCH_SIZE,
      LLM_TIMEOUT_MS: String(o.timeoutMs),
      LLM_PRICES: '',
    },
  });
  return {
    proxy,
    h,
    close: async () => {
      await h.close();
      await proxy.close();
    },
  };
}

describe.skipIf(!ready && !CI)(`a real model (${!services ? missingReason() : (missing ?? 'llama-server')})`, () => {
  it('the local model is there (CI provisions it with .ci/run)', () => {
    expect(missing).toBeUndefined();
  });

  // One server for the whole file, with two slots: the runs below go side by side (a second
  // sequence in a batch costs this small model little more than the first).
  let llm: RealLlm | undefined;
  beforeAll(async () => {
    if (ready) llm = await startRealLlm({ jinja: true, ctx: 8192, parallel: 2 });
  }, 180_000);
  afterAll(async () => llm?.stop());

  // First and on its own: each of its requests is given up after 1.5 s, but the server has started
  // on its prompt by then, and prompt work shares the batch with the other slot's writing. Beside
  // the run (22 such requests in one pass), the run's first calls wrote at 0.6-1.5 tokens a second (warm run W6).
  describe.skipIf(!ready)('a model too slow', () => {
    let slow: Stack | undefined;
    // Gives up on each request after 1.5 s: every call's answer comes too late.
    beforeAll(async () => void (slow = await startStack(llm!, { timeoutMs: 1_500 })), 180_000);
    afterAll(async () => slow?.close());

    it(
      'a model too slow for its timeout: the run ends within minutes with the reason, never waiting out maxOutage',
      async () => {
        const { h, proxy } = slow!;
        const { id, result, seconds } = await researchRun(h, QUESTION);
        const fallbacks = await report(h, proxy, id, 'too slow', seconds);
        expect(seconds).toBeLessThan(8 * 60);
        // Each call is asked at most twice per attempt and then given up: no endless resending.
        expect(['completed', 'failed']).toContain(result.status);
        if (result.status === 'failed') expect(JSON.stringify(result)).toMatch(/too slow|did not answer/);
        else expect(fallbacks.some((f) => /time limit/.test(f.note))).toBe(true);
      },
      10 * 60_000,
    );
  });

  describe.skipIf(!ready)('a run, a step and the user memory, side by side', () => {
    const stacks: Partial<Record<'jinja' | 'plain' | 'memory', Stack>> = {};
    beforeAll(async () => {
      // 180 s a request: the two runs share the server's two cores, and while one slot takes in a
      // long prompt the other writes slowly. At 120 s, a fresh-machine run's reporter ran out twice
      // (its 1,024 tokens, then 512 asked again): 240 s spent, nothing kept, the report written by
      // code. 180 s still leaves room in the LLM activity's 5 minutes for the shorter retry.
      const [jinja, plain, memory] = await Promise.all([
        startStack(llm!, { timeoutMs: 180_000 }),
        startStack(llm!, { timeoutMs: 180_000, withoutJinja: true }),
        startStack(llm!, { timeoutMs: 180_000 }),
      ]);
      Object.assign(stacks, { jinja, plain, memory });
    }, 180_000);
    afterAll(async () => {
      await Promise.all(Object.values(stacks).map((s) => s.close()));
    });

    it.concurrent(
      'completes a quick run with native tool calls (--jinja): a grounded report, every request bounded',
      async () => {
        const { h, proxy } = stacks.jinja!;
        const { id, result, seconds } = await researchRun(h, QUESTION);
        const fallbacks = await report(h, proxy, id, 'jinja', seconds);
        expect(result.status, JSON.stringify(result)).toBe('completed');
        expect(result.outcome).toBe('report');
        expectBounded(proxy);
        // No step failed on a context error: the window was fitted. An overflow the estimate
        // missed (the server counts tool schemas its own way) is answered by trimming harder
        // with the server's count, a few times at most.
        expect(
          result.steps.every((st: { status: string }) => st.status === 'completed'),
          JSON.stringify(result.steps),
        ).toBe(true);
        expect(proxy.requests.filter((r) => r.status === 400).length).toBeLessThanOrEqual(3);
        const { cited, references, markdown, pagesRead } = await expectGroundedReport(h, id);
        console.log(`\n[real model: jinja] the report:\n${markdown}\n`);
        if (pagesRead === 0) {
          // The run read no page (the step's one tool round went to searching, and the background's
          // reads ended without a page: seen once in four runs on a loaded machine). Then there is
          // nothing it may cite (issue 57): the report cites nothing and says why, and lists what the
          // search engine showed as snippets.
          expect(cited).toBe(0);
          expect(markdown).toMatch(/The run has only a search result snippet of \d+ sources?/);
          expect(markdown).toMatch(/\(search result snippet; the page was not read\)/);
          console.log('[real model: jinja] the run read no page: the report cites none and says so');
        } else {
          // The run read pages of the fixture site and the reporter's draft cited what it
          // retrieved. The claim check (asked of the same small model) may remove citations it
          // finds unsupported; the report keeps at least one unless the check removed each of
          // them, every removal recorded with its verdict.
          const grounding = await groundingOf(h, id);
          expect(grounding.citations - grounding.unresolved, JSON.stringify(grounding)).toBeGreaterThan(0);
          if (references === 0 || cited === 0) {
            expect(grounding.removed, JSON.stringify(grounding)).toBeGreaterThan(0);
            expect(grounding.records.filter((r) => r.action === 'removed').length).toBe(grounding.removed);
            console.log(`[real model: jinja] the claim check removed every citation: ${JSON.stringify(grounding)}`);
          } else {
            expect(cited).toBeGreaterThan(0);
          }
        }
        // The server's native tool calls were used.
        expect(proxy.requests.some((r) => r.status === 200 && r.tools)).toBe(true);
        // Every fallback or correction the run took is said in words, in the notes.
        for (const f of fallbacks) expect(f.note).toMatch(/^(Fallback|Correction) \(/);
      },
      RUN_BUDGET_MS,
    );

    // Without --jinja only the researcher's turns differ (no other role offers tools, and the
    // server is the same): one researcher step, run on its own, proves that path end to end.
    it.concurrent(
      'researches a step without --jinja (tools refused, asked as JSON actions): findings cite only what it retrieved, every request bounded',
      async () => {
        const { h, proxy } = stacks.plain!;
        const started = Date.now();
        const { id, out } = await runResearcherStep(
          h,
          {
            question: QUESTION,
            step: {
              id: 'prices',
              title: 'Solar power prices since 2010',
              description: 'Find how much the cost of solar power per kWh fell from 2010 to today.',
              type: 'research',
              needSearch: true,
              dependsOn: [],
            },
            maxToolRounds: 1,
          },
          'real-model-step',
        );
        const fallbacks = await report(h, proxy, id, 'no jinja, one step', Math.round((Date.now() - started) / 1000));
        expectBounded(proxy);
        // Tools were refused once (the server's 500 "tools param requires --jinja"), then asked as JSON actions.
        expect(proxy.requests.some((r) => r.status === 500 && r.tools)).toBe(true);
        expect(proxy.requests.filter((r) => r.tools && r.status === 500).length).toBeLessThanOrEqual(2);
        expect(proxy.requests.some((r) => r.status === 200 && !r.tools && r.model === 'local-researcher')).toBe(true);
        // The model's JSON action ran as a tool call. Which tool, and whether the address it picked
        // exists, is the model's sampling: once it asked for a page of a made-up host, which did
        // not resolve and was said so in the tool's result, and the step found no source to cite.
        const tools = await h.pool.query(`SELECT type FROM run_events WHERE research_id = $1 AND type IN ('search', 'crawl', 'tool')`, [
          id,
        ]);
        expect(tools.rows.length, JSON.stringify(out)).toBeGreaterThan(0);
        // Its findings cite only sources it stored.
        const stored = new Set(
          (await h.pool.query('SELECT source_id FROM sources WHERE research_id = $1', [id])).rows.map((r) => r.source_id as string),
        );
        for (const s of out.sourceIds) expect(stored.has(s), `source ${s} was stored`).toBe(true);
        const doc = await h.pool.query('SELECT content FROM documents WHERE research_id = $1 AND key = $2', [id, out.key]);
        const findings = String(doc.rows[0]?.content ?? '');
        console.log(`\n[real model: no jinja] the step's findings:\n${findings}\n`);
        for (const m of findings.matchAll(/\bS[0-9a-f]{8}\b/g)) expect(stored.has(m[0]), `cited ${m[0]} was retrieved`).toBe(true);
        for (const f of fallbacks) expect(f.note).toMatch(/^(Fallback|Correction) \(/);
      },
      RUN_BUDGET_MS,
    );

    it.concurrent(
      "learns only what the user's own words bear out, in one bounded call",
      async () => {
        const { h, proxy } = stacks.memory!;
        const store = createStore(h.pool);
        const client = createLlmClient(h.config);
        const llmCall = createLlm({ config: h.config, calls: store.llmCalls, leases: store.llmLeases, client: () => client });
        const owner = { tenant: `real-memory-${randomUUID().slice(0, 8)}`, userId: 'teacher' };
        // Not the prompt's own example (a hydrologist), so a model that copies the example learns nothing.
        const question =
          'I teach chemistry at a secondary school and I do not want vendor marketing pages: which battery chemistries are safe for classroom demonstrations?';
        const researchId = `research-${randomUUID()}`;
        const started = Date.now();
        try {
          const out = (await new MockActivityEnvironment({
            activityId: 'learn',
            workflowExecution: { workflowId: researchId, runId: randomUUID() },
            // As the workflow schedules it (the LLM activities' 5 minutes, from now), not the mock's
            // 1 s from 1970: the call's deadline is the attempt's time left, and the server is busy with the runs.
            startToCloseTimeoutMs: 5 * 60_000,
            scheduledTimestampMs: Date.now(),
            currentAttemptScheduledTimestampMs: Date.now(),
          }).run(() =>
            createUserMemoryActivities({ llm: llmCall, store }).learnAboutUser({
              researchId,
              owner,
              words: [{ kind: 'question', text: question, at: new Date().toISOString() }],
            }),
          )) as LearnOutput;
          const facts = await store.memory.list(owner);
          console.log(
            `\n[real model: user memory] ${Math.round((Date.now() - started) / 1000)} s, learned ${out.learned}, rejected ${out.rejected}:\n` +
              facts.map((f) => `- (${f.category}) ${f.text} <- ${f.evidence.map((e) => JSON.stringify(e.quote)).join(', ')}`).join('\n'),
          );
          // Whatever the small model proposes, what is kept is quoted from the question, bounded, and counted.
          expect(facts.length).toBe(out.learned);
          expect(facts.length).toBeLessThanOrEqual(8);
          for (const f of facts) {
            expect(f.text.length).toBeLessThanOrEqual(200);
            expect(f.evidence.length).toBeGreaterThan(0);
            for (const e of f.evidence) expect(normalize(question)).toContain(normalize(e.quote));
          }
          // The model answered (a fallback that learned nothing would prove nothing here).
          expect(proxy.requests.some((r) => r.status === 200)).toBe(true);
          for (const r of proxy.requests) expect(r.maxTokens).toBeGreaterThan(0);
        } finally {
          await store.memory.purge(owner.tenant);
        }
      },
      RUN_BUDGET_MS,
    );
  });

  describe.skipIf(!ready)('the refusal the no-jinja client is given', () => {
    it('is what llama-server itself answers without --jinja, word for word', async () => {
      // A second server, for one request that generates nothing: the proxy's stand-in must stay true to the pinned server.
      const plain = await startRealLlm({ jinja: false, ctx: 1024, parallel: 1 });
      try {
        const res = await fetch(`${plain.baseUrl}/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            model: 'local',
            max_tokens: 8,
            messages: [{ role: 'user', content: 'hi' }],
            tools: [{ type: 'function', function: { name: 'f', description: 'd', parameters: { type: 'object', properties: {} } } }],
          }),
        });
        expect(res.status).toBe(500);
        expect(await res.text()).toBe(NO_JINJA_REFUSAL);
      } finally {
        await plain.stop();
      }
    }, 120_000);
  });
});
