// The reporter and the claim check as activities, against a scripted model and a real PostgreSQL:
// what a real small model writes (source ids, a made-up id, a made-up URL, one sentence, no JSON)
// ends as a grounded report numbered 1..n, or as the report code puts together, with a note.
import { Draft } from '../../src/shared/draft';
import type { DraftEventData } from '../../src/shared/events';
import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLlm } from '../../src/activities/llm/call';
import { createLlmClient } from '../../src/activities/llm/client';
import { noteFallback } from '../../src/activities/role-kit/fallbacks';
import { createVerifierActivities } from '../../src/activities/roles/citation-check';
import { createReportOutlineActivities } from '../../src/activities/roles/report-outline';
import { createReportAssembly, createReportSectionActivities } from '../../src/activities/roles/report-section';
import { createReporterActivities } from '../../src/activities/roles/reporter';
import { createStore, type Store } from '../../src/activities/store';
import { ErrorType } from '../../src/shared/errors';
import { reportSummary } from '../../src/shared/summary';
import { createPool } from '../../src/infra/postgres';
import { ApplicationFailure } from '@temporalio/activity';
import { bySchema, ScriptedLlmServer, type ChatRequest, type Reply } from '../support/llm-server';
import { testConfig } from '../support/harness';
import { databaseUrl, missingReason } from '../support/services';

const ready = Boolean(databaseUrl());
const A = 'Sa1b2c3d4';
const B = 'Sb1b2c3d4';
const SOLAR = 'Solar LCOE fell 89% from 2010 to 2022 as module prices collapsed and plants grew larger. ';
const WIND = 'Onshore wind costs fell by about 70% over the same years, with taller turbines. ';

/** A report's key points citing both sources. */
const KEY_POINTS = [
  '## Key points',
  '',
  `- Solar LCOE fell 89% from 2010 to 2022 [${A}].`,
  `- Onshore wind costs fell by about 70% [${B}].`,
];

/** Every claim supported: the verdicts name the ids the request shows. */
const supportAll = (req: ChatRequest): Reply => ({
  json: {
    verdicts: [...String(req.messages.at(-1)?.content ?? '').matchAll(/<claim id="(c\d+)">/g)].map((m) => ({
      id: m[1],
      verdict: 'supported',
      reason: 'The evidence says so.',
    })),
  },
});

