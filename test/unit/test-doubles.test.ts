// The doubles at the internet's edge must speak the real protocols, or the tests prove nothing.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureSite } from '../support/fixture-site';
import { bySchema, hasTools, ScriptedLlmServer } from '../support/llm-server';
import { FakeSearxng } from '../support/search-server';

describe('scripted LLM server', () => {
  const llm = new ScriptedLlmServer();
  let client: OpenAI;
  beforeAll(async () => {
    await llm.start();
    client = new OpenAI({ baseURL: llm.url, apiKey: 'sk-x', maxRetries: 0, timeout: 2_000 });
  });
  afterAll(() => llm.close());

  it('answers structured output, tool calls and errors from the script, logging each request', async () => {
    llm.script([
      { match: bySchema('S'), reply: { json: { ok: true }, usage: { prompt: 7, completion: 3 } } },
      { match: hasTools, reply: { toolCalls: [{ name: 'web_search', arguments: { queries: ['a'] } }] } },
      { reply: (_req, n) => (n === 0 ? { status: 429, headers: { 'retry-after': '2' } } : { content: 'plain' }) },
    ]);
    const s = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      response_format: { type: 'json_schema', json_schema: { name: 'S', schema: { type: 'object' } } },
    });
    expect(JSON.parse(s.choices[0]!.message.content!)).toEqual({ ok: true });
    expect(s.usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 });
    const t = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      tools: [{ type: 'function', function: { name: 'web_search', parameters: { type: 'object' } } }],
    });
    expect(t.choices[0]!.finish_reason).toBe('tool_calls');
    expect(
      JSON.parse(t.choices[0]!.message.tool_calls![0]!.type === 'function' ? t.choices[0]!.message.tool_calls![0]!.function.arguments : ''),
    ).toEqual({ queries: ['a'] });
    const err = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as InstanceType<typeof OpenAI.RateLimitError>).headers?.get('retry-after')).toBe('2');
    expect(llm.requests.map((r) => r.status)).toEqual([200, 200, 429]);
  });

  it('can hang, send a broken body, or be slow', async () => {
    llm.script([
      { times: 1, reply: { malformedBody: true } },
      { times: 1, reply: { hang: true } },
      { reply: { content: 'late', delayMs: 300 } },
    ]);
    await expect(client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] })).rejects.toThrow();
    await expect(
      client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] }, { timeout: 300 }),
    ).rejects.toThrow(/timed out/i);
    const t0 = Date.now();
    await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    await new Promise((r) => setTimeout(r, 50));
    expect(llm.requests[1]!.aborted).toBe(true);
  });
});

describe('SearXNG-shaped search server and fixture site', () => {
  const site = new FixtureSite();
  let searx: FakeSearxng;
  beforeAll(async () => {
    await site.start();
    searx = await new FakeSearxng({
      'solar cost': [{ url: `${site.url}/articles/solar-costs.html`, title: 'Solar costs', content: 'fell 89%' }],
    }).start();
  });
  afterAll(async () => {
    await searx.close();
    await site.close();
  });

  it('answers /search?format=json in SearXNG shape', async () => {
    const body = (await (await fetch(`${searx.url}/search?q=solar%20cost&format=json`)).json()) as {
      results: { url: string; score: number; engine: string }[];
      number_of_results: number;
    };
    expect(body.number_of_results).toBe(1);
    expect(body.results[0]).toMatchObject({ url: `${site.url}/articles/solar-costs.html`, engine: 'fixture', score: 1 });
    expect((await fetch(`${searx.url}/search?q=x`)).status).toBe(403);
    expect(searx.queries).toEqual(['solar cost']);
  });

  it('serves fixture pages with content types, robots.txt and custom routes', async () => {
    const page = await fetch(`${site.url}/articles/solar-costs.html`);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(await page.text()).toMatch(/0\.049 US dollars per kilowatt-hour/);
    expect(await (await fetch(`${site.url}/robots.txt`)).text()).toMatch(/Disallow: \/private\//);
    expect((await fetch(`${site.url}/../etc/passwd`)).status).toBe(404);
    site.route('/redirect', (_req, res) => void res.writeHead(302, { location: '/index.html' }).end());
    const r = await fetch(`${site.url}/redirect`, { redirect: 'manual' });
    expect(r.status).toBe(302);
  });
});
