import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { leanFetch } from '../../src/infra/http';

let server: http.Server;
let base: string;
const seen: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const path = new URL(req.url!, 'http://x').pathname;
      if (path === '/json') {
        res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': ['a=1', 'b=2'], 'x-request-id': 'r1' });
        res.end(JSON.stringify({ echo: body, ok: true }));
      } else if (path === '/empty') {
        res.writeHead(204).end();
      } else if (path === '/limited') {
        res.writeHead(429, { 'retry-after': '7', 'content-type': 'application/json' }).end('{"error":{"message":"slow down"}}');
      } else if (path === '/moved') {
        res.writeHead(302, { location: '/json' }).end();
      } else if (path.startsWith('/slow')) {
        setTimeout(() => res.writeHead(200).end('late'), 2_000);
      } else if (path === '/v1/chat/completions') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'c1',
            object: 'chat.completion',
            created: 0,
            model: 'm',
            choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'hi' } }],
          }),
        );
      } else res.writeHead(404).end('no such page');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('leanFetch', () => {
  it('sends method, headers and body, and answers as fetch does', async () => {
    const res = await leanFetch(new URL('/json?q=1', base), {
      method: 'post',
      headers: { 'content-type': 'application/json', authorization: 'Bearer k' },
      body: '{"a":1}',
    });
    expect(res.status).toBe(200);
    expect(res.ok).toBe(true);
    expect(res.headers.get('x-request-id')).toBe('r1');
    expect(res.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await res.json()).toEqual({ echo: '{"a":1}', ok: true });
    expect(seen.at(-1)).toMatchObject({ method: 'POST', url: '/json?q=1', body: '{"a":1}' });
    expect(seen.at(-1)!.headers).toMatchObject({ 'content-type': 'application/json', authorization: 'Bearer k' });
  });

  it('gives a text body the content type fetch gives it', async () => {
    await leanFetch(`${base}/json`, { method: 'POST', body: 'plain' });
    expect(seen.at(-1)!.headers['content-type']).toBe('text/plain;charset=UTF-8');
  });

  it('answers statuses without a body, errors with theirs, and follows redirects', async () => {
    const empty = await leanFetch(`${base}/empty`);
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
    const limited = await leanFetch(`${base}/limited`);
    expect([limited.status, limited.ok, limited.headers.get('retry-after')]).toEqual([429, false, '7']);
    expect(await limited.text()).toContain('slow down');
    const moved = await leanFetch(`${base}/moved`);
    expect(moved.status).toBe(200);
    expect(await moved.json()).toMatchObject({ ok: true });
  });

  it('rejects with the signal’s reason when aborted, before or during the call', async () => {
    const before = new AbortController();
    before.abort(new Error('gave up'));
    await expect(leanFetch(`${base}/json`, { signal: before.signal })).rejects.toThrow('gave up');
    const t0 = Date.now();
    const err = await leanFetch(`${base}/slow`, { signal: AbortSignal.timeout(100) }).catch((e: unknown) => e);
    expect((err as DOMException).name).toBe('TimeoutError');
    expect(Date.now() - t0).toBeLessThan(1_500);
  });

  it('rejects a network failure as fetch does: TypeError with the cause', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const err = (await leanFetch(`http://127.0.0.1:${port}/`).catch((e: unknown) => e)) as TypeError & { cause: { code?: string } };
    expect(err).toBeInstanceOf(TypeError);
    expect(err.message).toBe('fetch failed');
    expect(err.cause.code).toBe('ECONNREFUSED');
  });

  it('hands what it does not take to the built-in fetch', async () => {
    const res = await leanFetch(`${base}/json`, { method: 'POST', body: new URLSearchParams({ a: 'b' }) });
    expect(await res.json()).toMatchObject({ echo: 'a=b' });
    expect(seen.at(-1)!.headers['content-type']).toContain('application/x-www-form-urlencoded');
  });

  it('serves the OpenAI client: answers, API errors, timeouts and refused connections keep their types', async () => {
    const client = (baseURL: string, timeout = 5_000) => new OpenAI({ apiKey: 'k', baseURL, maxRetries: 0, timeout, fetch: leanFetch });
    const ok = await client(`${base}/v1`).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'q' }] });
    expect(ok.choices[0]!.message.content).toBe('hi');
    const apiErr = await client(`${base}/nowhere`)
      .chat.completions.create({ model: 'm', messages: [] })
      .catch((e: unknown) => e);
    expect(apiErr).toBeInstanceOf(APIError);
    expect((apiErr as APIError).status).toBe(404);
    const slow = new OpenAI({ apiKey: 'k', baseURL: `${base}/slow`, maxRetries: 0, timeout: 100, fetch: leanFetch });
    await expect(slow.models.list()).rejects.toBeInstanceOf(APIConnectionTimeoutError);
    const refused = await client('http://127.0.0.1:9/v1')
      .models.list()
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(APIConnectionError);
    expect(refused).not.toBeInstanceOf(APIConnectionTimeoutError);
  });
});
