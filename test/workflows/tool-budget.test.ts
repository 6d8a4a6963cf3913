// A tool result's budget shared across its pages and hits (src/activities/role-kit/tool-budget.ts),
// on the dev server: five long pages all reach the model, each shortened to its share, and a hit
// left out of a search result is not read, so it cannot be cited.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StepOutput } from '../../src/shared/schemas';
import type { ChatRequest, Reply } from '../support/llm-server';
import { researchRules, userText, type RoleOverrides } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';
import { runResearcherStep } from '../support/researcher-step';

const ready = Boolean(temporalAddress() && databaseUrl());

const step = {
  id: 'storage',
  title: 'Grid storage costs',
  description: 'Find what grid batteries cost',
  type: 'research' as const,
  needSearch: true,
  dependsOn: [],
};

/** Each page's extract: its own marker sentence first, then about 3,000 characters of figures. */
function longEvidence(page: number): string {
  const filler = Array.from({ length: 60 }, (_, i) => `Site ${page}.${i} stored ${100 + i} MWh at ${200 + page} USD/kWh.`).join(' ');
  return `Marker of page ${page}: batteries cost ${300 - page * 10} USD/kWh in 2023. ${filler}`;
}

describe.skipIf(!ready)(`tool-result budget (${ready ? 'live' : missingReason()})`, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ env: { LLM_TIMEOUT_MS: '1500', RESEARCHER_PYTHON: 'false', RESEARCHER_TOOL_RESULT_TOKENS: '1200' } });
    for (let n = 1; n <= 5; n++) {
      h.site.route(`/long/page-${n}.html`, (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(`<html><head><title>Storage page ${n}</title></head><body><article><h1>Storage page ${n}</h1>
          <p>${'Battery storage figures for the grid. '.repeat(30)}</p></article></body></html>`);
      });
    }
  });
  afterAll(async () => h?.close());

  const requestsFor = (rule: string) => h.llm.requests.filter((r) => r.rule === rule);

  async function research(overrides: RoleOverrides): Promise<{ id: string; out: StepOutput }> {
    h.llm.script(researchRules(overrides));
    return runResearcherStep(h, { question: 'What does grid storage cost?', step, maxToolRounds: 4 }, 'budget');
  }

  it('shows every one of five long pages, each shortened to its share, and records the cut', async () => {
    const urls = [1, 2, 3, 4, 5].map((n) => `${h.site.url}/long/page-${n}.html`);
    const react = (req: ChatRequest): Reply =>
      req.messages.some((m) => m.role === 'tool')
        ? { content: 'done' }
        : { toolCalls: [{ name: 'crawl', arguments: { urls, goal: 'battery prices' } }] };
    const extractor = (req: ChatRequest): Reply => {
      const page = Number(/Storage page (\d)/.exec(userText(req))?.[1] ?? 0);
      return { json: { relevant: true, evidence: longEvidence(page), summary: `Page ${page} on storage prices.` } };
    };
    const { id, out } = await research({ react, extractor });
    // Together the extracts are far over what one result used to show (6,000 characters).
    expect([1, 2, 3, 4, 5].map(longEvidence).join('').length).toBeGreaterThan(10_000);
    const toolMsg = String(requestsFor('react')[1]!.body.messages.find((m) => m.role === 'tool')!.content);
    for (let n = 1; n <= 5; n++) expect(toolMsg).toContain(`Marker of page ${n}:`);
    expect(toolMsg.match(/\[… shortened to fit this result's budget\]/g)).toHaveLength(5);
    expect(toolMsg).toMatch(/budget of 1200 tokens: 5 shortened/);
    const ids = [...new Set([...toolMsg.matchAll(/\[(S[0-9a-f]{8})\] Storage page/g)].map((m) => m[1]))];
    expect(ids).toHaveLength(5);
    const events = await h.pool.query("SELECT data FROM run_events WHERE research_id = $1 AND type = 'crawl'", [id]);
    expect(events.rows[0].data).toMatchObject({ sources: 5, budget: { tokens: 1200, shortened: 5, leftOut: 0 } });
    expect(out.key).toBe('step/storage/1');
  });

  it('leaves the lowest-ranked hits out when a search holds too many, and a hit left out cannot be cited', async () => {
    const hits = (q: string) =>
      Array.from({ length: 5 }, (_, i) => ({
        url: `https://example.org/${encodeURIComponent(q)}/${i + 1}`,
        title: `${q} result ${i + 1}`,
        content: `${q}: figure ${i + 1}. ${'More about grid storage prices and projects. '.repeat(8)}`,
      }));
    h.search.setFallback(hits);
    const queries = ['storage alpha', 'storage beta', 'storage gamma', 'storage delta', 'storage epsilon'];
    const react = (req: ChatRequest): Reply =>
      req.messages.some((m) => m.role === 'tool') ? { content: 'done' } : { toolCalls: [{ name: 'web_search', arguments: { queries } }] };
    // The findings cite the best hit of the first query, and a fifth-ranked hit the model never saw.
    let shown: string[] = [];
    let unseen = '';
    const researcher = (req: ChatRequest): Reply => {
      const text = userText(req);
      shown = [...text.matchAll(/\[(S[0-9a-f]{8})\] storage/g)].map((m) => m[1]!);
      return { json: { text: `Prices fell [${shown[0]}]. A hidden page says more [${unseen}].`, summary: 'Storage prices.' } };
    };
    const { sourceIdFor } = await import('../../src/activities/search/sources');
    unseen = sourceIdFor('https://example.org/storage%20epsilon/5');
    const { id, out } = await research({ react, researcher });
    const toolMsg = String(
      requestsFor('react')
        .at(-1)!
        .body.messages.find((m) => m.role === 'tool')!.content,
    );
    // Every query keeps its best hits; the lowest-ranked go, and the result says which.
    for (const q of queries) expect(toolMsg).toContain(`${q} result 1`);
    expect(toolMsg).not.toMatch(/\] storage epsilon result 5 —/);
    expect(toolMsg).toMatch(/left out and not shown \(.*storage epsilon result 5/);
    expect(shown.length).toBeGreaterThan(5);
    expect(shown.length).toBeLessThan(25);
    expect(out.sourceIds).toContain(shown[0]);
    expect(out.sourceIds).not.toContain(unseen);
    const doc = await h.pool.query('SELECT meta FROM documents WHERE research_id = $1 AND key = $2', [id, out.key]);
    expect(doc.rows[0].meta.droppedSourceIds).toContain(unseen);
    expect(doc.rows[0].meta.retrievedSourceIds).not.toContain(unseen);
    const events = await h.pool.query("SELECT data FROM run_events WHERE research_id = $1 AND type = 'search'", [id]);
    expect(events.rows[0].data.budget.leftOut).toBeGreaterThan(0);
    expect(events.rows[0].data.sources).toBe(shown.length);
  });
});
