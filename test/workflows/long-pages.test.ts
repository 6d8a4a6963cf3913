// A long page whose key fact sits far past the first 6,000 tokens. With a large-window model
// (LLM_CONTEXT_TOKENS 128000) one extraction reads the whole page; with a small one (8192) the page
// is read in parts, each for the goal, and nothing of it is cut. Either way the fact reaches the
// page's evidence and the report cites the page. (Before: at most 6,000 tokens of a page, the rest
// reduced to the passages whose words match the goal, which this fact's do not.)
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import type { ResearchResult } from '../../src/shared/schemas';
import { tokenCounter } from '../../src/activities/llm/tokens';
import type { ChatRequest, Reply } from '../support/llm-server';
import { planJson, researchRules, userText } from '../support/research-script';
import { startHarness, type Harness } from '../support/harness';
import { databaseUrl, missingReason, temporalAddress } from '../support/services';

const ready = Boolean(temporalAddress() && databaseUrl());
const FACT = 'The Brennvik tidal array delivered 41.7 GWh to the grid in 2023.';
const PATH = '/articles/coastal-energy-almanac.html';

/** About 9,500 tokens of an almanac: dull sections on many coasts, the fact in the last few. */
function almanac(): string {
  const sections = Array.from({ length: 60 }, (_, s) => {
    const paragraphs = Array.from(
      { length: 3 },
      (_, p) =>
        `<p>Coast ${s}, note ${p}: harbour records list ferry timetables, lighthouse keepers, fishing quotas and the dates ` +
        `of storms that closed the piers, with the names of the boats that sheltered in the bay that winter.</p>`,
    ).join('');
    const fact = s === 54 ? `<p>${FACT}</p>` : '';
    return `<section><h2>Coast ${s}</h2>${paragraphs}${fact}</section>`;
  });
  return `<!doctype html><html><head><title>Coastal energy almanac</title></head><body><main><article><h1>Coastal energy almanac</h1>${sections.join('')}</article></main></body></html>`;
}

/** The extractor keeps the sentences of what it is shown that state an energy figure. */
const extractor = (req: ChatRequest): Reply => {
  const found = userText(req)
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => /\bGWh\b/.test(line));
  return {
    json: { relevant: found.length > 0, evidence: found.join(' '), summary: found.length ? 'Tidal output figures.' : 'Harbour records.' },
  };
};

describe.skipIf(!ready)(`long pages (${ready ? 'live' : missingReason()})`, () => {
  const harnesses: Harness[] = [];
  afterAll(async () => void (await Promise.all(harnesses.map((h) => h.close()))));

  async function researchWith(window: number) {
    const h = await startHarness({ env: { LLM_CONTEXT_TOKENS: String(window), RESEARCHER_PYTHON: 'false' } });
    harnesses.push(h);
    h.site.route(PATH, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(almanac());
    });
    h.search.setFallback(() => [{ url: `${h.site.url}${PATH}`, title: 'Coastal energy almanac', content: 'Records of the coast.' }]);
    h.llm.script(researchRules({ extractor }, planJson([{ id: 'a' }])));
    const res = await request(h.app)
      .post('/v1/research')
      .send({ question: 'How much power did tidal arrays deliver?', options: { autoAcceptPlan: true } })
      .expect(202);
    expect(((await h.client.workflow.getHandle(res.body.id).result()) as ResearchResult).outcome).toBe('report');
    const reads = h.llm.requests.filter((r) => r.rule === 'extractor' && userText(r.body).includes(PATH));
    const { rows } = await h.pool.query(`SELECT content FROM sources WHERE research_id = $1 AND url LIKE $2 AND provider = 'crawl'`, [
      res.body.id,
      `%${PATH}`,
    ]);
    const md = (await request(h.app).get(`/v1/research/${res.body.id}/report`).expect(200)).text;
    return { reads, evidence: rows.map((r) => r.content as string), references: md.split('\n## References\n')[1] ?? '' };
  }

  it('the fixture puts its fact past the first 8,000 tokens', () => {
    const text = almanac().replace(/<[^>]+>/g, ' ');
    const counter = tokenCounter('cl100k');
    expect(counter.count(text.slice(0, text.indexOf(FACT)))).toBeGreaterThan(8_000);
  });

  it('a large window reads the whole page in one extraction: the fact found and the page cited', async () => {
    const { reads, evidence, references } = await researchWith(128_000);
    expect(reads.length).toBeGreaterThan(0);
    for (const r of reads) {
      expect(userText(r.body)).toContain(FACT);
      expect(userText(r.body)).not.toMatch(/read in \d+ parts/);
    }
    expect(evidence.join('\n')).toContain(FACT);
    expect(references).toContain(PATH);
  });

  it('a small window reads it in parts, each for the goal, none of it cut: the fact found and the page cited', async () => {
    const { reads, evidence, references } = await researchWith(8_192);
    // One page read (by the background and by the step, from the page cache both) in parts.
    const parts = reads.map((r) => /this is part (\d+)\./.exec(userText(r.body))?.[1]);
    expect(parts.every(Boolean)).toBe(true);
    const firstRead = reads.slice(0, Number(/read in (\d+) parts/.exec(userText(reads[0]!.body))![1]));
    expect(firstRead.length).toBeGreaterThanOrEqual(2);
    // Every section of the page is in one of the parts: nothing was cut or left out.
    const shown = firstRead.map((r) => userText(r.body)).join('\n');
    for (let s = 0; s < 60; s++) expect(shown).toContain(`Coast ${s}, note 2:`);
    expect(shown).not.toContain('[…]');
    expect(firstRead.filter((r) => userText(r.body).includes(FACT))).toHaveLength(1);
    expect(evidence.join('\n')).toContain(FACT);
    expect(references).toContain(PATH);
  });
});
