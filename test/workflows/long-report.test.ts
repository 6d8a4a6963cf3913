// Effort and shape: a deep run's long report written section by section (an outline, then each
// section from its own findings, then put together by code with one reference list); a quick run's
// brief report; the report's language following the question unless the locale is given.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResearchResult } from '../../src/shared/schemas';
import type { ChatRequest, Reply } from '../support/llm-server';
import { defaultSection, findingKeysIn, planJson, researchRules, userText } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';
import { recordHistories } from '../support/record-history';

const ready = Boolean(temporalAddress() && databaseUrl());
const SIX = ['a', 'b', 'c', 'd', 'e', 'f'].map((id) => ({ id }));
const ASKS_SUMMARY = /also write the whole report's executive summary in `summary`/;
/** The scripted section, with the report's executive summary when its prompt asks for one. */
const sectionWithSummary = (req: ChatRequest): Reply => {
  const reply = defaultSection(req) as { json: { markdown: string } };
  if (!ASKS_SUMMARY.test(userText(req))) return reply;
  return { json: { ...reply.json, summary: 'The long report in brief: costs fell [1]. Each part gives its figures.' } };
};

describe.skipIf(!ready)(`report length and effort (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.close());

  async function run(body: Record<string, unknown>) {
    const res = await request(h.app).post('/v1/research').send(body).expect(202);
    const result = (await h.client.workflow.getHandle(res.body.id).result()) as ResearchResult;
    expect(result.outcome).toBe('report');
    const report = (await request(h.app).get(`/v1/research/${res.body.id}/report?format=json`).expect(200)).body;
    return { id: res.body.id as string, result, report };
  }

  it('writes a long report section by section from a plan with six steps', async () => {
    h.llm.script(researchRules({ section: sectionWithSummary }, planJson(SIX)));
    const { id, report } = await run({ question: 'How far did solar costs fall?', options: { effort: 'deep', autoAcceptPlan: true } });

    // Effort deep: five search queries asked for, up to eight steps.
    expect(h.llm.requests.find((r) => r.rule === 'rewrite')!.body.messages[0]!.content).toMatch(/exactly 5 web search queries/);
    expect(h.llm.requests.find((r) => r.rule === 'planner')!.body.messages[0]!.content).toMatch(/At most 8 steps/);

    // One outline over all seven findings, then one call per section with only its findings.
    expect(h.llm.requests.filter((r) => r.rule === 'reporter')).toHaveLength(0);
    const outline = h.llm.requests.filter((r) => r.rule === 'outline');
    expect(outline).toHaveLength(1);
    const stepKeys = findingKeysIn(outline[0]!.body).filter((k) => k !== 'background');
    expect(stepKeys).toHaveLength(6);
    const sections = h.llm.requests.filter((r) => r.rule === 'section');
    expect(sections).toHaveLength(5);
    const seen = sections.map((s) => findingKeysIn(s.body));
    expect(seen).toEqual(
      expect.arrayContaining([
        ['background'],
        stepKeys.slice(0, 2),
        stepKeys.slice(2, 4),
        stepKeys.slice(4, 6),
        ['background', ...stepKeys],
      ]),
    );
    // Every section knows the whole outline, so it does not repeat the others.
    for (const s of sections) expect(userText(s.body)).toMatch(/1\. Key points[\s\S]*5\. Conclusions/);

    // Put together in outline order, with one reference list whose numbers all sections share.
    const headings = [...report.markdown.matchAll(/^## (.+)$/gm)].map((m: RegExpMatchArray) => m[1]);
    expect(headings.slice(0, 6)).toEqual(['Executive summary', 'Key points', 'Part 1', 'Part 2', 'Part 3', 'Conclusions']);
    // Only the first section is asked for the report's executive summary, and the report opens with it.
    const asked = sections.filter((s) => ASKS_SUMMARY.test(userText(s.body)));
    expect(asked.map((s) => /Your section: \*\*(.*?)\*\*/.exec(userText(s.body))?.[1])).toEqual(['Key points']);
    // Every section is asked with the same system prompt: a provider's prefix cache reuses it.
    expect(new Set(sections.map((s) => s.body.messages[0]!.content)).size).toBe(1);
    expect(report.summary).toMatch(/^The long report in brief: costs fell \[\d+\]\. Each part gives its figures\.$/);
    expect(report.markdown).not.toContain('Correction (reporter)');
    expect(headings).toContain('References');
    const part2 = report.markdown.split('## Part 2')[1]!.split('## Part 3')[0]!;
    expect(part2).toContain(`draws on ${stepKeys.slice(2, 4).join(', ')}`);
    const cited = [...part2.matchAll(/\[(\d+)\]/g)].map((m) => Number(m[1]));
    expect(cited.length).toBeGreaterThan(0);
    for (const n of cited) expect(report.references.map((r: { n: number }) => r.n)).toContain(n);
    expect(report.title).toBe('A long report');
    expect(report.grounding.checked).toBeGreaterThan(0);
    recordHistories([[id, 'long-report.json']]);
  });

  it('writes a brief report on quick effort; what the request sets wins over the preset', async () => {
    h.llm.script(researchRules({}, planJson([{ id: 'a' }])));
    await run({ question: 'How far did solar costs fall?', options: { effort: 'quick', queryCount: 4, autoAcceptPlan: true } });
    expect(h.llm.requests.find((r) => r.rule === 'rewrite')!.body.messages[0]!.content).toMatch(/exactly 4 web search queries/);
    expect(h.llm.requests.find((r) => r.rule === 'planner')!.body.messages[0]!.content).toMatch(/At most 2 steps/);
    expect(h.llm.requests.find((r) => r.rule === 'reporter')!.body.messages[0]!.content).toMatch(/Length: brief/);
    expect(h.llm.requests.filter((r) => r.rule === 'gaps')).toHaveLength(0);
  });

  it('writes in the language of the question, unless a locale is given', async () => {
    const german = {
      json: { action: 'research', locale: 'de-DE', directAnswer: null, researchTopic: 'Solarkosten', clarificationQuestion: null },
    };
    h.llm.script(researchRules({ coordinator: german }, planJson([{ id: 'a' }])));
    await run({ question: 'Wie stark sind die Kosten für Solarstrom gefallen?', options: { autoAcceptPlan: true } });
    expect(h.llm.requests.find((r) => r.rule === 'reporter')!.body.messages[0]!.content).toMatch(
      /final research report, in German \(Germany\)/,
    );

    h.llm.script(researchRules({ coordinator: german }, planJson([{ id: 'a' }])));
    const fr = await run({
      question: 'Wie stark sind die Kosten für Solarstrom gefallen?',
      options: { autoAcceptPlan: true, locale: 'fr-FR' },
    });
    expect(h.llm.requests.find((r) => r.rule === 'reporter')!.body.messages[0]!.content).toMatch(/in French \(France\)/);
    expect(fr.report.locale).toBe('fr-FR');
  });

  it('refuses an unknown effort or length with the reason', async () => {
    const bad = await request(h.app)
      .post('/v1/research')
      .send({ question: 'x', options: { effort: 'maximal' } })
      .expect(400);
    expect(JSON.stringify(bad.body)).toMatch(/effort/);
    await request(h.app)
      .post('/v1/research')
      .send({ question: 'x', options: { reportLength: 'epic' } })
      .expect(400);
  });
});

describe.skipIf(!ready)(`a report whose findings do not fit the model (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  beforeAll(async () => {
    // A window this small holds a one-call prompt but not six steps' findings beside it.
    h = await startHarness({ env: { LLM_CONTEXT_TOKENS: '512' } });
  });
  afterAll(async () => h?.close());

  it('is written section by section, and the notes say why', async () => {
    h.llm.script(researchRules({}, planJson(SIX)));
    const res = await request(h.app)
      .post('/v1/research')
      .send({ question: 'How far did solar costs fall?', options: { autoAcceptPlan: true, maxSteps: 6 } })
      .expect(202);
    const result = (await h.client.workflow.getHandle(res.body.id).result()) as ResearchResult;
    expect(result.status).toBe('completed');
    expect(h.llm.requests.filter((r) => r.rule === 'reporter')).toHaveLength(0);
    expect(h.llm.requests.filter((r) => r.rule === 'outline')).toHaveLength(1);
    expect(h.llm.requests.filter((r) => r.rule === 'section').length).toBeGreaterThan(0);
    // Every request left the output room within the window.
    for (const r of h.llm.requests) expect(r.body.max_tokens as number).toBeLessThanOrEqual(512);
    const report = (await request(h.app).get(`/v1/research/${res.body.id}/report`).expect(200)).text;
    expect(report).toContain('written section by section');
  });
});
