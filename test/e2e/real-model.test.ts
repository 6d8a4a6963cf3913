// Research runs against a real model: llama.cpp's llama-server with the pinned small instruct model
// (`npm run local-llm` builds and fetches both; .ci/run provisions them), behind a recording proxy,
// with the SearXNG double over the fixture site. The model is tiny and slow (10-60 s a call on two
// cores), so each run is small (quick effort, one step) and the assertions are about what the
// service guarantees whatever the model writes: the run ends, every request carries an output
// limit, every citation resolves to a page the run retrieved, no raw source id or made-up address
// reaches the report, and the fallbacks taken are written in the notes.
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
import { perRole, startLlmProxy, type LlmProxy } from '../support/llm-proxy';
import { localLlmMissing, startRealLlm, type RealLlm } from '../support/real-llm';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const services = Boolean(temporalAddress() && databaseUrl());
const missing = localLlmMissing();
const ready = services && !missing;
const CI = process.env.CI === 'true';

/** One run may take this long on two cores (each call 10-60 s, about 12-20 calls). Usually 4-6
 *  minutes; CI once took 715 s for the --jinja run, when the model's researcher turns ran long. */
const RUN_BUDGET_MS = 15 * 60_000;

const roleModels = Object.fromEntries(LLM_ROLES.map((r) => [`LLM_MODEL_${r.toUpperCase()}`, `local-${r}`]));

async function researchRun(h: Harness, question: string) {
  const started = Date.now();
  const res = await request(h.app)
    .post('/v1/research')
    .send({ question, options: { effort: 'quick', autoAcceptPlan: true, maxSteps: 1, maxToolRounds: 3, queryCount: 1 } })
    .expect(202);
  const result = await h.client.workflow.getHandle(res.body.id).result();
  const seconds = Math.round((Date.now() - started) / 1000);
  return { id: res.body.id as string, result, seconds };
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
  const references: { n: number; url: string; sourceId: string }[] = json.body.references;
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
  return { markdown, cited: cited.size, references: listed.length };
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
  console.log(
    `\n[real model: ${label}] ${seconds} s\n${table(proxy, fallbacks, calls)}\n${fallbacks.map((f) => `- ${f.note}`).join('\n')}`,
  );
  return fallbacks;
}

interface Stack {
  proxy: LlmProxy;
  h: Harness;
  close(): Promise<void>;
}

/** The model behind a recording proxy, and a worker and API that use it with per-role model names. */
async function startStack(jinja: boolean, timeoutMs: number): Promise<Stack> {
  const llm: RealLlm = await startRealLlm({ jinja, ctx: 4096, parallel: 1 });
  const proxy = await startLlmProxy(llm.baseUrl);
  const h = await startHarness({
    env: {
      OPENAI_BASE_URL: `${proxy.url}/v1`,
      LLM_MODEL: 'local-default',
      ...roleModels,
      LLM_TIMEOUT_MS: String(timeoutMs),
      LLM_PRICES: '',
    },
  });
  return {
    proxy,
    h,
    close: async () => {
      await h.close();
      await proxy.close();
      await llm.stop();
    },
  };
}

