// Grounding by code, end to end: a reporter that plants a made-up URL, a made-up link, a made-up
// reference number and a citation its source does not support. None survives in the stored report;
// each is recorded (removedLinks, removedCitations, citationChecks) and counted in `grounding`.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatRequest, Reply } from '../support/llm-server';
import { claimsIn, researchRules } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { runToReport } from '../support/run-to-report';
import { recordHistories } from '../support/record-history';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const ready = Boolean(temporalAddress() && databaseUrl());

const DRAFT = [
  '## Key points',
  '',
  '- Solar LCOE fell 89% from 2010 to 2022 [1].',
  '- Offshore wind turbines now last 80 years without repairs [1].',
  '- Battery prices fell 50% in 2023 [7].',
  '',
  'A [government study](https://made-up.example.org/study) agrees; see https://invented.example.net/data for the tables.',
].join('\n');

/** A checker that reads like a strict reviewer: every figure of the claim must be in the evidence,
 *  and most of its words; otherwise the citation is unsupported. */
const strictChecker = (req: ChatRequest): Reply => {
  const words = (s: string) => s.toLowerCase().match(/[a-z]{4,}|\d+%?/g) ?? [];
  return {
    json: {
      verdicts: claimsIn(req).map(({ id, claim, evidence }) => {
        const said = new Set(words(evidence));
        const figures = words(claim).filter((w) => /\d/.test(w));
        const share = words(claim).filter((w) => said.has(w)).length / Math.max(1, words(claim).length);
        const ok = figures.every((f) => said.has(f)) && share >= 0.5;
        return {
          id,
          verdict: ok ? 'supported' : 'unsupported',
          reason: ok ? 'Figures and words match.' : 'The evidence is about solar costs only.',
        };
      }),
    },
  };
};

describe.skipIf(!ready)(`grounding by code (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.close());

  it('removes made-up links, URLs, ids and unsupported citations, and records each', async () => {
    h.llm.script(researchRules({ reporter: { json: { title: 'Energy costs', markdown: DRAFT } }, verify: strictChecker }));
    const res = await runToReport(h);
    const report = (await request(h.app).get(`/v1/research/${res.body.id}/report?format=json`).expect(200)).body;

    // What survives: the supported claim keeps its citation; nothing made up is left.
    expect(report.markdown).toContain('Solar LCOE fell 89% from 2010 to 2022 [1].');
    expect(report.markdown).toMatch(/Offshore wind turbines now last 80 years without repairs\./);
    expect(report.markdown).not.toMatch(/80 years without repairs\s*\[\d+\]/);
    expect(report.markdown).not.toMatch(/\[7\]/);
    expect(report.markdown).not.toMatch(/made-up\.example\.org|invented\.example\.net/);
    expect(report.markdown).toContain('government study agrees');

    // What is recorded, with reasons.
    expect(report.removedCitations).toEqual([7]);
    expect(report.removedLinks).toEqual([
      { url: 'https://made-up.example.org/study', reason: 'link to an address the run did not retrieve' },
      { url: 'https://invented.example.net/data', reason: 'bare URL the run did not retrieve' },
    ]);
    // The reporter wrote no executive summary: code took the key points' cited sentences, so the
    // unsupported one stands twice, and the claim check removes its citation in both places.
    expect(report.summary).toBe('Solar LCOE fell 89% from 2010 to 2022 [1]. Offshore wind turbines now last 80 years without repairs.');
    const unsupported = {
      n: 1,
      sourceId: report.references[0].sourceId,
      claim: 'Offshore wind turbines now last 80 years without repairs.',
      verdict: 'unsupported',
      reason: 'The evidence is about solar costs only.',
      action: 'removed',
    };
    expect(report.citationChecks).toEqual([unsupported, unsupported]);
    // Each citation counts where it stands (the summary's two as well); the checker is asked once per sentence and source.
    expect(report.grounding).toEqual({
      citations: 5,
      unresolved: 1,
      checked: 4,
      supported: 2,
      flagged: 0,
      removed: 2,
      unchecked: 0,
      linksRemoved: 2,
    });
    expect(report.markdown).toMatch(/The claim check removed 2 citations whose source did not support the sentence\./);

    // The checker saw the source's stored evidence, not the report's words about it.
    const checks = h.llm.requests.filter((r) => r.rule === 'verify');
    expect(checks).toHaveLength(1);
    expect(claimsIn(checks[0]!.body).map((c) => c.evidence)).toEqual([expect.stringContaining('89%'), expect.stringContaining('89%')]);

    // The status carries the same figures.
    const status = (await request(h.app).get(`/v1/research/${res.body.id}`).expect(200)).body;
    expect(status.report.grounding).toEqual(report.grounding);
    // The one-call report and its claim check were one activity (the report-with-claim-check patch),
    // and on the current code the gap reflection before them too (it found nothing missing).
    const history = await h.client.workflow.getHandle(res.body.id as string).fetchHistory();
    const types = history.events!.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
    expect(types.filter((t) => t === 'reflectThenReport')).toHaveLength(1);
    for (const t of ['writeReport', 'writeCheckedReport', 'verifyCitations', 'reflectOnGaps']) expect(types).not.toContain(t);
    recordHistories([[res.body.id as string, 'claims.json']]);
  });

  it('grounds the id forms a small model writes: S…/S…, ids in backticks, an id in a code block', async () => {
    // The ids of sources the run's researchers were shown (in their tool results), as a model that
    // copied them from its findings would write them.
    const idsSeen = () =>
      [
        ...new Set(
          h.llm.requests.flatMap((r) =>
            r.body.messages.filter((m) => m.role === 'tool').flatMap((m) => String(m.content).match(/\[(S[0-9a-f]{8})\]/g) ?? []),
          ),
        ),
      ].map((m) => m.slice(1, -1));
    const reporter = (): Reply => {
      const [a, b = a] = idsSeen();
      const markdown = [
        '## Key points',
        '',
        `- Solar LCOE fell 89% from 2010 to 2022 [${a}/${b}].`,
        `- Module prices fell too (\`${a}\`).`,
        '',
        '```',
        `source = "${a}"`,
        '```',
      ].join('\n');
      return { json: { title: 'Energy costs', markdown } };
    };
    h.llm.script(researchRules({ reporter }));
    const res = await runToReport(h);
    expect(idsSeen().length).toBeGreaterThan(0);
    const report = (await request(h.app).get(`/v1/research/${res.body.id}/report?format=json`).expect(200)).body;
    // The real-model test's check: no raw or misshapen source id anywhere in the report.
    expect(report.markdown).not.toMatch(/\bS[0-9a-f]{8}\b|\[\s*S[0-9a-f]{5,16}\s*\]/);
    expect(report.markdown).toMatch(/Solar LCOE fell 89% from 2010 to 2022 \[1\]/);
    expect(report.markdown).toMatch(/Module prices fell too \(?\[1\]\)?\./);
    expect(report.markdown).toContain('source = ""');
  });
});
