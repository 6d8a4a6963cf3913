// Findings cite sources by id whatever form the writer used; arguments small models get nearly
// right are put in the tool's shape; tool calls written as text are found, answers are left alone.
import { describe, expect, it } from 'vitest';
import { groundFindings } from '../../src/shared/citations';
import { leadSentences, sourcesListed } from '../../src/activities/role-kit/cited';
import type { StoredSource } from '../../src/activities/store';
import { looseArgs, parseToolCalls } from '../../src/activities/role-kit/researcher-tools';
import { toolCallsInText } from '../../src/activities/llm/text-tools';
import {
  fitRequest,
  messageTokens,
  nextScale,
  promptTokensFromError,
  publishedWindow,
  windowFromError,
} from '../../src/activities/llm/window';
import { pageBudgetTokens } from '../../src/activities/crawl';

const sources = [
  { sourceId: 'S1a2b3c4d', url: 'http://site.test/articles/solar-costs.html' },
  { sourceId: 'S5e6f7a8b', url: 'http://site.test/articles/battery-storage.html' },
];

describe('findings grounding', () => {
  it('turns every form of a known source into [S…] and drops made-up ones', () => {
    const g = groundFindings(
      'Solar fell 89% (S1a2b3c4d). Packs cost 139 USD/kWh S5e6f7a8b. Wind too [S0f93beef]. ' +
        'See [the article](http://site.test/articles/solar-costs.html) and https://fabricated.example/x. Old claim [1].',
      sources,
    );
    expect(g.text).toContain('Solar fell 89% [S1a2b3c4d].');
    expect(g.text).toContain('139 USD/kWh [S5e6f7a8b]');
    expect(g.text).not.toMatch(/S0f93beef|fabricated|\[1\]/);
    expect(g.text).toContain('the article [S1a2b3c4d]');
    expect(g.cited.sort()).toEqual(['S1a2b3c4d', 'S5e6f7a8b']);
    expect(g.dropped).toEqual(['S0f93beef']);
    expect(g.removedLinks.map((l) => l.url)).toEqual(['https://fabricated.example/x']);
  });
});

describe('evidence listed by code', () => {
  it('lists whole sentences, never a cut word or a tag', () => {
    const page =
      '<p>The levelised cost of solar power fell by about 89% between 2010 and 2022.</p> Module prices collapsed. ' +
      'Cheaper balance-of-system hardware accounts for the rest of the decline across the decade.';
    expect(leadSentences(page, 120)).toBe(
      'The levelised cost of solar power fell by about 89% between 2010 and 2022. Module prices collapsed.',
    );
    expect(leadSentences(page, 400)).toMatch(
      /Module prices collapsed\. Cheaper balance-of-system hardware accounts for the rest of the decline across the decade\.$/,
    );
    // One sentence longer than the room: cut at a word, and marked.
    expect(leadSentences(page, 40)).toBe('The levelised cost of solar power fell…');
    const listed = sourcesListed([
      { sourceId: 'S1a2b3c4d', url: 'http://site.test/a', title: 'Solar [costs]', content: page, provider: 'crawl' } as StoredSource,
    ]);
    expect(listed.text).toBe(`- **Solar costs**: ${leadSentences(page, 400)} [S1a2b3c4d]`);
    expect(listed.text).not.toMatch(/<\/?p>/);
  });

  it("lists the figures a read page's reading quoted from it, which its opening does not reach", () => {
    const content = [
      'The Velmar alloy datasheet gives the mechanical properties of the alloy, including its tensile strength and density.',
      '',
      'Figures the page states (quoted from it):',
      '- Tensile strength: 610 MPa.',
      '- Density: 2.71 g/cm3.',
      '- Elongation at break: 7%',
    ].join('\n');
    const listed = sourcesListed([
      { sourceId: 'S1a2b3c4d', url: 'http://site.test/d', title: 'Velmar alloy datasheet', content, provider: 'crawl' } as StoredSource,
    ]);
    expect(listed.text).toBe(
      '- **Velmar alloy datasheet**: The Velmar alloy datasheet gives the mechanical properties of the alloy, including its tensile strength and density. The page states: Tensile strength: 610 MPa; Density: 2.71 g/cm3; Elongation at break: 7%. [S1a2b3c4d]',
    );
  });
});