describe.skipIf(!ready && !CI)(`a real model (${!services ? missingReason() : (missing ?? 'llama-server')})`, () => {
  it('the local model is there (CI provisions it with .ci/run)', () => {
    expect(missing).toBeUndefined();
  });

  for (const jinja of [true, false]) {
    describe(
      jinja ? 'llama-server with --jinja (native tool calls), 4096 tokens a slot' : 'llama-server without --jinja (JSON actions)',
      () => {
        let stack: Stack | undefined;
        beforeAll(async () => {
          // 90 s a call: the longest calls seen here that end by themselves (a researcher turn, the
          // claim check) take 40-70 s; the reporter of this small model may write until its output
          // limit (4,096 tokens at about 13 a second), and at 150 s a call its two tries took five
          // minutes of the run's budget before code wrote the report (the proxy's lines show it).
          stack = await startStack(jinja, 90_000);
        }, 180_000);
        afterAll(async () => stack?.close());

        it(
          'completes a quick run with a grounded report, every request bounded',
          async () => {
            const { h, proxy } = stack!;
            const { id, result, seconds } = await researchRun(
              h,
              'How much cheaper has solar power become since 2010, and what do battery packs cost?',
            );
            const fallbacks = await report(h, proxy, id, jinja ? 'jinja' : 'no jinja', seconds);
            expect(result.status, JSON.stringify(result)).toBe('completed');
            expect(result.outcome).toBe('report');
            // Every request to the model carried an output limit.
            expect(proxy.requests.length).toBeGreaterThan(3);
            for (const r of proxy.requests) expect(r.maxTokens, `${r.model} request without max_tokens`).toBeGreaterThan(0);
            // No step failed on a context error: the small window was fitted. An overflow the
            // estimate missed (the server counts tool schemas its own way) is answered by trimming
            // harder with the server's count, a few times at most.
            expect(
              result.steps.every((st: { status: string }) => st.status === 'completed'),
              JSON.stringify(result.steps),
            ).toBe(true);
            expect(proxy.requests.filter((r) => r.status === 400).length).toBeLessThanOrEqual(3);
            const { cited, references, markdown } = await expectGroundedReport(h, id);
            console.log(`\n[real model: ${jinja ? 'jinja' : 'no jinja'}] the report:\n${markdown}\n`);
            // The run read pages of the fixture site and the reporter's draft cited what it
            // retrieved. The claim check (asked of the same small model) may remove citations it
            // finds unsupported; the report keeps at least one unless the check removed each of
            // them, every removal recorded with its verdict.
            const grounding = await groundingOf(h, id);
            expect(grounding.citations - grounding.unresolved, JSON.stringify(grounding)).toBeGreaterThan(0);
            if (references === 0 || cited === 0) {
              expect(grounding.removed, JSON.stringify(grounding)).toBeGreaterThan(0);
              expect(grounding.records.filter((r) => r.action === 'removed').length).toBe(grounding.removed);
              console.log(
                `[real model: ${jinja ? 'jinja' : 'no jinja'}] the claim check removed every citation: ${JSON.stringify(grounding)}`,
              );
            } else {
              expect(cited).toBeGreaterThan(0);
            }
            if (!jinja) {
              // Tools were refused once (500 "tools param requires --jinja"), then asked as JSON actions.
              expect(proxy.requests.some((r) => r.status === 500 && r.tools)).toBe(true);
              expect(proxy.requests.filter((r) => r.tools && r.status === 500).length).toBeLessThanOrEqual(2);
            }
            // Every fallback or correction the run took is said in words, in the notes.
            for (const f of fallbacks) expect(f.note).toMatch(/^(Fallback|Correction) \(/);
          },
          RUN_BUDGET_MS,
        );
      },
    );
  }

  describe('user memory with the real model (--jinja)', () => {
    let stack: Stack | undefined;
    beforeAll(async () => {
      stack = await startStack(true, 150_000);
    }, 180_000);
    afterAll(async () => stack?.close());

    it(
      "learns only what the user's own words bear out, in one bounded call",
      async () => {
        const { h, proxy } = stack!;
        const store = createStore(h.pool);
        const client = createLlmClient(h.config);
        const llm = createLlm({ config: h.config, calls: store.llmCalls, leases: store.llmLeases, client: () => client });
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
          }).run(() =>
            createUserMemoryActivities({ llm, store }).learnAboutUser({
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
          expect(proxy.requests.length).toBeGreaterThan(0);
          for (const r of proxy.requests) expect(r.maxTokens).toBeGreaterThan(0);
        } finally {
          await store.memory.purge(owner.tenant);
        }
      },
      4 * 60_000,
    );
  });

  describe('a model too slow for its timeout', () => {
    let stack: Stack | undefined;
    beforeAll(async () => {
      stack = await startStack(true, 1_500);
    }, 180_000);
    afterAll(async () => stack?.close());

    it(
      'ends within minutes with the reason, never waiting out maxOutage',
      async () => {
        const { h, proxy } = stack!;
        const { id, result, seconds } = await researchRun(h, 'How much cheaper has solar power become since 2010?');
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
});