describe.skipIf(!ready)(`reporter and claim check activities (${ready ? 'live' : missingReason()})`, () => {
  const server = new ScriptedLlmServer();
  let pool: ReturnType<typeof createPool>;
  let store: Store;
  let reporter: ReturnType<typeof createReporterActivities> &
    ReturnType<typeof createReportOutlineActivities> &
    ReturnType<typeof createReportSectionActivities> &
    ReturnType<typeof createReportAssembly>;
  let verifier: ReturnType<typeof createVerifierActivities>;

  beforeAll(async () => {
    await server.start();
    pool = createPool(databaseUrl()!, 4);
    const config = testConfig(server.url);
    store = createStore(pool);
    const client = createLlmClient(config);
    const llm = createLlm({ config, calls: store.llmCalls, leases: store.llmLeases, client: () => client });
    reporter = {
      ...createReporterActivities({ llm, store }),
      ...createReportOutlineActivities({ llm, store }),
      ...createReportSectionActivities({ llm, store }),
      ...createReportAssembly({ store }),
    };
    verifier = createVerifierActivities({ llm, store });
  });
  afterAll(async () => {
    await pool?.end();
    await server.close();
  });

  const inActivity = <T>(name: string, fn: () => Promise<T>): Promise<T> =>
    new MockActivityEnvironment({ activityId: name, attempt: 1, workflowExecution: { workflowId: 'w', runId: randomUUID() } }).run(
      fn,
    ) as Promise<T>;

  /** A run with a background and one step citing two sources; `repeat` makes the findings long. */
  async function seed(repeat = 1): Promise<string> {
    const id = `research-${randomUUID()}`;
    await store.saveSources(id, [
      { sourceId: A, url: 'https://solar.example/lcoe', title: 'Solar LCOE report', content: SOLAR, provider: 'crawl' },
      { sourceId: B, url: 'https://wind.example/costs', title: 'Wind cost study', content: WIND, provider: 'crawl' },
    ]);
    await store.saveDocument(id, {
      key: 'background',
      kind: 'background',
      content: `${WIND.repeat(repeat)}[${B}]`,
      summary: 'Wind costs.',
      sourceIds: [B],
      meta: {},
    });
    await store.saveDocument(id, {
      key: 'step/a/1',
      kind: 'step',
      content: `## Solar\n\n${SOLAR.repeat(repeat)}[${A}]`,
      summary: 'Solar costs since 2010.',
      sourceIds: [A],
      meta: { stepId: 'a' },
    });
    return id;
  }
  const input = (researchId: string, notes: string[] = []) => ({
    researchId,
    question: 'How far did solar costs fall?',
    locale: 'en-US',
    stepKeys: ['step/a/1'],
    notes,
  });

  it('numbers [S…] ids 1..n, removes a made-up id and URL and counts them, and grounds the notes', async () => {
    const id = await seed();
    await noteFallback(
      store,
      id,
      'planner',
      'plan',
      'the plan has one step per query',
      ApplicationFailure.nonRetryable('x', ErrorType.LlmTooSlow),
    );
    const markdown = [
      '## Key points',
      '',
      `- Solar LCOE fell 89% from 2010 to 2022 [${A}].`,
      `- A rumour says 99% [S0f93beef], see https://fabricated.example/rumour.`,
      '',
      '## Overview',
      '',
      `Module prices collapsed (${A}) and [the study](https://solar.example/lcoe) agrees.`,
    ].join('\n');
    server.script([
      { name: 'reporter', match: bySchema('ReportDraft'), reply: { json: { title: 'Solar costs', markdown } } },
      { name: 'verify', match: bySchema('CitationVerdicts'), reply: supportAll },
    ]);
    const notes = [`Gap reflection 1: wind unclear [Sf7c0beef] (https://fabricated.example/x); solar covered [${A}].`];
    const out = await inActivity('report', () => reporter.writeReport(input(id, notes)));
    expect(out.references).toBe(2);
    const v = await inActivity('verify', () => verifier.verifyCitations(input(id, notes)));
    const report = (await store.getReport(id))!;

    expect(report.markdown).not.toMatch(/S[0-9a-f]{8}|fabricated/);
    expect(report.markdown).toContain('- Solar LCOE fell 89% from 2010 to 2022 [1].');
    expect(report.markdown).toContain('Module prices collapsed [1] and the study [1] agrees.');
    // The only cited source is 1 (it was [2] in the list the model saw); the other is consulted.
    expect(report.markdown).toContain('## References\n\n1. [Solar LCOE report](https://solar.example/lcoe)\n');
    expect(report.markdown).toContain('## Also consulted\n\n- [Wind cost study](https://wind.example/costs)');
    expect(report.references.map((r) => [r.n, r.sourceId, r.cited])).toEqual([
      [1, A, true],
      [2, B, false],
    ]);
    // Notes: the workflow's (grounded), then every fallback of the run, then what code removed.
    const quoted = report.markdown.split('\n').filter((l) => l.startsWith('> ') && l.length > 2);
    expect(quoted[0]).toBe('> Gap reflection 1: wind unclear; solar covered [1].');
    expect(quoted[1]).toMatch(/^> Fallback \(planner\): the plan has one step per query, because the model did not answer/);
    expect(quoted.join('\n')).toContain('Removed the citations of 2 source ids naming no source of this run.');
    expect(report.removedLinks!.map((l) => l.url)).toEqual(['https://fabricated.example/rumour', 'https://fabricated.example/x']);
    // The model wrote no executive summary: code took the cited sentences of its key points and
    // text, noted it, and the claim check checked the summary's citations like the others.
    expect(reportSummary(report.doc)).toBe(
      'Solar LCOE fell 89% from 2010 to 2022 [1]. Module prices collapsed [1] and the study [1] agrees.',
    );
    expect(quoted).toContain(
      "> Correction (reporter): the executive summary was taken from the report's cited key points, because the model wrote none.",
    );
    expect(v.grounding).toMatchObject({ unresolved: 2, linksRemoved: 2, supported: 4, removed: 0 });
    expect(report.grounding).toEqual(v.grounding);
    expect(server.requests.filter((r) => r.rule === 'reporter')).toHaveLength(1);
  });

  it("keeps the model's cited summary on top, and the claim check removes an unsupported citation from it like any other", async () => {
    const id = await seed();
    const markdown = KEY_POINTS.join('\n');
    const summary = `Wind costs fell 99% in a year [${B}]. Solar LCOE fell 89% from 2010 to 2022 [${A}].`;
    const rumourRejected = (req: ChatRequest): Reply => ({
      json: {
        verdicts: [...String(req.messages.at(-1)?.content ?? '').matchAll(/<claim id="(c\d+)">\n([^\n]*)/g)].map((m) => ({
          id: m[1],
          verdict: m[2]!.includes('99%') ? 'unsupported' : 'supported',
          reason: 'The evidence says otherwise.',
        })),
      },
    });
    server.script([
      { name: 'reporter', match: bySchema('ReportDraft'), reply: { json: { title: 'Costs', markdown, summary } } },
      { name: 'verify', match: bySchema('CitationVerdicts'), reply: rumourRejected },
    ]);
    await inActivity('report', () => reporter.writeReport(input(id)));
    expect(reportSummary((await store.getReport(id))!.doc)).toBe(
      'Wind costs fell 99% in a year [1]. Solar LCOE fell 89% from 2010 to 2022 [2].',
    );
    const v = await inActivity('verify', () => verifier.verifyCitations(input(id)));
    const report = (await store.getReport(id))!;
    expect(report.markdown).toMatch(
      /^# Costs\n[\s\S]*\n## Executive summary\n\nWind costs fell 99% in a year\. Solar LCOE fell 89% from 2010 to 2022 \[\d\]\.\n\n## Key points\n/,
    );
    expect(report.markdown).not.toContain('Correction (reporter)');
    expect(report.citationChecks).toEqual([
      expect.objectContaining({ claim: 'Wind costs fell 99% in a year.', verdict: 'unsupported', action: 'removed' }),
    ]);
    expect(v.grounding).toMatchObject({ removed: 1, supported: 3 });
  });

  it("cites a sentence that repeats a finding word for word, and the claim check's verdict on it stands", async () => {
    const id = await seed();
    // The model copies the step's sentence and drops its mark; a second sentence it cites itself.
    const markdown = [...KEY_POINTS, '', 'Solar LCOE fell 89% from 2010 to 2022 as module prices collapsed and plants grew larger.'].join(
      '\n',
    );
    const judgeRepeat =
      (verdict: string) =>
      (req: ChatRequest): Reply => ({
        json: {
          verdicts: [...String(req.messages.at(-1)?.content ?? '').matchAll(/<claim id="(c\d+)">\n([^\n]*)/g)].map((m) => ({
            id: m[1],
            verdict: m[2]!.includes('module prices collapsed') ? verdict : 'supported',
            reason: 'As judged.',
          })),
        },
      });
    for (const verdict of ['supported', 'unsupported']) {
      server.script([
        { name: 'reporter', match: bySchema('ReportDraft'), reply: { json: { title: 'Costs', markdown } } },
        { name: 'verify', match: bySchema('CitationVerdicts'), reply: judgeRepeat(verdict) },
      ]);
      await inActivity('report', () => reporter.writeReport(input(id)));
      await inActivity('verify', () => verifier.verifyCitations(input(id)));
      const report = (await store.getReport(id))!;
      const repeated = /Solar LCOE fell 89% from 2010 to 2022 as module prices collapsed and plants grew larger( \[\d\])?\./.exec(
        report.markdown,
      );
      expect(repeated, report.markdown).not.toBeNull();
      // Judged like any citation: kept when supported; called unsupported, it is flagged (its source
      // states every figure of the sentence, so the check keeps it), and the verdict is recorded.
      expect(repeated![1], verdict).toBeDefined();
      expect((report.citationChecks ?? []).some((c) => c.claim.includes('module prices collapsed') && c.action === 'flagged')).toBe(
        verdict === 'unsupported',
      );
      expect(report.markdown).toContain(
        'Code cited 1 sentence that repeats the words or figures of a finding or of a page the run read to that source.',
      );
    }
  });

  it('keeps, flagged, a citation the model calls unsupported when the source states every figure of the sentence', async () => {
    const id = await seed();
    const markdown = [...KEY_POINTS, `- Solar fell 75% from 2010 to 2022 [${A}].`].join('\n');
    const summary = `Solar LCOE fell 89% from 2010 to 2022 [${A}].`;
    const allRejected = (req: ChatRequest): Reply => ({
      json: {
        verdicts: [...String(req.messages.at(-1)?.content ?? '').matchAll(/<claim id="(c\d+)">/g)].map((m) => ({
          id: m[1],
          verdict: 'unsupported',
          reason: 'Not stated.',
        })),
      },
    });
    server.script([
      { name: 'reporter', match: bySchema('ReportDraft'), reply: { json: { title: 'Costs', markdown, summary } } },
      { name: 'verify', match: bySchema('CitationVerdicts'), reply: allRejected },
    ]);
    await inActivity('report', () => reporter.writeReport(input(id)));
    await inActivity('verify', () => verifier.verifyCitations(input(id)));
    const report = (await store.getReport(id))!;
    // 89%, 2010 and 2022 are in the source: kept and flagged. 75% is not: removed. Wind's "about 70%" is there too.
    expect(report.markdown).toContain('Solar LCOE fell 89% from 2010 to 2022 [1].');
    expect(report.markdown).toContain('- Solar fell 75% from 2010 to 2022.');
    expect(report.citationChecks).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ claim: 'Solar LCOE fell 89% from 2010 to 2022.', verdict: 'partial', action: 'flagged' }),
        expect.objectContaining({ claim: 'Solar fell 75% from 2010 to 2022.', verdict: 'unsupported', action: 'removed' }),
      ]),
    );
  });

  it('asks again once for a one-sentence report, then publishes the report code puts together, with a note', async () => {
    const id = await seed(30);
    server.script([
      { name: 'reporter', match: bySchema('ReportDraft'), reply: { json: { title: 'Solar', markdown: 'Solar got much cheaper.' } } },
      { name: 'verify', match: bySchema('CitationVerdicts'), reply: supportAll },
    ]);
    const out = await inActivity('report', () => reporter.writeReport(input(id)));
    const asked = server.requests.filter((r) => r.rule === 'reporter');
    expect(asked).toHaveLength(2);
    const again = JSON.stringify(asked[1]!.body.messages);
    expect(again).toMatch(/Your previous report was not accepted, because it has 2\d characters of text, too short for findings of \d{4}/);
    expect(JSON.stringify(asked[0]!.body.messages)).not.toContain('not accepted');

    await inActivity('verify', () => verifier.verifyCitations(input(id)));
    const report = (await store.getReport(id))!;
    expect(out.title).toBe('How far did solar costs fall?');
    expect(report.markdown).toMatch(/^# How far did solar costs fall\?\n/);
    expect(report.markdown).toMatch(/> Fallback \(reporter\): the report was put together by code from the findings, because the model/);
    expect(report.markdown).toContain('## Overview\n\nThis report was put together by code from the research findings');
    expect(report.markdown).toMatch(/## Background\n\nOnshore wind costs fell/);
    expect(report.markdown).toMatch(/## Solar costs since 2010\n\n### Solar\n\nSolar LCOE fell 89%/);
    expect(report.markdown).toContain(
      '## References\n\n1. [Wind cost study](https://wind.example/costs)\n2. [Solar LCOE report](https://solar.example/lcoe)\n',
    );
    expect(report.markdown).not.toContain('Solar got much cheaper');
    // The code-written report's summary: the findings' cited sentences (no correction note: code wrote it all).
    expect(reportSummary(report.doc)).toBe(
      'Onshore wind costs fell by about 70% over the same years, with taller turbines. [1] Solar LCOE fell 89% from 2010 to 2022 as module prices collapsed and plants grew larger. [2]',
    );
    expect(report.markdown).not.toContain('Correction (reporter)');
    expect(report.grounding).toMatchObject({ citations: 4, unresolved: 0, supported: 4 });
  });

  it('keeps a report cut off at its output limit up to its last finished paragraph, says so, and asks nothing again', async () => {
    const id = await seed();
    const finished = [...KEY_POINTS, '', '## Why', '', `Module prices collapsed and plants grew larger [${A}].`].join('\n');
    // The summary came first and was finished; the body stopped in a section that had only begun.
    const json = JSON.stringify({ title: 'Cheaper power', summary: `Solar and wind got far cheaper [${A}].`, markdown: finished });
    const cut = `${json.slice(0, -2)}\\n\\n## Outlook\\n\\nCosts will keep fal`;
    server.script([
      { name: 'reporter', match: bySchema('ReportDraft'), reply: { content: cut, finishReason: 'length' } },
      { name: 'verify', match: bySchema('CitationVerdicts'), reply: supportAll },
    ]);
    await inActivity('report', () => reporter.writeReport(input(id)));
    expect(server.requests.filter((r) => r.rule === 'reporter')).toHaveLength(1);
    const report = (await store.getReport(id))!;
    expect(report.markdown).toMatch(/^# Cheaper power\n/);
    expect(reportSummary(report.doc)).toBe('Solar and wind got far cheaper [1].');
    expect(report.markdown).toContain('## Why\n\nModule prices collapsed and plants grew larger [1].');
    expect(report.markdown).not.toMatch(/Outlook|keep fal|cut off at the output limit -->/);
    expect(report.markdown).toContain(
      "> Correction (reporter): the model's answer was cut off at its output limit: the report keeps the paragraphs it finished.",
    );
  });

  it('asks again for a cut-off report that went round in a loop', async () => {
    const id = await seed();
    const loop = Array.from({ length: 6 }, () => `- Solar LCOE fell 89% from 2010 to 2022 as modules got cheaper [${A}].`).join('\n\n');
    const cut = `${JSON.stringify({ title: 'Solar', markdown: loop }).slice(0, -2)}\\n\\n- Solar LC`;
    let asked = 0;
    const markdown = `## Key points\n\n- Solar LCOE fell 89% from 2010 to 2022 [${A}].\n- Wind costs fell about 70% [${B}].`;
    server.script([
      {
        name: 'reporter',
        match: bySchema('ReportDraft'),
        reply: () => (asked++ === 0 ? { content: cut, finishReason: 'length' } : { json: { title: 'Solar and wind', markdown } }),
      },
      { name: 'verify', match: bySchema('CitationVerdicts'), reply: supportAll },
    ]);
    await inActivity('report', () => reporter.writeReport(input(id)));
    const requests = server.requests.filter((r) => r.rule === 'reporter');
    expect(requests).toHaveLength(2);
    expect(JSON.stringify(requests[1]!.body.messages)).toMatch(
      /not accepted, because it repeats itself: the line \\"- Solar LCOE fell 89%/,
    );
    const report = (await store.getReport(id))!;
    expect(report.markdown).toMatch(/^# Solar and wind\n/);
    expect(report.markdown).not.toContain('cut off');
  });

  it('falls back to the code report when the model gives no usable answer, and the claim check to unchecked', async () => {
    const id = await seed();
    server.script([
      { name: 'reporter', match: bySchema('ReportDraft'), reply: { content: 'I cannot write JSON today.' } },
      { name: 'verify', match: bySchema('CitationVerdicts'), reply: { content: 'no verdicts either' } },
    ]);
    await inActivity('report', () => reporter.writeReport(input(id)));
    // The answer and its repair requests, but no report asked for again after the model gave up.
    const asked = server.requests.filter((r) => r.rule === 'reporter');
    expect(asked.length).toBeGreaterThanOrEqual(2);
    expect(asked.some((r) => JSON.stringify(r.body.messages).includes('not accepted'))).toBe(false);
    const v = await inActivity('verify', () => verifier.verifyCitations(input(id)));
    // Two citations of the findings, and the same two again in the summary code built from them
    // (the same sentence and source make one pair to check: the note counts 2).
    expect(v.grounding).toMatchObject({ citations: 4, checked: 0, unchecked: 4 });
    const report = (await store.getReport(id))!;
    expect(report.markdown).toContain('> Fallback (claim-check): 2 citations were left unchecked, because the model gave no usable answer');
    expect(report.markdown).toContain('> Fallback (reporter): the report was put together by code');
    expect(report.markdown).not.toContain('cannot write JSON');
  });

  it("sizes the claim check's batches to the judge's output limit: no batch of verdicts is cut off", async () => {
    const id = await seed();
    // Six cited sentences: six claims to check.
    const markdown = ['## Key points', '', ...[1, 2, 3, 4, 5, 6].map((n) => `- Solar LCOE fell 89% by reckoning ${n} [${A}].`)].join('\n');
    server.script([
      {
        name: 'reporter',
        match: bySchema('ReportDraft'),
        reply: { json: { title: 'Solar', markdown, summary: `Solar fell 89% [${A}].` } },
      },
      { name: 'verify', match: bySchema('CitationVerdicts'), reply: supportAll },
    ]);
    await inActivity('report', () => reporter.writeReport(input(id)));
    // 224 tokens leave room for two verdicts a call (at 96 each, after 32 for the answer's own).
    const config = testConfig(server.url, { LLM_MAX_TOKENS_JUDGE: '224' });
    const client = createLlmClient(config);
    const small = createVerifierActivities({
      llm: createLlm({ config, calls: store.llmCalls, leases: store.llmLeases, client: () => client }),
      store,
    });
    const from = server.requests.length;
    const v = await inActivity('verify', () => small.verifyCitations(input(id)));
    const batches = server.requests.slice(from).filter((r) => r.rule === 'verify');
    const claims = batches.map((r) => [...String(r.body.messages.at(-1)?.content ?? '').matchAll(/<claim id=/g)].length);
    expect(claims.every((n) => n <= 2)).toBe(true);
    expect(claims.reduce((a, b) => a + b, 0)).toBe(v.grounding.checked);
    expect(v.grounding).toMatchObject({ unchecked: 0, removed: 0 });
    expect(v.grounding.checked).toBeGreaterThanOrEqual(6);
  });

  it('keeps the verdicts of a claim check cut off at its limit, and asks only for the claims it left', async () => {
    const id = await seed();
    const markdown = ['## Key points', '', ...[1, 2, 3, 4].map((n) => `- Solar LCOE fell 89% by reckoning ${n} [${A}].`)].join('\n');
    server.script([
      {
        name: 'reporter',
        match: bySchema('ReportDraft'),
        reply: { json: { title: 'Solar', markdown, summary: `Solar fell 89% [${A}].` } },
      },
      {
        name: 'verify',
        match: bySchema('CitationVerdicts'),
        // The first answer stops inside its third verdict; the next ones answer in full.
        reply: (req) => {
          const whole = JSON.stringify((supportAll(req) as { json: unknown }).json);
          if (server.requests.filter((r) => r.rule === 'verify').length > 1) return { content: whole };
          return {
            content: whole.slice(0, whole.indexOf('{"id"', whole.indexOf('{"id"', whole.indexOf('{"id"') + 1) + 1) + 9),
            finishReason: 'length',
          };
        },
      },
    ]);
    await inActivity('report', () => reporter.writeReport(input(id)));
    const from = server.requests.length;
    const v = await inActivity('verify', () => verifier.verifyCitations(input(id)));
    const asked = server.requests.slice(from).filter((r) => r.rule === 'verify');
    const claims = asked.map((r) => [...String(r.body.messages.at(-1)?.content ?? '').matchAll(/<claim id="(c\d+)">/g)].map((m) => m[1]));
    expect(asked).toHaveLength(2);
    // The second request: only what the first did not answer, as a request of its own (no repair of the first).
    expect(claims[1]).toEqual(claims[0]!.slice(2));
    expect(asked[1]!.body.messages).toHaveLength(2);
    expect(v.grounding).toMatchObject({ unchecked: 0, removed: 0, supported: v.grounding.checked });
  });

  it('streams a section of a long report as its draft, under its heading', async () => {
    const id = await seed();
    const markdown = 'Onshore wind costs fell by about 70% [1], and the turbines grew taller [1].';
    server.script([
      { name: 'outline', match: bySchema('ReportOutline'), reply: { content: 'no outline' } },
      { name: 'section', match: bySchema('ReportSection'), reply: { json: { markdown, summary: 'Wind got cheaper [1].' } } },
    ]);
    const long = { ...input(id), stepKeys: [] };
    await inActivity('outline', () => reporter.outlineReport(long));
    await inActivity('section', () => reporter.writeSection({ ...long, section: 0 }));
    expect(server.requests.find((r) => r.rule === 'section')!.body.stream).toBe(true);
    const pieces = (await store.events.after(id, 0, 100)).filter((e) => e.type === 'draft').map((e) => e.data as DraftEventData);
    const draft = new Draft();
    for (const p of pieces) draft.apply(p);
    expect(draft.list()).toEqual([{ part: 'section-1', heading: 'Background', text: markdown, done: true, restarts: 0 }]);
  });

  it('writes a long report from the findings when the outline and a section fail', async () => {
    const id = await seed();
    server.script([
      { name: 'outline', match: bySchema('ReportOutline'), reply: { content: 'no outline' } },
      { name: 'section', match: bySchema('ReportSection'), reply: { content: 'nope' } },
    ]);
    const long = { ...input(id), stepKeys: [] };
    const outline = await inActivity('outline', () => reporter.outlineReport(long));
    expect(outline.headings).toEqual(['Background']);
    await inActivity('section', () => reporter.writeSection({ ...long, section: 0 }));
    const out = await inActivity('assemble', () => reporter.assembleSections({ ...long, sections: 1 }));
    expect(out.references).toBe(1);
    const report = (await store.getReport(id))!;
    expect(report.markdown).toContain(
      '## Background\n\nOnshore wind costs fell by about 70% over the same years, with taller turbines. [1]',
    );
    expect(report.markdown).toContain('> Fallback (reporter): the long report has one section per finding');
    expect(report.markdown).toContain('> Fallback (reporter): section 1 ("Background") gives its findings as the research wrote them');
    expect(report.markdown).toContain('> The run ended without any research step: this report rests on the background search alone.');
  });
});