describe('tool calls from small models', () => {
  it('puts nearly right arguments in shape', () => {
    expect(looseArgs('web_search', { query: 'solar LCOE' })).toEqual({ queries: ['solar LCOE'] });
    expect(looseArgs('crawl', { url: 'http://a.test/x' })).toEqual({ urls: ['http://a.test/x'], goal: 'facts that answer the step' });
    expect(looseArgs('think', { thought: 'Wind is missing.' })).toEqual({ reflection: 'Wind is missing.' });
    const parsed = parseToolCalls([
      { id: 'c1', type: 'function', function: { name: 'web_search', arguments: '{"query":"x","extra":1}' } },
      { id: 'c2', type: 'function', function: { name: 'crawl', arguments: '{"goal":"prices"}' } },
    ]);
    expect(parsed.calls).toEqual([{ id: 'c1', name: 'web_search', args: { queries: ['x'] } }]);
    expect(parsed.problems[0]).toMatch(/arguments of crawl are invalid/);
  });

  it('finds tool calls written as text, in the shapes models use, and leaves answers alone', () => {
    const offered = new Set(['web_search', 'crawl']);
    const names = (t: string) =>
      toolCallsInText(t, offered)?.map((c) => (c.type === 'function' ? [c.function.name, JSON.parse(c.function.arguments)] : []));
    expect(names('{"name": "web_search", "arguments": {"query": "solar"}}')).toEqual([['web_search', { query: 'solar' }]]);
    expect(names('```json\n{"tool_calls":[{"name":"crawl","arguments":"{\\"urls\\":[\\"http://a.test\\"]}"}]}\n```')).toEqual([
      ['crawl', { urls: ['http://a.test'] }],
    ]);
    expect(names('<tool_call>\n{"name": "web_search", "arguments": {"queries": ["a"]}}\n</tool_call>')).toEqual([
      ['web_search', { queries: ['a'] }],
    ]);
    expect(names('{"function": {"name": "web_search", "arguments": {}}}\n{"name": "crawl", "arguments": {}}')).toHaveLength(2);
    expect(names('Solar fell 89% [S1a2b3c4d].')).toBeUndefined();
    expect(names('{"summary": "not a call"}')).toBeUndefined();
    // A call of a tool that is not offered is still a call (asked for again), never findings.
    expect(names('{"name": "Solar costs", "arguments": ["fell 89%"]}')).toEqual([['Solar costs', ['fell 89%']]]);
    expect(names('{"name": "John Smith"}')).toBeUndefined();
  });
});

describe('context window', () => {
  it("sizes a page read to the extractor's window, and knows the published windows of common hosted models", () => {
    expect(pageBudgetTokens(undefined, 1_024)).toBe(6_000);
    expect(pageBudgetTokens(8_192, 1_024)).toBe(5_731);
    expect(pageBudgetTokens(128_000, 1_024)).toBe(96_000);
    expect(pageBudgetTokens(2_048, 1_024)).toBe(500);
    expect(publishedWindow('gpt-4o-mini')).toBe(128_000);
    expect(publishedWindow('openai/gpt-4.1-mini')).toBe(1_047_576);
    expect(publishedWindow('o1-mini')).toBe(128_000);
    expect(publishedWindow('o3')).toBe(200_000);
    expect(publishedWindow('qwen2.5')).toBeUndefined();
  });

  it("reads the window from servers' overflow errors", () => {
    expect(windowFromError('request (9030 tokens) exceeds the available context size (8192 tokens), try increasing it')).toBe(8192);
    expect(windowFromError("This model's maximum context length is 16385 tokens. However, you requested 20000")).toBe(16385);
    expect(windowFromError('something else went wrong')).toBeUndefined();
    expect(promptTokensFromError('request (9030 tokens) exceeds the available context size (8192 tokens)')).toBe(9030);
  });

  it('corrects the estimate by what the server counted, within bounds', () => {
    expect(nextScale(1, 1000, 2000)).toBe(2);
    expect(nextScale(2, 1000, 1000)).toBe(1.5);
    expect(nextScale(1, 1000, 9000)).toBe(3);
    expect(nextScale(1, 1000, 500)).toBe(1);
    const text = [{ role: 'user' as const, content: 'x'.repeat(3200) }];
    expect(messageTokens(text, '', 2)).toBe(2 * messageTokens(text));
    // A scaled estimate trims harder: the prompt and the output fit as the server counts.
    const scaled = fitRequest({ messages: [{ role: 'user', content: 'x'.repeat(40_000) }], maxTokens: 1024, window: 4096, scale: 2 });
    expect(scaled.trimmed).toBe(true);
    expect(scaled.promptTokens + scaled.maxTokens).toBeLessThanOrEqual(4096);
  });

  it('lowers the output limit to what the window leaves, and trims the prompt to leave the output a share', () => {
    const small = fitRequest({ messages: [{ role: 'user', content: 'hi' }], maxTokens: 4096, window: 2048 });
    expect(small.maxTokens).toBeLessThanOrEqual(2048 - small.promptTokens);
    expect(small.trimmed).toBe(false);
    const big = fitRequest({ messages: [{ role: 'user', content: 'x'.repeat(40_000) }], maxTokens: 1024, window: 4096 });
    expect(big.trimmed).toBe(true);
    expect(big.promptTokens + big.maxTokens).toBeLessThanOrEqual(4096);
    expect(big.maxTokens).toBe(1024);
    const unknown = fitRequest({ messages: [{ role: 'user', content: 'x'.repeat(40_000) }], maxTokens: 1024, window: undefined });
    expect(unknown).toMatchObject({ trimmed: false, maxTokens: 1024 });
  });
});
